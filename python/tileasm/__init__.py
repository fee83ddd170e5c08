"""tileasm: a Tile IR compiler for AMD (gfx1100, gfx90a, gfx942) and NVIDIA (sm_80, sm_90a) GPUs.

    import tileasm
    k = tileasm.compile("examples/gemm.tile", target="gfx942")   # Tile IR text or a .tile path
    k(A, B, C)                                                    # NumPy arrays: the AMD emulator

    import tileasm.language as T                                  # TileLang-style kernels
    @tileasm.jit
    def matmul(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float"): ...

docs/python.md describes the package.
"""
from ._lib import LibraryError, TileasmError
from .core import (ArgumentError, CompileError, Kernel, LaunchError, cache_stats, compile, targets, version,
                   int4_storage_bytes, pack_int4, unpack_int4)
from .jit import jit, JITKernel
from .autotune import autotune
from . import language

__version__ = "0.1.0"
__all__ = ["compile", "Kernel", "CompileError", "ArgumentError", "LaunchError", "LibraryError", "TileasmError",
           "targets", "cache_stats", "version", "pack_int4", "unpack_int4", "int4_storage_bytes", "jit", "JITKernel", "autotune", "language"]
