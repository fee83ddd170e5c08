"""The Python DSL: TileLang-style kernels (examples/python/) translated to Tile IR and run on the emulator
and the interpreter against NumPy; symbolic shapes; autotune; errors at the Python source position."""
import inspect

import numpy as np
import pytest

import attention
import gemv
import quickstart_gemm
import rmsnorm
import softmax
import tileasm
import tileasm.language as T

rng = np.random.default_rng(3)


def f16(*shape):
    return rng.standard_normal(shape).astype(np.float16)


def test_quickstart_gemm_tile_ir():
    k = quickstart_gemm.matmul(200, 130, 70, 128, 128, 32)
    ir = k.tile_ir
    assert ir.startswith("kernel matmul_relu_kernel(A: f16[200, 70], B: f16[70, 130], C: f16[200, 130])")
    assert "grid(2, 2) threads(128)" in ir and "pipelined ko in 0 .. 3 stages(3)" in ir
    assert "gemm(A_shared, B_shared, C_local)" in ir and "max(C_local[i, j], 0)" in ir
    assert quickstart_gemm.matmul(200, 130, 70, 128, 128, 32) is k  # the factory's result is cached


@pytest.mark.parametrize("target,backend", [("gfx942", None), ("gfx1100", "emu"), ("sm_90a", "interp")])
def test_quickstart_gemm_runs(target, backend):
    assert quickstart_gemm.run_numpy(200, 130, 70, target, backend) < 0.05


def test_quickstart_gemm_default_target():
    k = quickstart_gemm.matmul(64, 48, 40, 128, 128, 32)
    a, b = f16(64, 40), f16(40, 48)
    c = np.zeros((64, 48), np.float16)
    k(a, b, c)  # NumPy arrays, no target: gfx942 on the emulator
    assert k.kernel().target == "gfx942"
    ref = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    assert np.abs(c.astype(np.float32) - ref).max() < 0.05


@pytest.mark.parametrize("backend", ["emu", "interp"])
def test_softmax(backend):
    x = f16(7, 300)
    y = softmax.softmax(7, 300)(x, backend=backend)  # out_idx=[-1]: the output is allocated and returned
    assert y.shape == (7, 300) and y.dtype == np.float16
    assert np.abs(y.astype(np.float32) - softmax.reference(x)).max() < 2e-3


def test_rmsnorm():
    x, w = f16(9, 260), f16(260)
    y = rmsnorm.rmsnorm(9, 260)(x, w)
    assert np.abs(y.astype(np.float32) - rmsnorm.reference(x, w)).max() < 2e-2


@pytest.mark.parametrize("causal", [False, True])
def test_attention(causal):
    b, h, s, d = 1, 2, 100, 64
    q, k, v = (f16(b * s * h, d) for _ in range(3))
    o = attention.flashattn(b, h, s, d, causal)(q, k, v)
    assert np.abs(o.astype(np.float32) - attention.reference(q, k, v, b, h, s, d, causal)).max() < 5e-3


N = T.dynamic("N")


@tileasm.jit
def scale_add(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), s: T.float32):
    with T.Kernel(T.ceildiv(N, 256), threads=128) as bx:
        A_f = T.alloc_fragment((256,), "float32")
        T.copy(A[bx * 256], A_f)
        for i in T.Parallel(256):
            A_f[i] = A_f[i] * s + 1.0
        T.copy(A_f, B[bx * 256])


def test_dynamic_shape_compiles_once():
    assert "kernel scale_add(A: f32[N], B: f32[N], s: f32)" in scale_add.tile_ir
    for n in (5, 1000):
        a = rng.random(n, dtype=np.float32)
        b = np.zeros(n, np.float32)
        scale_add(a, b, 2.0)
        np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    assert len(scale_add._kernels) == 1


def test_prim_func_and_compile():
    @T.prim_func
    def add_one(X: T.Tensor((10,), "int32")):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(10):
                X[i] = X[i] + 1

    assert "X[i] = (X[i] + 1)" in add_one.tile_ir
    k = tileasm.compile(add_one, target="gfx90a")
    x = np.arange(10, dtype=np.int32)
    k(x)
    np.testing.assert_array_equal(x, np.arange(1, 11))


def test_autotune_picks_a_config_and_caches():
    calls = []

    @tileasm.autotune(configs=[dict(block=64), dict(block=128)], warmup=0, rep=1)
    @tileasm.jit(target="gfx942")
    def vadd(n, block=256):
        calls.append(block)

        @T.prim_func
        def k(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
            with T.Kernel(T.ceildiv(n, block), threads=64) as bx:
                F = T.alloc_fragment((block,), "float32")
                T.copy(A[bx * block], F)
                T.copy(F, B[bx * block])
        return k

    jk = vadd(300)
    assert jk.best_config in (dict(block=64), dict(block=128))
    assert set(jk.autotune_results) == {0, 1} and all(isinstance(v, float) for v in jk.autotune_results.values())
    n_calls = len(calls)
    assert vadd(300) is jk and len(calls) == n_calls  # cached per shape
    a = rng.random(300, dtype=np.float32)
    b = np.zeros(300, np.float32)
    jk(a, b)
    np.testing.assert_array_equal(a, b)


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    for i, l in enumerate(lines):
        if text in l:
            return first + i, l.index(text) + 1
    raise AssertionError(text)


def test_errors_point_at_python_source():
    def bad_loop(X: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32):
            while True:
                pass

    with pytest.raises(tileasm.CompileError) as e:
        T.prim_func(bad_loop).tile_ir
    f, ln, col, msg = e.value.errors[0]
    assert f == __file__ and (ln, col) == line_of(bad_loop, "while True")
    assert "While statements are not supported" in msg

    def bad_type(X: T.Tensor((8,), "float16"), s: T.float32):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(8):
                X[i] = X[i] + s

    with pytest.raises(tileasm.CompileError) as e:
        tileasm.compile(T.prim_func(bad_type), target="gfx942")
    f, ln, col, msg = e.value.errors[0]  # a library (verifier) error, mapped back to the Python line
    assert f == __file__ and ln == line_of(bad_type, "X[i] = X[i] + s")[0]
    assert "different types (f16 and f32)" in msg and "Tile IR line" in str(e.value)

    def undefined(X: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(8):
                X[i] = nope[i]  # noqa: F821

    with pytest.raises(tileasm.CompileError, match="'nope' is not a buffer"):
        T.prim_func(undefined).tile_ir

    def no_annotation(X):
        with T.Kernel(1, threads=32):
            pass

    with pytest.raises(tileasm.CompileError, match="needs an annotation"):
        T.prim_func(no_annotation).tile_ir

    def reassign(X: T.Tensor((8,), "int32")):
        with T.Kernel(4, threads=32) as bx:
            for i in T.Parallel(8):
                i = i + 1
                X[i] = bx

    with pytest.raises(tileasm.CompileError, match="'i' is immutable here"):
        T.prim_func(reassign).tile_ir

    def unsupported_prim(X: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32):
            T.reshape(X, (2, 4))

    with pytest.raises(tileasm.CompileError, match="T.reshape is not supported by tileasm yet"):
        T.prim_func(unsupported_prim).tile_ir


def test_body_is_never_executed():
    def k(X: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=32):
            T.fill(X_s, 1.0)  # noqa: F821  (would be a NameError if Python ran it)

    with pytest.raises(tileasm.CompileError, match="'X_s' is not a buffer"):
        T.prim_func(k).tile_ir
    with pytest.raises(RuntimeError, match="can only be used inside a tileasm kernel"):
        T.copy(1, 2)


def test_readme_python_example(tmp_path, capsys):
    import os
    import runpy
    from conftest import ROOT
    text = open(os.path.join(ROOT, "README.md")).read()
    block = text.split("## Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    p = tmp_path / "readme_gemm.py"
    p.write_text(block)
    ns = runpy.run_path(str(p))  # runs both launches; c holds the interpreter's result
    a, b, c = ns["a"], ns["b"], ns["c"]
    assert np.abs(c.astype(np.float32) - a.astype(np.float32) @ b.astype(np.float32)).max() < 0.05
    assert "kernel gemm(A: f16[200, 70]" in capsys.readouterr().out


@T.prim_func
def math_and_bits(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32"), I: T.Tensor((64,), "int32"),
                  J: T.Tensor((64,), "int32")):
    with T.Kernel(1, threads=64):
        for i in T.Parallel(64):
            Y[i] = T.clamp(T.sigmoid(X[i]) * 2 - 0.5, 0, 1) + X[i] ** 2 + T.pow(T.abs(X[i]), 0.5) + T.floor(X[i])
            J[i] = ((I[i] << 2) | 1) ^ (I[i] >> 1) & ~7
        for k in T.serial(60, 0, -20):  # 60, 40, 20
            J[k] = J[k] + 1000
        for k in range(1, 64, 30):  # 1, 31, 61
            J[k] = -J[k]


def test_math_bits_and_steps():
    x = rng.standard_normal(64).astype(np.float32)
    i = rng.integers(-1000, 1000, 64).astype(np.int32)
    y = np.zeros(64, np.float32)
    j = np.zeros(64, np.int32)
    tileasm.compile(math_and_bits, target="sm_80")(x, y, i, j, backend="interp")
    sig = 1 / (1 + np.exp(-x.astype(np.float64)))
    ref = np.clip(sig * 2 - 0.5, 0, 1) + x.astype(np.float64) ** 2 + np.abs(x) ** 0.5 + np.floor(x)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    rj = ((i << 2) | 1) ^ ((i >> 1) & ~7)
    rj[[60, 40, 20]] += 1000
    rj[[1, 31, 61]] *= -1
    np.testing.assert_array_equal(j, rj)


@T.prim_func
def vectorized_rows(X: T.Tensor((8, 16), "float32"), Y: T.Tensor((8, 16), "float32")):
    with T.Kernel(1, threads=32):
        for r in T.Parallel(8):
            for c in T.vectorized(0, 16, 4):  # 0, 4, 8, 12
                Y[r, c] = X[r, c] * 2 + T.cast(c, "float32")


@pytest.mark.parametrize("target,backend", [("gfx942", "emu"), ("sm_80", "interp")])
def test_vectorized_loop(target, backend):
    k = tileasm.compile(vectorized_rows, target=target)
    assert "vectorized c in 0 .. 16 step 4 {" in vectorized_rows.tile_ir
    x = rng.standard_normal((8, 16)).astype(np.float32)
    y = np.full((8, 16), 7, np.float32)
    k(x, y, backend=backend)
    ref = np.full((8, 16), 7, np.float32)
    ref[:, ::4] = x[:, ::4] * 2 + np.arange(0, 16, 4, dtype=np.float32)
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("N,K", [(77, 600), (64, 256), (1, 5)])
def test_gemv_thread_style(N, K):
    """2-D thread blocks (threads=(32, 4), T.get_thread_binding(0/1)), T.alloc_var, lazy T.if_then_else loads and
    T.shfl_xor, on the interpreter and the emulator (three AMD targets) against NumPy."""
    k = gemv.gemv(N, K)
    ir = k.tile_ir
    assert "threads(32, 4)" in ir and "shfl_xor(acc[0], (16 >> s))" in ir and "if (ty < 4)" in ir
    assert "if_then_else(((k < %d) && (n < %d)), A[n, k], 0)" % (K, N) in ir
    a, x = f16(N, K), f16(K)
    want = gemv.reference(a, x).astype(np.float64)
    assert np.abs(want).max() > 0
    for target, backend in [("gfx942", "interp"), ("gfx942", "emu"), ("gfx1100", "emu"), ("gfx90a", "emu")]:
        y = np.full(N, np.nan, np.float16)
        k.kernel(target)(a, x, y, backend=backend)
        np.testing.assert_allclose(y.astype(np.float64), want, rtol=1e-2, atol=1e-2, err_msg=f"{target} {backend}")


@T.prim_func
def atomics_and_bits(X: T.Tensor((64,), "float32"), M: T.Tensor((4,), "int32"), R: T.Tensor((64,), "int32"),
                     S: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        for i in T.Parallel(64):
            T.atomic_max(M[i % 3], T.cast(X[i] * 100, "int32"))
            T.atomic_min(M[3], -i)
            R[i] = T.reinterpret("int32", X[i]) & 0x7fffffff
        t = T.get_thread_binding(0)
        if t < 64:
            S[t] = T.shfl_down(X[t], 1) + T.shfl_sync(X[t], 0)


def test_atomic_max_min_reinterpret_shuffles():
    x = rng.standard_normal(64).astype(np.float32)
    m = np.full(4, -1000, np.int32)
    m[3] = 0
    r = np.zeros(64, np.int32)
    s = np.zeros(64, np.float32)
    k = tileasm.compile(atomics_and_bits, target="gfx942")
    for backend in ("interp", "emu"):
        mm = m.copy()
        k(x, mm, r, s, backend=backend)
        ref = [max(-1000, *[int(np.float32(x[i]) * np.float32(100)) for i in range(j, 64, 3)]) for j in range(3)]
        ref.append(-63)
        np.testing.assert_array_equal(mm, ref)
        np.testing.assert_array_equal(r, x.view(np.int32) & 0x7fffffff)
        down = np.array([x[i + 1] if i % 32 < 31 else x[i] for i in range(64)], np.float32)
        np.testing.assert_array_equal(s, down + x[(np.arange(64) // 32) * 32])


PTXAS = "/usr/local/cuda/bin/ptxas"


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_dsl_examples_ptx_pass_ptxas(target, tmp_path):
    """The NVIDIA code of every DSL example is valid PTX for its architecture (ptxas, the test-time oracle)."""
    import os
    import subprocess
    if not os.path.exists(PTXAS):
        pytest.skip("no ptxas at " + PTXAS)
    for jk in (quickstart_gemm.matmul(200, 130, 70, 128, 128, 32), softmax.softmax(7, 300),
               rmsnorm.rmsnorm(9, 260), attention.flashattn(1, 2, 100, 64, True), gemv.gemv(77, 600)):
        p = tmp_path / "k.ptx"
        p.write_text(jk.kernel(target).ptx)
        r = subprocess.run([PTXAS, f"-arch={target}", str(p), "-o", os.devnull], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def _swizzle_order(panel, col, gx, gy):
    """TileLang's rasterization2DRow/Column<panel> over the launch order (x fastest): the logical blocks in turn."""
    a = gy if col else gx
    total = gx * gy
    out = []
    for idx in range(total):
        size = panel * a
        pi, off = idx // size, idx % size
        stride = panel if pi + 1 < -(-total // size) else (total - pi * size) // a
        u = off // stride
        u = a - 1 - u if pi & 1 else u
        v = off % stride + pi * panel
        out.append((v, u) if col else (u, v))
    return out


def swizzle_order_kernel(order, enable=True):
    @T.prim_func
    def order_ids(O: T.Tensor((5, 7), "int32"), S: T.Tensor((1,), "int32")):
        with T.Kernel(7, 5, threads=32) as (bx, by):
            T.use_swizzle(panel_size=2, order=order, enable=enable)
            for i in T.Parallel(1):
                O[by, bx] = S[0]
                S[0] = by * 1000 + bx
    return order_ids


@pytest.mark.parametrize("order,enable", [("row", True), ("column", True), ("row", False)])
def test_use_swizzle(order, enable):
    """T.use_swizzle becomes Tile IR's use_swizzle (nothing with enable=False); each block stores the id of the
    block that ran before it, so O shows the block order: TileLang's formula on the interpreter and the emulator."""
    f = swizzle_order_kernel(order, enable)
    ir = f.tile_ir
    want_stmt = {"row": "use_swizzle(2)\n", "column": "use_swizzle(2, order=col)\n"}[order]
    assert (want_stmt in ir) == enable and ("use_swizzle" in ir) == enable
    seq = _swizzle_order(2, order != "row", 7, 5) if enable else [(x, y) for y in range(5) for x in range(7)]
    want = np.zeros((5, 7), np.int32)
    prev = -1
    for bx, by in seq:
        want[by, bx] = prev
        prev = by * 1000 + bx
    for target, backend in [("gfx942", "interp"), ("gfx942", "emu"), ("gfx1100", "emu")]:
        o = np.full((5, 7), -7, np.int32)
        s = np.array([-1], np.int32)
        tileasm.compile(f, target=target)(o, s, backend=backend)
        np.testing.assert_array_equal(o, want, err_msg=f"{target} {backend}")
        assert s[0] == prev
