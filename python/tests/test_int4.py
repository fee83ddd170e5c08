"""Running kernels with i4/u4 tensors from NumPy: pack_int4 bytes in, dequantised values out vs NumPy."""
import numpy as np
import pytest
import tileasm

DEQUANT = """kernel dequant(W: i4[N], S: f32[N], O: f32[N]) grid(1) threads(64) {
  parallel (i) in (64) {
    O[i] = f32(W[i]) * S[i] + f32(i32(W[i]) >> 1)
  }
}
"""


def test_pack_unpack_roundtrip():
    v = np.arange(-8, 8, dtype=np.int8).repeat(3)[:45]
    p = tileasm.pack_int4(v)
    assert p.dtype == np.uint8 and p.size == tileasm.int4_storage_bytes(45) == 24
    assert p[0] == 0x88 and p[23] == 0
    assert np.array_equal(tileasm.unpack_int4(p, v.shape), v)
    assert np.array_equal(tileasm.unpack_int4(tileasm.pack_int4(v & 15), v.shape, signed=False), v & 15)


@pytest.mark.parametrize("target", ["gfx942"])
def test_dequant_int4_runs(target):
    rng = np.random.default_rng(1)
    w = rng.integers(-8, 8, 64).astype(np.int8)
    s = rng.standard_normal(64).astype(np.float32)
    o = np.zeros(64, np.float32)
    k = tileasm.compile(DEQUANT, target=target, defines={"N": 64})
    k(tileasm.pack_int4(w), s, o)
    ref = w.astype(np.float32) * s + (w.astype(np.int32) >> 1).astype(np.float32)
    np.testing.assert_allclose(o, ref, rtol=1e-6, atol=1e-6)
    with pytest.raises(tileasm.ArgumentError, match="takes 32 bytes"):
        k(np.zeros(16, np.uint8), s, o)
