"""tileasm.language — TileLang's kernel vocabulary (`import tileasm.language as T`).

Kernel bodies are never executed: tileasm.frontend reads the function's source and translates it to Tile IR.
The objects here are what the translator recognises (by identity); calling the tile primitives from ordinary
Python raises an error that says so.  Only dtypes, T.Tensor, shape symbols, T.ceildiv and T.prim_func do
something at Python level.  docs/python.md has the table of what is accepted.
"""
import builtins
import math

__all__ = []  # `from tileasm.language import *` is not the TileLang idiom; use `import tileasm.language as T`


# ---- dtypes ----------------------------------------------------------------------------------------------

class dtype(str):
    """A dtype name (a str, so T.float16 == "float16"); T.float32(x) in a kernel is a cast."""

    def __call__(self, *a, **k):
        raise RuntimeError(f"T.{self}(...) is a cast and can only be used inside a tileasm kernel")


# TileLang / TVM dtype names -> Tile IR dtype names.
IR_DTYPES = {
    "bool": "bool", "int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32", "int": "i32", "uint32": "u32",
    "int64": "i64", "float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
    "float64": "f64", "double": "f64", "float8_e4m3": "fp8e4m3", "float8_e4m3fn": "fp8e4m3", "e4m3_float8": "fp8e4m3",
    "float8_e5m2": "fp8e5m2", "e5m2_float8": "fp8e5m2", "float8_e4m3fnuz": "fp8e4m3fnuz",
    "float8_e5m2fnuz": "fp8e5m2fnuz", "int4": "i4", "uint4": "u4",
}
# Tile IR names are accepted too.
for _v in list(IR_DTYPES.values()):
    IR_DTYPES.setdefault(_v, _v)

bool_ = dtype("bool")
int8, uint8, int16, int32, uint32, int64 = (dtype(n) for n in ("int8", "uint8", "int16", "int32", "uint32", "int64"))
int4, uint4 = dtype("int4"), dtype("uint4")
float16, bfloat16, float32, float64 = (dtype(n) for n in ("float16", "bfloat16", "float32", "float64"))
float8_e4m3, float8_e5m2 = dtype("float8_e4m3"), dtype("float8_e5m2")
float8_e4m3fn, float8_e4m3fnuz, float8_e5m2fnuz = dtype("float8_e4m3fn"), dtype("float8_e4m3fnuz"), dtype(
    "float8_e5m2fnuz")
half, double = dtype("half"), dtype("double")
globals()["bool"] = bool_  # T.bool


def ir_dtype(d):
    """The Tile IR name of a dtype given as a TileLang name, a T.<dtype>, a torch/NumPy dtype or a Tile IR name."""
    s = str(d).replace("torch.", "")
    if s in IR_DTYPES:
        return IR_DTYPES[s]
    raise ValueError(f"unknown dtype {d!r} (e.g. float16, bfloat16, float32, int8, float8_e4m3)")


# ---- tensors and shape symbols ---------------------------------------------------------------------------

class Symbol:
    """A shape dimension known only at run time (TileLang's T.dynamic / T.symbolic): a Tile IR shape symbol
    bound from the tensors' shapes at each launch."""

    def __init__(self, name, dtype="int32"):
        self.name = name

    def __repr__(self):
        return f"T.dynamic({self.name!r})"


def dynamic(name, dtype="int32"):
    return Symbol(name, dtype)


symbolic = dynamic


class _Dyn:
    def __getitem__(self, name):
        return Symbol(name)


dyn = _Dyn()


class TensorType:
    """T.Tensor(shape, dtype): a kernel parameter's type annotation."""

    def __init__(self, shape, dtype="float32"):
        if isinstance(shape, (builtins.int, Symbol)):
            shape = (shape,)
        self.shape = tuple(shape)
        self.dtype = dtype
        for d in self.shape:
            if not isinstance(d, (builtins.int, Symbol)) or isinstance(d, builtins.bool):
                raise TypeError(f"T.Tensor shape entries are ints or T.dynamic symbols, not {d!r}")

    def __repr__(self):
        return f"T.Tensor({self.shape}, {self.dtype})"


def Tensor(shape, dtype="float32"):
    return TensorType(shape, dtype)


Buffer = Tensor


def ceildiv(a, b):
    """Ceiling division (on Python ints here; in kernels it becomes Tile IR's ceildiv)."""
    if isinstance(a, builtins.int) and isinstance(b, builtins.int):
        return -(-a // b)
    raise RuntimeError("T.ceildiv on non-constant values can only be used inside a tileasm kernel")


# ---- prim_func -------------------------------------------------------------------------------------------

def prim_func(fn=None, **kw):
    """Marks a kernel function (TileLang's @T.prim_func); the body is translated, never run."""
    from .jit import PrimFunc
    if fn is None:
        return lambda f: PrimFunc(f)
    return PrimFunc(fn)


# ---- kernel-body vocabulary (recognised by the translator) -----------------------------------------------

def _kernel_only(name):
    def f(*a, **k):
        raise RuntimeError(f"T.{name} can only be used inside a tileasm kernel (@T.prim_func or @tileasm.jit); "
                           f"its body is translated to Tile IR, not run")
    f.__name__ = name
    f.__qualname__ = name
    f._tileasm_prim = name
    return f


_PRIMS = ("Kernel", "alloc_shared", "alloc_fragment", "alloc_local", "alloc_var", "copy", "gemm", "clear", "fill",
          "reduce_max", "reduce_min", "reduce_sum", "reduce_abssum", "reduce_absmax", "cumsum", "atomic_add",
          "Parallel", "Pipelined", "serial", "unroll", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "abs",
          "max", "min", "if_then_else", "floor", "ceil", "round", "sin", "cos", "erf", "sigmoid", "pow", "fmod",
          "clamp", "infinity", "cast", "use_swizzle", "annotate_layout", "sync_threads", "atomic_max", "atomic_min",
          "shfl_xor", "shfl_down", "shfl_up", "shfl_sync", "shfl_idx", "reinterpret",
          "get_thread_binding", "vectorized", "print", "macro", "alloc_barrier", "reshape", "view", "transpose")
for _n in _PRIMS:
    globals()[_n] = _kernel_only(_n)

pi = math.pi


class GemmWarpPolicy:
    """Accepted for TileLang compatibility; tileasm picks the warp layout of each gemm itself."""
    Square = "Square"
    FullRow = "FullRow"
    FullCol = "FullCol"
