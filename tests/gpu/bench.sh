#!/bin/bash
# tests/gpu/bench.sh [BUILD] — the sm_90a GEMM path and the NVIDIA benchmarks on
# the H200 device machine (docs/performance.md records the results).
#   1. bench_gemm_cuda: tileasm compile time, JIT time, GEMM correctness (ragged
#      shapes vs a CPU reference, full sizes vs cuBLAS), GEMM f16/bf16 at 4096^3
#      and 8192^3 next to cuBLAS in the same process, copy bandwidth;
#      (and gemm_bias_relu.tile, relu(A B + bias), checked by CPU spot checks);
#   2. `tileasm run --backend=cuda --target=sm_90a` of the GEMM examples (the
#      sm90 entry must run and PASS against the interpreter; K % 8 != 0 falls
#      back to the generic entry);
#   3. softmax / rmsnorm / layernorm / attention (mha_fwd) through `tileasm run --bench`,
#      and torch's softmax, rms_norm, layer_norm, clone and scaled_dot_product_attention
#      at the same shapes.
# BUILD holds statically linked tools/tileasm and tools/bench/bench_gemm_cuda
# (meson setup build-gpu -Dprefer_static=true -Dbuildtype=release).
B=${1:-build-gpu}
T=$B/tools/tileasm
export CUDA_CACHE_DISABLE=1   # measure the JIT, not the compute cache
fails=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
CUBLAS=${TILEASM_CUBLAS:-$(find /usr/local/cuda*/ /opt /usr/lib -name 'libcublas.so.1[0-9]*' 2>/dev/null | grep -v Lt | head -1)}
echo "cuBLAS: $CUBLAS"
export TILEASM_CUBLAS=$CUBLAS LD_LIBRARY_PATH=$(dirname "$CUBLAS"):$LD_LIBRARY_PATH

echo "== bench_gemm_cuda"
timeout 400 "$B/tools/bench/bench_gemm_cuda" --srcdir . || fails=$((fails + 1))

echo "== tileasm run (sm_90a): GEMM examples against the interpreter"
run() { # example, args..., then expect "sm90" or "generic"
  local ex=$1 want=$2; shift 2
  local args=(); for a in "$@"; do args+=(--arg "$a"); done
  out=$(timeout 300 "$T" run "examples/$ex.tile" --backend=cuda --target=sm_90a "${args[@]}" 2>&1)
  rc=$?
  path=generic; echo "$out" | grep -q '^  sm90: entry' && path=sm90
  res=FAIL; [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$' && [ "$path" = "$want" ] && res=PASS
  [ $res = PASS ] || { fails=$((fails + 1)); echo "$out" | tail -20; }
  printf '%-14s %-24s path %-8s %s\n' "$ex" "$*" "$path" "$res"
}
run gemm sm90 M=256 N=512 K=128
run gemm sm90 M=200 N=136 K=72
run gemm sm90 M=1 N=8 K=8
run gemm generic M=200 N=130 K=70
run gemm_bf16_tn sm90 M=256 N=384 K=96
run gemm_bf16_tn sm90 M=131 N=78 K=48
run gemm_bf16_tn sm90 M=131 N=77 K=48
run gemm_bf16_tn generic M=131 N=78 K=45
run gemm_bias_relu sm90 M=200 N=136 K=72
run gemm_bias_relu sm90 M=131 N=264 K=200
run gemm_bias_relu generic M=64 N=130 K=70
run gemm_bias_gelu sm90 M=131 N=264 K=200
run gemm_batched sm90 Bt=3 M=200 N=136 K=72
run gemm_batched generic Bt=2 M=64 N=130 K=70
run gemm_splitk sm90 M=200 N=136 K=1000 S=4
run gemm_splitk generic M=64 N=130 K=70 S=3

echo "== memory-bound and attention kernels (generic path), tileasm run --bench"
bench() { # example, args...
  local ex=$1; shift
  local args=(); for a in "$@"; do case $a in D:*) args+=(-D "${a#D:}") ;; *) args+=(--arg "$a") ;; esac; done
  out=$(timeout 300 "$T" run "examples/$ex.tile" --backend=cuda --target=sm_90a --bench "${args[@]}" 2>&1)
  rc=$?
  ms=$(echo "$out" | sed -n 's/.*bench: \([0-9.]*\) ms.*/\1/p')
  res=FAIL; [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$' && res=PASS
  [ $res = PASS ] || { fails=$((fails + 1)); echo "$out" | tail -8; }
  echo "BENCH $ex $* : ${ms:-?} ms per launch, check $res"
}
bench softmax M=8192 N=2048
bench rmsnorm M=8192 N=2048 eps=0.000001
bench layernorm M=8192 N=2048 eps=0.000001
bench mha_fwd B=1 H=1 S=1024 causal=0 scale=0.125
bench mha_fwd B=1 H=1 S=4096 causal=0 scale=0.125
bench mha_fwd B=1 H=4 S=2048 causal=0 scale=0.125
bench mha_fwd B=1 H=4 S=2048 causal=1 scale=0.125
bench mha_fwd D:D=128 B=1 H=4 S=1024 causal=0 scale=0.088
python3 - <<'PY' || true
import torch, torch.nn.functional as F
def t(f, n=50):
    for _ in range(5): f()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(n):
        s.record(); f(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2]
x = torch.randn(8192, 2048, device='cuda', dtype=torch.float16)
ms = t(lambda: torch.softmax(x, -1)); print(f"TORCH softmax 8192x2048 f16: {ms:.4f} ms, {2*x.numel()*2/ms/1e6:.0f} GB/s")
w, b = torch.randn(2048, device='cuda', dtype=torch.float16), torch.randn(2048, device='cuda', dtype=torch.float16)
ms = t(lambda: F.rms_norm(x, (2048,), w, 1e-6)); print(f"TORCH rms_norm 8192x2048 f16: {ms:.4f} ms, {2*x.numel()*2/ms/1e6:.0f} GB/s")
ms = t(lambda: F.layer_norm(x, (2048,), w, b, 1e-6)); print(f"TORCH layer_norm 8192x2048 f16: {ms:.4f} ms, {2*x.numel()*2/ms/1e6:.0f} GB/s")
ms = t(lambda: x.clone()); print(f"TORCH clone 8192x2048 f16: {ms:.4f} ms, {2*x.numel()*2/ms/1e6:.0f} GB/s")
for S in (4096, 8192):
    a, b = (torch.randn(S, S, device='cuda', dtype=torch.float16) for _ in range(2))
    ms = t(lambda: a @ b); print(f"TORCH matmul f16 {S}^3 a @ b: {ms:.4f} ms, {2*S**3/ms/1e9:.1f} TFLOP/s")
    a, b = (torch.randn(S, S, device='cuda', dtype=torch.bfloat16) for _ in range(2))
    ms = t(lambda: a @ b.T); print(f"TORCH matmul bf16 {S}^3 a @ b.T: {ms:.4f} ms, {2*S**3/ms/1e9:.1f} TFLOP/s")
a, b = (torch.randn(4096, 4096, device='cuda', dtype=torch.float16) for _ in range(2))
bias = torch.randn(4096, device='cuda', dtype=torch.float16)
ms = t(lambda: torch.relu(torch.addmm(bias, a, b))); print(f"TORCH relu(addmm) f16 4096^3: {ms:.4f} ms, {2*4096**3/ms/1e9:.1f} TFLOP/s")
for S in (1024, 4096):
    q, k, v = (torch.randn(1, 1, S, 64, device='cuda', dtype=torch.float16) for _ in range(3))
    ms = t(lambda: F.scaled_dot_product_attention(q, k, v))
    print(f"TORCH sdpa S={S} d=64 1 head f16: {ms:.4f} ms, {4*S*S*64/ms/1e9:.1f} TFLOP/s")
for H, S, D, causal in ((4, 2048, 64, False), (4, 2048, 64, True), (4, 1024, 128, False)):
    q, k, v = (torch.randn(1, H, S, D, device='cuda', dtype=torch.float16) for _ in range(3))
    ms = t(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    print(f"TORCH sdpa B=1 H={H} S={S} D={D} causal={int(causal)} f16: {ms:.4f} ms")
PY
echo "bench.sh: $fails failure(s)"
[ $fails -eq 0 ]
