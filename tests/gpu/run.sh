#!/bin/bash
# tests/gpu/run.sh [TILEASM] — every example through `tileasm run --backend=cuda`
# (GPU result checked against the interpreter) at several shapes, ragged ones
# included, for the sm_80 and sm_90a code paths.  Prints one table row per
# run and exits non-zero if any run fails.  Full logs go to $LOG (default
# gpu-run.log).  Meant for the H200 device machine; needs libcuda.so.1.
# BACKEND=interp checks the script itself on a machine without a GPU.
T=${1:-build-ptx/tools/tileasm}
LOG=${LOG:-gpu-run.log}
EX=${EXAMPLES:-examples}
: >"$LOG"
# file | kernel | shape arguments (--arg NAME=V, space separated)
F=$(dirname "$0")/features.tile
G=$(dirname "$0")/gemm_acc.tile
R=$(dirname "$0")/../emu/regress
L=$(dirname "$0")/../lang
W=$(dirname "$0")/gemm_wg.tile
# examples/mha_fwd.tile with 128-row query blocks (threads(256): two warpgroups of wgmma on sm_90a)
V=$(mktemp -d)
trap 'rm -rf "$V"' EXIT
for v in 128x64 128x128; do
  python3 "$(dirname "$0")/mha_variant.py" --print ${v%x*} ${v#*x} >"$V/mha_$v.tile" || exit 1
done
CASES=(
  "$EX/vector_add.tile|vector_add|N=1024"
  "$EX/vector_add.tile|vector_add|N=1000"
  "$EX/vector_add.tile|vector_add|N=100003"
  "$EX/reduce_sum.tile|reduce_sum|M=8 N=256"
  "$EX/reduce_sum.tile|reduce_sum|M=13 N=1000"
  "$EX/reduce_sum.tile|reduce_sum|M=100 N=777"
  "$EX/softmax.tile|softmax|M=4 N=256"
  "$EX/softmax.tile|softmax|M=7 N=300"
  "$EX/softmax.tile|softmax|M=33 N=1000"
  "$EX/rmsnorm.tile|rmsnorm|M=4 N=256"
  "$EX/rmsnorm.tile|rmsnorm|M=9 N=600"
  "$EX/layernorm.tile|layernorm|M=4 N=256"
  "$EX/layernorm.tile|layernorm|M=10 N=513"
  "$EX/softmax_row.tile|softmax_row|M=3 N=8192"
  "$EX/softmax_row.tile|softmax_row|M=7 N=300"
  "$EX/softmax_row.tile|softmax_row|M=2 N=9001"
  "$EX/rmsnorm_row.tile|rmsnorm_row|M=5 N=2048"
  "$EX/rmsnorm_row.tile|rmsnorm_row|M=9 N=601"
  "$EX/rmsnorm_row.tile|rmsnorm_row|M=2 N=16390"
  "$EX/layernorm_row.tile|layernorm_row|M=4 N=8192"
  "$EX/layernorm_row.tile|layernorm_row|M=10 N=513"
  "$EX/layernorm_row.tile|layernorm_row|M=3 N=12000"
  "$EX/gemm.tile|gemm|M=128 N=128 K=32"
  "$EX/gemm.tile|gemm|M=256 N=256 K=128"
  "$EX/gemm.tile|gemm|M=200 N=130 K=70"
  "$EX/gemm.tile|gemm|M=1 N=7 K=5"
  "$EX/gemm.tile|gemm|M=200 N=136 K=72"
  "$EX/gemm.tile|gemm|M=129 N=264 K=1000"
  "$EX/gemm.tile|gemm|M=333 N=1000 K=264"
  "$EX/gemm_bf16_tn.tile|gemm_bf16_tn|M=128 N=128 K=32"
  "$EX/gemm_bf16_tn.tile|gemm_bf16_tn|M=256 N=384 K=96"
  "$EX/gemm_bf16_tn.tile|gemm_bf16_tn|M=131 N=77 K=45"
  "$EX/gemm_bf16_tn.tile|gemm_bf16_tn|M=131 N=77 K=48"
  "$EX/gemm_bf16_tn.tile|gemm_bf16_tn|M=257 N=392 K=136"
  "$EX/gemm_bf16_tn.tile|gemm_bf16_tn|M=131 N=78 K=48"
  "$EX/gemm_bf16_tn.tile|gemm_bf16_tn|M=333 N=520 K=264"
  "$EX/gemm_bias_relu.tile|gemm_bias_relu|M=128 N=128 K=64"
  "$EX/gemm_bias_relu.tile|gemm_bias_relu|M=200 N=136 K=72"
  "$EX/gemm_bias_relu.tile|gemm_bias_relu|M=131 N=264 K=200"
  "$EX/gemm_bias_relu.tile|gemm_bias_relu|M=333 N=520 K=264"
  "$EX/gemm_bias_relu.tile|gemm_bias_relu|M=64 N=130 K=70"
  "$EX/gemm_bias_gelu.tile|gemm_bias_gelu|M=200 N=136 K=72"
  "$EX/gemm_bias_gelu.tile|gemm_bias_gelu|M=131 N=264 K=200"
  "$EX/gemm_bias_gelu.tile|gemm_bias_gelu|M=64 N=130 K=70"
  "$EX/gemm_batched.tile|gemm_batched|Bt=3 M=200 N=136 K=72"
  "$EX/gemm_batched.tile|gemm_batched|Bt=2 M=129 N=264 K=1000"
  "$EX/gemm_batched.tile|gemm_batched|Bt=2 M=64 N=130 K=70"
  "$G|gemm_acc|M=200 N=264 K=72"
  "$G|gemm_acc|M=129 N=392 K=200"
  "$EX/gemm_splitk.tile|gemm_splitk|M=200 N=136 K=1000 S=4"
  "$EX/gemm_splitk.tile|gemm_splitk|M=131 N=264 K=4096 S=16"
  "$EX/gemm_splitk.tile|gemm_splitk|M=128 N=128 K=64 S=5"
  "$EX/gemm_splitk.tile|gemm_splitk|M=64 N=130 K=70 S=3"
  "$EX/gemv.tile|gemv|N=100 K=1000"
  "$EX/gemv.tile|gemv|N=512 K=2048"
  "$EX/gemv.tile|gemv_splitk|N=100 K=1000"
  "$EX/gemv.tile|gemv_splitk|N=130 K=4100"
  "$EX/gemm_int4.tile|gemm_int4|M=67 N=130 K=72"
  "$EX/gemm_int4.tile|gemm_int4|M=256 N=256 K=512"
  "$EX/gqa_decode.tile|gqa_decode|B=2 HKV=2 S=100"
  "$EX/gqa_decode.tile|gqa_decode|B=1 HKV=3 S=257"
  "$EX/gqa_decode_split.tile|gqa_decode_split|B=2 HKV=2 S=300 scale=0.088"
  "$EX/gqa_decode_split.tile|gqa_decode_split|B=1 HKV=3 S=65 scale=0.088"
  "$EX/gqa_decode_split.tile|gqa_combine|B=2 HKV=3"
  "$EX/mha_fwd.tile|mha_fwd|B=1 H=1 S=64 causal=0 scale=0.125"
  "$EX/mha_fwd.tile|mha_fwd|B=1 H=1 S=200 causal=0 scale=0.125"
  "$EX/mha_fwd.tile|mha_fwd|B=1 H=1 S=256 causal=1 scale=0.125"
  "$EX/mha_fwd.tile|mha_fwd|B=1 H=1 S=100 causal=1 scale=0.125"
  "$EX/mha_fwd.tile|mha_fwd|D:D=128 B=1 H=1 S=200 causal=0 scale=0.088"
  "$EX/mha_fwd.tile|mha_fwd|D:D=128 B=1 H=1 S=100 causal=1 scale=0.088"
  "$EX/mha_fwd.tile|mha_fwd|B=1 H=2 S=64 causal=0 scale=0.125"
  "$EX/mha_fwd.tile|mha_fwd|B=2 H=3 S=200 causal=0 scale=0.125"
  "$EX/mha_fwd.tile|mha_fwd|B=2 H=2 S=129 causal=1 scale=0.125"
  "$EX/mha_fwd.tile|mha_fwd|D:D=128 B=1 H=2 S=100 causal=0 scale=0.088"
  "$EX/mha_fwd.tile|mha_fwd|D:D=128 B=2 H=2 S=256 causal=1 scale=0.088"
  "$L/splitk_f16.tile|gemm_splitk_f16|M=200 N=136 K=1000 S=4"
  "$L/splitk_f16.tile|gemm_splitk_f16|M=64 N=130 K=70 S=3"
  "$L/splitk_bf16.tile|gemm_splitk_bf16|M=200 N=136 K=1000 S=4"
  "$L/splitk_bf16.tile|gemm_splitk_bf16|M=64 N=130 K=70 S=3"
  "$L/raster_gemm.tile|gemm_raster|M=300 N=200 K=70"
  "$L/raster_gemm.tile|gemm_raster|M=1000 N=520 K=264"
  "$L/raster_gemm.tile|gemm_raster|M=64 N=1000 K=32"
  "$R/rowfrag_two_shapes.tile|k|"
  "$R/rowfrag_wide_acc.tile|k|"
  "$R/reduce_acc_rows_out.tile|k|"
  "$W|gemm_wg2|M=128 N=128 K=64"
  "$W|gemm_wg2|M=200 N=136 K=72"
  "$W|gemm_wg2|M=333 N=520 K=264"
  "$W|gemm_wg4|M=256 N=128 K=64"
  "$W|gemm_wg4|M=300 N=136 K=200"
  "$W|gemm_wg4|M=131 N=78 K=48"
  "$V/mha_128x64.tile|mha_fwd|B=1 H=1 S=128 causal=0 scale=0.125"
  "$V/mha_128x64.tile|mha_fwd|B=2 H=3 S=200 causal=0 scale=0.125"
  "$V/mha_128x64.tile|mha_fwd|B=2 H=2 S=129 causal=1 scale=0.125"
  "$V/mha_128x64.tile|mha_fwd|D:D=128 B=1 H=2 S=200 causal=1 scale=0.088"
  "$V/mha_128x128.tile|mha_fwd|B=2 H=2 S=300 causal=1 scale=0.125"
  "$V/mha_128x128.tile|mha_fwd|D:D=128 B=1 H=2 S=129 causal=0 scale=0.088"
  "$V/mha_128x128.tile|mha_fwd|D:D=128 B=2 H=2 S=256 causal=1 scale=0.088"
  "$F|copies|N=64"
  "$F|copies|N=100"
  "$F|reductions|R=8"
  "$F|reductions|R=5"
  "$F|scans|"
  "$F|atomics|N=9"
  "$F|atomics|N=1000"
  "$F|locals|"
  "$F|gemms|"
)
fails=0
total=0
printf '%-20s %-7s %-28s %-10s %-10s %s\n' example target shape max_abs max_rel result
# result: PASS/FAIL, then "sm90" when the sm_90a TMA/wgmma entry ran (ptx_sm90.h)
for tgt in ${TARGETS:-sm_80 sm_90a}; do
  for c in "${CASES[@]}"; do
    IFS='|' read -r file ex shape <<<"$c"
    # CASES_MATCH=REGEX: only the kernels whose name matches (e.g. gemm), for a quicker device call
    [ -n "${CASES_MATCH:-}" ] && ! [[ $ex =~ $CASES_MATCH ]] && continue
    args=()
    # D:NAME=V specialises a shape symbol at compile time (-D), the rest are --arg values
    for a in $shape; do case $a in D:*) args+=(-D "${a#D:}") ;; *) args+=(--arg "$a") ;; esac; done
    out=$(timeout 300 "$T" run "$file" --kernel "$ex" --backend="${BACKEND:-cuda}" --target="$tgt" "${args[@]}" 2>&1)
    rc=$?
    { echo "=== $ex $tgt $shape (rc $rc)"; echo "$out"; } >>"$LOG"
    maxabs=$(echo "$out" | sed -n 's/.*max abs err \([^ ]*\).*/\1/p' | sort -g | tail -1)
    maxrel=$(echo "$out" | sed -n 's/.*max rel err \([^ ]*\).*/\1/p' | sort -g | tail -1)
    res=FAIL
    if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then res=PASS; fi
    [ $res = PASS ] || fails=$((fails + 1))
    total=$((total + 1))
    echo "$out" | grep -q '^  sm90: entry' && res="$res sm90"
    printf '%-20s %-7s %-28s %-10s %-10s %s\n' "$ex" "$tgt" "$shape" "${maxabs:--}" "${maxrel:--}" "$res"
  done
done
# fp8 conversions exist only on sm_90a
for n in 128 300; do
  [ -n "${CASES_MATCH:-}" ] && ! [[ fp8 =~ $CASES_MATCH ]] && continue
  out=$(timeout 300 "$T" run "$(dirname "$0")/features_fp8.tile" --backend="${BACKEND:-cuda}" --target=sm_90a --arg N=$n 2>&1)
  rc=$?
  { echo "=== fp8 sm_90a N=$n (rc $rc)"; echo "$out"; } >>"$LOG"
  res=FAIL
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then res=PASS; fi
  [ $res = PASS ] || fails=$((fails + 1))
  total=$((total + 1))
  maxabs=$(echo "$out" | sed -n 's/.*max abs err \([^ ]*\).*/\1/p' | sort -g | tail -1)
  maxrel=$(echo "$out" | sed -n 's/.*max rel err \([^ ]*\).*/\1/p' | sort -g | tail -1)
  printf '%-20s %-7s %-28s %-10s %-10s %s\n' fp8 sm_90a "N=$n" "${maxabs:--}" "${maxrel:--}" "$res"
done
echo "$((total - fails))/$total passed"
[ $fails -eq 0 ]
