"""Every error path of the package: bad sources, bad arguments, wrong backends, runtime errors, no library."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tileasm
from conftest import ROOT

VADD = os.path.join(ROOT, "examples", "vector_add.tile")
GEMM = os.path.join(ROOT, "examples", "gemm.tile")


def test_bad_source_has_positions(tmp_path):
    p = tmp_path / "bad.tile"
    p.write_text("kernel k(A: f16[N], s: f32) grid(1) threads(32) {\n  A_f = fragment f16[32]\n"
                 "  parallel (i) in (32) { A_f[i] = A_f[i] + s }\n}\n")
    with pytest.raises(tileasm.CompileError) as e:
        tileasm.compile(p, target="gfx942")
    assert e.value.errors[0][:3] == (str(p), 3, 42)
    assert "different types (f16 and f32)" in e.value.errors[0][3]
    assert "^" in str(e.value)
    with pytest.raises(tileasm.CompileError, match=r"<string>:1:\d+: error"):
        tileasm.compile("kernel k( {", target="sm_80")


def test_unknown_target_and_missing_file():
    with pytest.raises(tileasm.CompileError, match="unknown target 'gfx000'"):
        tileasm.compile(VADD, target="gfx000")
    with pytest.raises(tileasm.CompileError, match="cannot read"):
        tileasm.compile("/nonexistent/x.tile", target="gfx942")
    with pytest.raises(TypeError):
        tileasm.compile(VADD, target=None)
    with pytest.raises(ValueError, match="no kernel named 'nope'"):
        tileasm.compile(VADD, target="gfx942", kernel="nope")


def arrays(n=64):
    return [np.zeros(n, np.float32) for _ in range(3)]


def test_argument_errors():
    k = tileasm.compile(VADD, target="gfx942")
    a, b, c = arrays()
    cases = [
        ((a, b), {}, "missing argument C"),
        ((a, b, c, c), {}, "takes 3 arguments"),
        ((a, b), {"C": c, "D": c}, "has no argument 'D'"),
        ((a, b, c), {"A": a}, "'A' given twice"),
        ((a.astype(np.float16), b, c), {}, "'A' has dtype f16; the kernel expects f32"),
        ((a.reshape(8, 8), b, c), {}, "'A' has 2 dimensions"),
        ((a, np.zeros(65, np.float32), c), {}, "'B' dimension 0 is 65, but N = 64 from argument 'A' dimension 0"),
        ((a, b, c), {"N": 10}, "'A' dimension 0 is 64, but N = 10 from the keyword N="),
        ((np.zeros(128, np.float32)[::2], b, c), {}, "not C-contiguous"),
        ((a, b, [0.0] * 64), {}, "'C' is a tensor f32[N]; got list"),
    ]
    for args, kw, msg in cases:
        with pytest.raises(tileasm.ArgumentError, match=msg.replace("(", r"\(").replace("[", r"\[")):
            k(*args, **kw)
    ro = np.zeros(64, np.float32)
    ro.flags.writeable = False
    with pytest.raises(tileasm.ArgumentError, match="read-only"):
        k(ro, b, c)
    r = tileasm.compile(os.path.join(ROOT, "examples", "rmsnorm.tile"), target="gfx942")
    x = np.zeros((4, 8), np.float16)
    with pytest.raises(tileasm.ArgumentError, match="'eps' is a scalar f32; got ndarray"):
        r(x, np.zeros(8, np.float16), x, x)


def test_backend_errors():
    a, b, c = arrays()
    nv = tileasm.compile(VADD, target="sm_90a")
    with pytest.raises(tileasm.ArgumentError, match='compiled for sm_90a and was given host arrays.*backend="interp"'):
        nv(a, b, c)
    with pytest.raises(tileasm.ArgumentError, match="'emu' emulates AMD GPUs"):
        nv(a, b, c, backend="emu")
    with pytest.raises(tileasm.ArgumentError, match="'cuda' runs on GPU memory"):
        nv(a, b, c, backend="cuda")
    amd = tileasm.compile(VADD, target="gfx942")
    with pytest.raises(tileasm.ArgumentError, match="unknown backend 'opencl'"):
        amd(a, b, c, backend="opencl")
    with pytest.raises(tileasm.ArgumentError, match="'cuda' runs PTX"):
        amd(a, b, c, backend="cuda")


def test_runtime_error_is_a_launch_error():
    # Stores past the end of a global tensor are runtime errors in the interpreter.
    src = "kernel k(A: f32[N]) grid(1) threads(32) {\n  parallel (i) in (32) { A[i + N] = 1.0 }\n}\n"
    k = tileasm.compile(src, target="gfx942")
    with pytest.raises(tileasm.LaunchError, match=r"<string>:2:\d+: error: .*out of"):
        k(np.zeros(4, np.float32), backend="interp")


def test_gpu_backend_without_driver():
    from tileasm import core
    for be in ("cuda", "hsa"):
        try:
            core._Runner(be, 0)
        except tileasm.LaunchError as e:
            assert "error" in str(e)
        # (with a driver and a device present, opening succeeds)


def test_missing_library():
    code = ("import tileasm\ntry:\n    tileasm.targets()\nexcept tileasm.LibraryError as e:\n"
            "    print('LibraryError:', e)\n")
    env = dict(os.environ, TILEASM_LIB="/nonexistent/libtileasm.so")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd="/")
    assert "LibraryError: cannot load libtileasm from /nonexistent/libtileasm.so" in out.stdout, out.stderr
