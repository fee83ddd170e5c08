#!/usr/bin/env python3
"""tests/gpu/python_gpu.py [LIBTILEASM] — the Python package on an NVIDIA GPU (the H200 device machine).

  1. every DSL example of examples/python/ on torch CUDA tensors, checked against torch (ragged shapes too),
     with its kernel time next to the torch op's (CUDA events, median of 20);
  2. launch overhead per call (CPU wall time of 2000 back-to-back calls, then one sync) of a tileasm kernel
     through Kernel.__call__ and through @tileasm.jit, next to torch.add(out=) and a Triton kernel's launch
     (when Triton is installed) on the same tensors;
  3. cold compile + first launch (a GEMM source the cache has not seen: parse, compile, driver JIT, launch)
     and warm (the cache's binary, already loaded) first launch, next to Triton's cold and warm first call of
     its own GEMM (fresh TRITON_CACHE_DIR) and TileLang's (when installed; otherwise the table says so).

Prints one table and exits 1 if any check fails.  Without `pip install .` on the device it uses the
repository's python/ with LIBTILEASM (default: the first of build-pygpu/, build-py/, build/ holding
libtileasm.so; build it with `meson setup build-pygpu -Dpython=true -Dbuildtype=release && ninja -C
build-pygpu`, which links msgpack statically so the library needs only libc).
"""
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("CUDA_CACHE_DISABLE", "1")  # measure the driver's JIT, not its disk cache
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
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

import torch  # noqa: E402

import attention  # noqa: E402
import quickstart_gemm  # noqa: E402
import rmsnorm  # noqa: E402
import softmax  # noqa: E402

rows = []
fails = 0


def row(name, ok, detail, ms=None, peer=None):
    global fails
    fails += 0 if ok else 1
    rows.append((name, "PASS" if ok else "FAIL", detail, "" if ms is None else f"{ms:.4f}", peer or ""))


def gpu_time(fn, n=20):
    """Median kernel time in ms (CUDA events around each call)."""
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def check(name, fn, ref_fn, atol, rtol, peer_fn=None, peer_name=""):
    try:
        out = fn()
        torch.cuda.synchronize()
        ref = ref_fn()
        err = (out.float() - ref.float()).abs().max().item()
        ok = torch.allclose(out.float(), ref.float(), atol=atol, rtol=rtol)
        ms = gpu_time(fn)
        peer = f"{peer_name} {gpu_time(peer_fn):.4f} ms" if peer_fn else None
        row(name, ok, f"max err {err:.3g}", ms, peer)
    except Exception as e:  # a failure is a row, not an abort
        row(name, False, f"{type(e).__name__}: {str(e).splitlines()[0][:90]}")


def dsl_examples(dev):
    g = torch.Generator(device=dev).manual_seed(0)
    rnd = lambda *s: torch.randn(*s, device=dev, generator=g, dtype=torch.float16)  # noqa: E731
    # TileLang's quickstart, as its README runs it (1024^3), and ragged.
    for (M, N, K) in ((1024, 1024, 1024), (200, 130, 70), (4096, 4096, 4096)):
        k = quickstart_gemm.matmul(M, N, K, 128, 128, 32)
        a, b = rnd(M, K), rnd(K, N)
        c = torch.empty(M, N, device=dev, dtype=torch.float16)
        check(f"quickstart gemm {M}x{N}x{K}", lambda: (k(a, b, c), c)[1], lambda: torch.relu(a @ b), 1e-2, 1e-2,
              lambda: torch.relu(a @ b), "torch relu(a@b)")
    for (M, N) in ((4096, 4096), (7, 300), (1000, 3000)):
        x = rnd(M, N)
        k = softmax.softmax(M, N)
        check(f"softmax {M}x{N}", lambda: k(x), lambda: torch.softmax(x.float(), 1), 2e-3, 1e-2,
              lambda: torch.softmax(x, 1), "torch.softmax")
        w = rnd(N)
        r = rmsnorm.rmsnorm(M, N)
        ref = lambda: x.float() * torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + 1e-6) * w.float()  # noqa
        peer = (lambda: torch.nn.functional.rms_norm(x, (N,), w, 1e-6)) if hasattr(torch.nn.functional,
                                                                                  "rms_norm") else None
        check(f"rmsnorm {M}x{N}", lambda: r(x, w), ref, 3e-2, 1e-2, peer, "F.rms_norm")
    for (B, H, S, D, causal) in ((2, 8, 1024, 64, False), (2, 8, 1024, 64, True), (1, 3, 200, 64, True)):
        q, kk, v = (rnd(B * S * H, D) for _ in range(3))
        fa = attention.flashattn(B, H, S, D, causal)
        bhsd = lambda t: t.view(B, S, H, D).transpose(1, 2)  # noqa: E731
        sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(  # noqa: E731
            bhsd(q), bhsd(kk), bhsd(v), is_causal=causal)
        check(f"attention b{B} h{H} s{S} d{D}{' causal' if causal else ''}", lambda: fa(q, kk, v),
              lambda: sdpa().transpose(1, 2).reshape(B * S * H, D), 1e-2, 1e-2, sdpa, "torch SDPA")


def triton_add():
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def add_kernel(a, b, c, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(c + i, tl.load(a + i, mask=m) + tl.load(b + i, mask=m), mask=m)

    return lambda a, b, c: add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, c, a.numel(), BLOCK=1024)


def per_call_us(fn, n=2000):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) * 1e6 / n


def launch_overhead(dev):
    n = 4096
    a, b = torch.rand(n, device=dev), torch.rand(n, device=dev)
    c = torch.empty(n, device=dev)
    k = tileasm.compile(os.path.join(ROOT, "examples", "vector_add.tile"), target=_target())
    k(a, b, c)
    torch.cuda.synchronize()
    ok = torch.equal(c, a + b)
    import tileasm.language as T
    Nsym = T.dynamic("N")

    @tileasm.jit
    def vadd(A: T.Tensor((Nsym,), "float32"), B: T.Tensor((Nsym,), "float32"), C: T.Tensor((Nsym,), "float32")):
        with T.Kernel(T.ceildiv(Nsym, 1024), threads=256) as bx:
            A_f = T.alloc_fragment((1024,), "float32")
            B_f = T.alloc_fragment((1024,), "float32")
            T.copy(A[bx * 1024], A_f)
            T.copy(B[bx * 1024], B_f)
            for i in T.Parallel(1024):
                B_f[i] = A_f[i] + B_f[i]
            T.copy(B_f, C[bx * 1024])

    c2 = torch.empty(n, device=dev)
    vadd(a, b, c2)
    torch.cuda.synchronize()
    ok = ok and torch.equal(c2, a + b)
    t_k = per_call_us(lambda: k(a, b, c))
    t_j = per_call_us(lambda: vadd(a, b, c2))
    t_t = per_call_us(lambda: torch.add(a, b, out=c))
    tri = triton_add()
    peer = f"torch.add(out=) {t_t:.1f} us"
    if tri:
        c3 = torch.empty(n, device=dev)
        tri(a, b, c3)
        torch.cuda.synchronize()
        ok = ok and torch.equal(c3, a + b)
        peer += f", Triton {per_call_us(lambda: tri(a, b, c3)):.1f} us"
    else:
        peer += ", Triton not installed"
    row("launch overhead: Kernel(...)", ok, f"{t_k:.1f} us per call (vector_add N=4096)", None, peer)
    row("launch overhead: @tileasm.jit", ok, f"{t_j:.1f} us per call (same kernel from the DSL)", None, peer)


def _target():
    major, minor = torch.cuda.get_device_capability()
    return "sm_90a" if (major, minor) == (9, 0) else "sm_80"


GEMM_SRC = open(os.path.join(ROOT, "examples", "gemm.tile")).read()


def compile_times(dev):
    M = N = K = 1024
    a = torch.randn(M, K, device=dev, dtype=torch.float16)
    b = torch.randn(K, N, device=dev, dtype=torch.float16)
    c = torch.empty(M, N, device=dev, dtype=torch.float16)
    src = GEMM_SRC + f"# {time.time_ns()}\n"  # a source the cache has not seen
    t0 = time.perf_counter()
    k = tileasm.compile(src, target=_target())
    t1 = time.perf_counter()
    k(a, b, c)
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    ok = torch.allclose(c.float(), (a @ b).float(), atol=1e-1, rtol=1e-2)
    t3 = time.perf_counter()
    k2 = tileasm.compile(src, target=_target())  # cache hit: the same binary, already loaded
    k2(a, b, c)
    torch.cuda.synchronize()
    t4 = time.perf_counter()
    peer = triton_gemm_times(a, b) + "; " + tilelang_times(M, N, K)
    row("cold compile + first launch (gemm 1024^3)", ok,
        f"{(t2 - t0) * 1e3:.1f} ms (compile {(t1 - t0) * 1e3:.2f} ms, JIT+launch {(t2 - t1) * 1e3:.1f} ms)", None,
        peer)
    row("warm (cached) compile + first launch", ok, f"{(t4 - t3) * 1e3:.3f} ms", None, "")


def triton_gemm_times(a, b):
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return "Triton not installed"
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cache-")

    @triton.jit
    def mm(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(1), tl.program_id(0)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            x = tl.load(A + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K),
                        other=0.0)
            y = tl.load(B + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N),
                        other=0.0)
            acc += tl.dot(x, y)
        tl.store(C + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))

    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(N, 128), triton.cdiv(M, 128))
    t0 = time.perf_counter()
    mm[grid](a, b, c, M, N, K, BM=128, BN=128, BK=32)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    mm[grid](a, b, c, M, N, K, BM=128, BN=128, BK=32)
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    ok = torch.allclose(c.float(), (a @ b).float(), atol=1e-1, rtol=1e-2)
    return f"Triton cold {(t1 - t0) * 1e3:.0f} ms, warm {(t2 - t1) * 1e3:.2f} ms{'' if ok else ' (WRONG RESULT)'}"


def tilelang_times(M, N, K):
    """TileLang's own quickstart: examples/python/quickstart_gemm.py with the imports changed back."""
    try:
        import tilelang  # noqa: F401
    except ImportError:
        return "TileLang not installed on this machine"
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilelang-cache-")
    src = open(os.path.join(ROOT, "examples", "python", "quickstart_gemm.py")).read()
    src = src.replace("import tileasm as tilelang", "import tilelang").replace(
        "import tileasm.language as T", "import tilelang.language as T")
    path = os.path.join(tempfile.mkdtemp(prefix="tilelang-quickstart-"), "quickstart_gemm_tilelang.py")
    with open(path, "w") as f:  # a file, since TileLang reads the kernel's source with inspect too
        f.write(src)
    try:
        import runpy
        ns = runpy.run_path(path, run_name="tilelang_quickstart")
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        t0 = time.perf_counter()
        k = ns["matmul"](M, N, K, 128, 128, 32)
        k(a, b, c)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        k = ns["matmul"](M, N, K, 128, 128, 32)
        k(a, b, c)
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        ok = torch.allclose(c.float(), torch.relu(a @ b).float(), atol=1e-1, rtol=1e-2)
        return (f"TileLang {getattr(tilelang, '__version__', '?')} cold {(t1 - t0) * 1e3:.0f} ms, warm "
                f"{(t2 - t1) * 1e3:.2f} ms{'' if ok else ' (WRONG RESULT)'}")
    except Exception as e:
        return f"TileLang failed: {type(e).__name__}: {str(e).splitlines()[0][:60]}"


def main():
    if not torch.cuda.is_available():
        print("python_gpu.py: torch sees no CUDA device")
        return 1
    dev = torch.device("cuda", 0)
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, tileasm {tileasm.version()} "
          f"({os.environ.get('TILEASM_LIB', 'installed package')}), target {_target()}")
    for step in (dsl_examples, launch_overhead, compile_times):
        try:
            step(dev)
        except Exception as e:
            row(step.__name__, False, f"{type(e).__name__}: {str(e).splitlines()[0][:100]}")
    w = [max(len(r[i]) for r in rows + [("check", "result", "detail", "ms", "peer (same run)")]) for i in range(5)]
    head = ("check", "result", "detail", "ms", "peer (same run)")
    for r in [head] + rows:
        print("  ".join(str(x).ljust(w[i]) for i, x in enumerate(r)))
    print(f"{len(rows) - fails}/{len(rows)} passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
