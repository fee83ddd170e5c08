#!/usr/bin/env python3
"""tests/gpu/bench_torch.py [LIBTILEASM] — issue 14's benchmark rows in ONE process: each tileasm kernel
(an example .tile file, compiled for sm_90a through the Python package, launched on torch CUDA tensors)
next to its PyTorch/cuBLAS equivalent measured in the same process, on the same tensors.

Per row: tileasm's compile time (Tile IR text -> PTX, wall), its first launch in this process (driver JIT
of the entry it launches + launch; run with CUDA_CACHE_DISABLE=1 so the JIT is not a disk-cache hit), the
output checked against torch (max |out - ref| / max |ref|), then the GPU time per launch of each, tileasm
and torch interleaved round by round: the median over ROUNDS x N replays of a CUDA graph of GRAPH_N
launches (events around each replay, divided by GRAPH_N), so the host's launch cost (tileasm's Python
launcher: tens of microseconds per call) is not in the kernel time; and, beside it, the median of
ROUNDS x N single launches each between two events with a synchronize after it ("synced": that includes
the time the host takes to issue the launch, which dominated the small and memory-bound rows of earlier
tables).  Without graph capture (BENCH_GRAPH=0, or a capture failure) the first column is N launches
back to back between two events.  Prints one table, exits 1 if a check fails.

Rows: GEMM f16/bf16 A·B and A·Bᵀ at 4096³ and 8192³ (gemm.tile, gemm_bf16_tn.tile and their dtype swaps),
bias + ReLU and bias + GELU(tanh) epilogues at 4096³, batched GEMM 8 x 2048³ (gemm_batched.tile) vs
torch.bmm, split-K M = N = 512, K = 16384 (gemm_splitk.tile, f32 atomics; the timing includes zeroing C)
vs a @ b, softmax / rmsnorm / layernorm 16384 x 8192 f16 (the multi-pass examples and the one-read *_row
examples) vs torch and x.clone() bandwidth.
"""
import ctypes
import os
import statistics
import sys
import time

os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.environ.get("EXAMPLES", os.path.join(ROOT, "examples"))
try:
    import tileasm
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    lib = sys.argv[1] if len(sys.argv) > 1 else next(
        (p for p in (os.path.join(ROOT, d, "libtileasm.so") for d in ("build-pygpu", "build-py", "build"))
         if os.path.exists(p)), None)
    if lib:
        os.environ["TILEASM_LIB"] = os.path.abspath(lib)
    import tileasm
from tileasm import _lib  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

N_LAUNCH = int(os.environ.get("BENCH_N", "25"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
GRAPH_N = int(os.environ.get("BENCH_GRAPH_N", "10"))
USE_GRAPH = os.environ.get("BENCH_GRAPH", "1") != "0"
QUICK = os.environ.get("BENCH_QUICK") == "1"
dev = torch.device("cuda")
fails = 0
rows = []


class _KI(ctypes.Structure):  # ta_kernel_info up to .fast (include/tileasm.h)
    _fields_ = _lib.KernelInfo._fields_ + [("fast", ctypes.c_void_p)]


def has_fast(k):
    p = _lib.lib().ta_binary_kernel(k._bin, k.index)
    return bool(ctypes.cast(p, ctypes.POINTER(_KI)).contents.fast)


def source(name, subst=()):
    with open(os.path.join(EX, name)) as f:
        text = f.read()
    for a, b in subst:
        text = text.replace(a, b)
    return text


def build(name, subst=(), tag=None):
    """Compiles an example for sm_90a; returns (kernel, compile ms)."""
    t0 = time.perf_counter()
    k = tileasm.compile(source(name, subst), target="sm_90a", filename=tag or name)
    return k, (time.perf_counter() - t0) * 1e3


def events(fn, n):
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return ts


def graph_of(fn):
    """A CUDA graph of GRAPH_N launches of fn (captured after a warm-up on the capture stream), or None."""
    if not USE_GRAPH:
        return None
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(GRAPH_N):
                fn()
        torch.cuda.synchronize()
        return g
    except Exception as e:  # no capture: back-to-back launches instead
        print(f"  (no CUDA graph for this row: {type(e).__name__}: {str(e).splitlines()[0][:80]})", flush=True)
        torch.cuda.synchronize()
        return None


def gpu_times(fn, g, n):
    """n samples of the GPU time per launch: a replay of graph g / GRAPH_N, or GRAPH_N back-to-back launches."""
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        if g is not None:
            g.replay()
        else:
            for _ in range(GRAPH_N):
                fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / GRAPH_N)
    return ts


def bench(name, k, ms_compile, run, out, ref_fn, tol, peer_fn, peer_name, work=None, unit=""):
    """run(): launches tileasm; out(): its result; ref_fn(): torch's result for the check; peer_fn(): torch's
    op to time.  work: FLOPs or bytes per launch for the rate columns."""
    global fails
    try:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        run()
        torch.cuda.synchronize()
        first = (time.perf_counter() - t0) * 1e3
        ref = ref_fn().float()
        got = out().float()
        scale = ref.abs().max().item() or 1.0
        err = (got - ref).abs().max().item() / scale
        ok = bool(err <= tol) and bool(torch.isfinite(got).all())
        peer_fn()
        ga, gp = graph_of(run), graph_of(peer_fn)
        ta, tp, sa, sp = [], [], [], []
        for _ in range(ROUNDS):
            ta += gpu_times(run, ga, N_LAUNCH)
            tp += gpu_times(peer_fn, gp, N_LAUNCH)
            sa += events(run, N_LAUNCH)
            sp += events(peer_fn, N_LAUNCH)
        mt, mp = statistics.median(ta), statistics.median(tp)
        st, spp = statistics.median(sa), statistics.median(sp)
        rate = ""
        if work:
            r = (lambda ms: work / ms / 1e9) if unit == "TFLOP/s" else (lambda ms: work / ms / 1e6)
            rate = f"{r(mt):.0f} / {r(mp):.0f} {unit}"
        fails += 0 if ok else 1
        rows.append((name, "fast" if has_fast(k) else "generic", f"{mt:.4f}", f"{peer_name} {mp:.4f}",
                     f"{mp / mt:.3f}", rate, f"{st:.4f} / {spp:.4f}", f"{ms_compile:.2f}", f"{first:.1f}",
                     f"{err:.2e}", "PASS" if ok else "FAIL"))
    except Exception as e:  # a failure is a row, not an abort
        fails += 1
        rows.append((name, "-", "-", peer_name, "-", "-", "-", f"{ms_compile:.2f}", "-",
                     f"{type(e).__name__}: {str(e).splitlines()[0][:80]}", "FAIL"))
    print("  ".join(rows[-1]), flush=True)


def rnd(*shape, dtype=torch.float16, scale=1.0):
    return (torch.randn(*shape, device=dev, dtype=torch.float32) * scale).to(dtype)


def gemm_rows():
    sizes = (4096,) if QUICK else (4096, 8192)
    variants = (  # (label, file, substitutions, dtype, B is [N, K])
        ("f16 A·B", "gemm.tile", (), torch.float16, False),
        ("bf16 A·B", "gemm.tile", (("f16", "bf16"),), torch.bfloat16, False),
        ("f16 A·Bᵀ", "gemm_bf16_tn.tile", (("bf16", "f16"),), torch.float16, True),
        ("bf16 A·Bᵀ", "gemm_bf16_tn.tile", (), torch.bfloat16, True),
    )
    for label, f, subst, dt, tn in variants:
        k, cms = build(f, subst, f"{f} ({label})")
        for S in sizes:
            a = rnd(S, S, dtype=dt)
            b = rnd(S, S, dtype=dt)
            c = torch.empty(S, S, device=dev, dtype=dt)
            ref = (lambda: a @ b.T) if tn else (lambda: a @ b)
            bench(f"gemm {label} {S}^3", k, cms, lambda: k(a, b, c), lambda: c, ref,
                  2e-3 if dt == torch.float16 else 1e-2, ref,
                  "torch a@b" + (".T" if tn else ""), 2 * S ** 3, "TFLOP/s")
            del a, b, c
    S = 4096
    a, b, bias = rnd(S, S), rnd(S, S), rnd(S)
    c = torch.empty(S, S, device=dev, dtype=torch.float16)
    k, cms = build("gemm_bias_relu.tile")
    peer = lambda: torch.relu(torch.addmm(bias, a, b))  # noqa: E731
    bench("gemm + bias + relu 4096^3", k, cms, lambda: k(a, b, bias, c), lambda: c, peer, 2e-3, peer,
          "torch relu(addmm)", 2 * S ** 3, "TFLOP/s")
    k, cms = build("gemm_bias_gelu.tile")
    peer = lambda: F.gelu(torch.addmm(bias, a, b), approximate="tanh")  # noqa: E731
    bench("gemm + bias + gelu(tanh) 4096^3", k, cms, lambda: k(a, b, bias, c), lambda: c, peer, 2e-3, peer,
          "torch gelu(addmm,tanh)", 2 * S ** 3, "TFLOP/s")
    del a, b, c, bias
    # batched 8 x 2048^3
    Bt, S = 8, 2048
    a, b = rnd(Bt, S, S), rnd(Bt, S, S)
    c = torch.empty(Bt, S, S, device=dev, dtype=torch.float16)
    k, cms = build("gemm_batched.tile")
    peer = lambda: torch.bmm(a, b)  # noqa: E731
    bench("batched gemm 8 x 2048^3", k, cms, lambda: k(a, b, c), lambda: c, peer, 2e-3, peer, "torch.bmm",
          2 * Bt * S ** 3, "TFLOP/s")
    del a, b, c
    # split-K: M = N = 512, K = 16384, C (f32) zeroed then accumulated by atomics
    M, K = 512, 16384
    a, b = rnd(M, K), rnd(K, M)
    c = torch.empty(M, M, device=dev, dtype=torch.float32)
    k, cms = build("gemm_splitk.tile")
    for splits in (8, 16):
        def run(s=splits):
            c.zero_()
            k(a, b, c, s)
        peer = lambda: a @ b  # noqa: E731
        bench(f"split-K gemm 512x512x16384, S={splits}", k, cms, run, lambda: c, lambda: a.float() @ b.float(),
              2e-3, peer, "torch a@b", 2 * M * M * K, "TFLOP/s")
    del a, b, c


def row_kernels():
    M, N = (4096, 8192) if QUICK else (16384, 8192)
    x = rnd(M, N)
    w, g, bb = rnd(N), rnd(N), rnd(N)
    y = torch.empty_like(x)
    nbytes = 2 * M * N * 2
    eps = 1e-6
    clone = lambda: x.clone()  # noqa: E731
    clone_ms = statistics.median(gpu_times(clone, graph_of(clone), 3 * N_LAUNCH))
    clone_synced = statistics.median(events(clone, 3 * N_LAUNCH))
    rows.append((f"x.clone() {M}x{N} f16", "-", f"{clone_ms:.4f}", "-", "-", f"{nbytes / clone_ms / 1e6:.0f} GB/s",
                 f"{clone_synced:.4f}", "-", "-", "-", "-"))
    print("  ".join(rows[-1]), flush=True)
    for f in ("softmax", "softmax_row"):
        k, cms = build(f + ".tile")
        ref = lambda: torch.softmax(x.float(), -1)  # noqa: E731
        bench(f"{f} {M}x{N}", k, cms, lambda: k(x, y), lambda: y, ref, 5e-3,
              lambda: torch.softmax(x, -1), "torch.softmax", nbytes, "GB/s")
    for f in ("rmsnorm", "rmsnorm_row"):
        k, cms = build(f + ".tile")
        ref = lambda: x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps) * w.float()  # noqa
        bench(f"{f} {M}x{N}", k, cms, lambda: k(x, w, y, eps), lambda: y, ref, 5e-3,
              lambda: F.rms_norm(x, (N,), w, eps), "F.rms_norm", nbytes, "GB/s")
    for f in ("layernorm", "layernorm_row"):
        k, cms = build(f + ".tile")
        ref = lambda: F.layer_norm(x.float(), (N,), g.float(), bb.float(), eps)  # noqa: E731
        bench(f"{f} {M}x{N}", k, cms, lambda: k(x, g, bb, y, eps), lambda: y, ref, 5e-3,
              lambda: F.layer_norm(x, (N,), g, bb, eps), "F.layer_norm", nbytes, "GB/s")
    rows.append(("(clone GB/s for the ratio to copy bandwidth)", "-", f"{clone_ms:.4f}", "-", "-",
                 f"{nbytes / clone_ms / 1e6:.0f} GB/s", f"{clone_synced:.4f}", "-", "-", "-", "-"))


def main():
    torch.manual_seed(0)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, tileasm {tileasm.__version__ if hasattr(tileasm, '__version__') else ''}"
          f", median of {ROUNDS} x {N_LAUNCH} samples each ({'CUDA graph' if USE_GRAPH else 'back-to-back'} of {GRAPH_N}"
          f" launches per sample; 'synced': single launches), CUDA_CACHE_DISABLE={os.environ.get('CUDA_CACHE_DISABLE')}")
    hdr = ("kernel", "entry", "tileasm ms", "peer ms", "peer/tileasm", "rate tileasm / peer",
           "synced ms tileasm / peer", "compile ms", "1st launch ms", "rel err", "check")
    print("  ".join(hdr), flush=True)
    if os.environ.get("BENCH_ONLY") != "rows":
        gemm_rows()
    if os.environ.get("BENCH_ONLY") != "gemm":
        row_kernels()
    w = [max(len(r[i]) for r in rows + [hdr]) for i in range(len(hdr))]
    print("\n== bench_torch.py table")
    for r in [hdr] + rows:
        print(" | ".join(s.ljust(w[i]) for i, s in enumerate(r)))
    print(f"bench_torch.py: {fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
