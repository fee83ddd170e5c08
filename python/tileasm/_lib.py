"""ctypes declarations of include/tileasm.h (the only native code the package uses).

The library is the libtileasm.so installed inside this package by `pip install .`;
TILEASM_LIB=PATH loads another build of it (for development).
"""
import ctypes
import os

from ctypes import (POINTER, Structure, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint32, c_uint64,
                    c_void_p)


class TileasmError(Exception):
    """Base class of every error tileasm raises."""


class LibraryError(TileasmError):
    """libtileasm could not be loaded."""


class ArgInfo(Structure):
    _fields_ = [("name", c_char_p), ("kind", c_int), ("dtype", c_int), ("offset", c_uint32), ("size", c_uint32),
                ("rank", c_int), ("dims", c_int64 * 4)]


class KernelInfo(Structure):
    _fields_ = [("name", c_char_p), ("threads", c_int), ("shared_bytes", c_int64), ("scratch_bytes", c_int64),
                ("sgprs", c_int), ("vgprs", c_int), ("agprs", c_int), ("waves_per_simd", c_int),
                ("kernarg_size", c_uint32), ("nargs", c_int), ("args", POINTER(ArgInfo))]


class Value(Structure):
    _fields_ = [("ptr", c_void_p), ("bytes", c_size_t), ("i", c_int64), ("f", c_double)]


ARG_TENSOR, ARG_SCALAR, ARG_SYMBOL = 0, 1, 2

# ta_dtype values and their Tile IR names.
DTYPES = {1: "bool", 2: "i8", 3: "u8", 4: "i16", 5: "i32", 6: "u32", 7: "i64", 8: "f16", 9: "bf16", 10: "f32",
          11: "f64", 12: "fp8e4m3", 13: "fp8e5m2", 14: "fp8e4m3fnuz", 15: "fp8e5m2fnuz", 16: "i4", 17: "u4"}

_P = c_void_p
_SIGS = {
    "ta_version": (c_char_p, []),
    "ta_status_string": (c_char_p, [c_int]),
    "ta_target_name": (c_char_p, [c_int]),
    "ta_ctx_create": (_P, []),
    "ta_ctx_destroy": (None, [_P]),
    "ta_ctx_diagnostics": (c_char_p, [_P]),
    "ta_ctx_clear_diagnostics": (None, [_P]),
    "ta_ctx_define": (c_int, [_P, c_char_p, c_int64]),
    "ta_ctx_set_cache": (c_int, [_P, c_size_t]),
    "ta_ctx_cache_stats": (None, [_P, POINTER(c_uint64), POINTER(c_uint64)]),
    "ta_parse": (c_int, [_P, c_char_p, c_char_p, c_size_t, POINTER(_P)]),
    "ta_module_destroy": (None, [_P]),
    "ta_module_print": (c_void_p, [_P]),
    "ta_free": (None, [c_void_p]),
    "ta_compile_source": (c_int, [_P, c_char_p, c_char_p, c_size_t, c_char_p, POINTER(_P)]),
    "ta_binary_target": (c_char_p, [_P]),
    "ta_binary_format": (c_char_p, [_P]),
    "ta_binary_data": (c_void_p, [_P, POINTER(c_size_t)]),
    "ta_binary_kernel_count": (c_int, [_P]),
    "ta_binary_kernel": (POINTER(KernelInfo), [_P, c_int]),
    "ta_binary_grid": (c_int, [_P, c_int, POINTER(c_int64), POINTER(c_uint32)]),
    "ta_binary_listing": (c_void_p, [_P, _P]),
    "ta_binary_pass_times": (c_int, [_P, POINTER(c_char_p), POINTER(c_double), c_int]),
    "ta_binary_retain": (None, [_P]),
    "ta_binary_release": (None, [_P]),
    "ta_runner_open": (c_int, [_P, c_char_p, c_int, POINTER(_P)]),
    "ta_runner_close": (None, [_P]),
    "ta_launch": (c_int, [_P, _P, _P, c_int, POINTER(Value), c_void_p]),
    "ta_runner_sync": (c_int, [_P, _P]),
}

_lib = None


def lib():
    """The loaded libtileasm (loaded on first use)."""
    global _lib
    if _lib is None:
        path = os.environ.get("TILEASM_LIB") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "libtileasm.so")
        try:
            dll = ctypes.CDLL(path)
        except OSError as e:
            raise LibraryError(f"cannot load libtileasm from {path}: {e} (reinstall the package with `pip install .`"
                               f", or point TILEASM_LIB at a built libtileasm.so)") from None
        for name, (res, args) in _SIGS.items():
            try:
                f = getattr(dll, name)
            except AttributeError:
                raise LibraryError(f"{path} has no function {name}: it is an older libtileasm than this "
                                   f"package") from None
            f.restype = res
            f.argtypes = args
        _lib = dll
    return _lib


def take_string(p):
    """A malloc'd char* from the library as str (freed)."""
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib().ta_free(p)
