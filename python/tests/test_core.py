"""tileasm.compile, Kernel metadata and launching on the interpreter and the emulator, against NumPy."""
import glob
import os

import numpy as np
import pytest

import tileasm
from conftest import ROOT

EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.tile")))
TARGETS = ["gfx1100", "gfx90a", "gfx942", "sm_80", "sm_90a"]
rng = np.random.default_rng(7)


def ex(name):
    return os.path.join(ROOT, "examples", name + ".tile")


def test_targets_and_version():
    assert tileasm.targets() == TARGETS
    assert tileasm.version() == "0.1.0"


@pytest.mark.parametrize("target", TARGETS)
def test_compile_every_example(target):
    assert len(EXAMPLES) >= 8
    for path in EXAMPLES:
        k = tileasm.compile(path, target=target)
        assert k.target == target and k.threads > 0 and k.args, path
        assert k.format == ("ptx" if target.startswith("sm") else "hsaco")
        assert "frontend" in k.pass_times and all(v >= 0 for v in k.pass_times.values())
        if target.startswith("gfx"):
            assert k.registers["vgprs"] > 0 and k.occupancy > 0
            assert k.asm.startswith(f"; kernel {k.name}: sgprs ") and "s_endpgm" in k.asm
            assert k.code[:4] == b"\x7fELF"
            with pytest.raises(AttributeError, match="use .asm"):
                k.ptx
        else:
            assert f".entry {k.name}" in k.ptx and k.asm == k.ptx
            assert list(k.pass_times) == ["frontend", "ptx"]


def test_metadata_of_gemm():
    k = tileasm.compile(ex("gemm"), target="gfx942")
    assert [repr(a) for a in k.args] == ["A: f16[M, K]", "B: f16[K, N]", "C: f16[M, N]", "M: i32 (symbol)",
                                         "K: i32 (symbol)", "N: i32 (symbol)"]
    assert k.shared_bytes >= (128 * 32 + 32 * 128) * 2  # A_s and B_s at least
    assert k.grid(M=300, N=129, K=5) == (2, 3, 1)
    assert k.args[1].shape == ("K", "N")
    kd = tileasm.compile(ex("gemm"), target="sm_80", defines={"M": 256, "K": 64})
    assert [a.name for a in kd.args] == ["A", "B", "C", "N"]
    assert kd.args[0].shape == (256, 64) and kd.args[1].shape == (64, "N")
    assert kd.grid(N=1000) == (8, 2, 1)
    assert kd.shared_bytes > 0


def test_cache_is_on():
    src = open(ex("vector_add")).read()
    h0, m0 = tileasm.cache_stats()
    tileasm.compile(src, target="gfx90a")
    tileasm.compile(src, target="gfx90a")
    h1, m1 = tileasm.cache_stats()
    assert h1 >= h0 + 1 and m1 <= m0 + 1


def f16(*shape):
    return rng.standard_normal(shape).astype(np.float16)


@pytest.mark.parametrize("target,backend", [("gfx942", None), ("gfx1100", "emu"), ("gfx90a", "interp"),
                                            ("sm_90a", "interp")])
def test_vector_add(target, backend):
    k = tileasm.compile(ex("vector_add"), target=target)
    n = 3000 + 7
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.full(n, np.nan, np.float32)
    k(a, b, c, backend=backend)
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("target,backend", [("gfx942", "emu"), ("gfx1100", "emu"), ("sm_80", "interp")])
def test_gemm_ragged(target, backend):
    k = tileasm.compile(ex("gemm"), target=target)
    a, b = f16(200, 70), f16(70, 130)
    c = np.zeros((200, 130), np.float16)
    k(a, b, c, backend=backend)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    assert np.abs(c.astype(np.float32) - ref).max() < 0.05


@pytest.mark.parametrize("backend", ["emu", "interp"])
def test_softmax_and_rmsnorm(backend):
    x = f16(7, 300)
    y = np.zeros_like(x)
    tileasm.compile(ex("softmax"), target="gfx90a")(x, y, backend=backend)
    e = np.exp(x.astype(np.float32) - x.astype(np.float32).max(1, keepdims=True))
    assert np.abs(y - e / e.sum(1, keepdims=True)).max() < 2e-3
    w = f16(300)
    k = tileasm.compile(ex("rmsnorm"), target="gfx942")
    k(x, w, y, eps=1e-5, backend=backend)  # the scalar by keyword
    xf = x.astype(np.float32)
    ref = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-5) * w.astype(np.float32)
    assert np.abs(y.astype(np.float32) - ref).max() < 2e-2


def test_dlpack_input():
    class Wrapped:  # a foreign tensor that only speaks DLPack
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    if not hasattr(np, "from_dlpack"):
        pytest.skip("this NumPy has no from_dlpack")
    k = tileasm.compile(ex("vector_add"), target="gfx942")
    a, b = rng.random(100, dtype=np.float32), rng.random(100, dtype=np.float32)
    c = np.zeros(100, np.float32)
    k(Wrapped(a), Wrapped(b), c)
    np.testing.assert_array_equal(c, a + b)


def test_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    k = tileasm.compile(ex("vector_add"), target="gfx942")
    a, b = torch.rand(777), torch.rand(777)
    c = torch.zeros(777)
    k(a, b, c)
    assert torch.equal(c, a + b)


def test_launch_from_threads():
    import threading
    k = tileasm.compile(ex("vector_add"), target="gfx942")
    errors = []

    def work(seed, backend):
        r = np.random.default_rng(seed)
        for _ in range(3):
            n = int(r.integers(1, 3000))
            a, b = r.random(n, dtype=np.float32), r.random(n, dtype=np.float32)
            c = np.zeros(n, np.float32)
            k(a, b, c, backend=backend)
            if not np.array_equal(c, a + b):
                errors.append((seed, backend, n))

    ts = [threading.Thread(target=work, args=(s, ("emu", "interp")[s % 2])) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
