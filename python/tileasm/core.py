"""tileasm.compile, Kernel and launching: a thin layer over libtileasm (include/tileasm.h).

Compiling, the compile cache, kernel metadata, the grid, the interpreter, the emulator and the GPU drivers
are all the library's; this module only converts Python values (NumPy arrays, torch tensors, DLPack
capsules, numbers) into the C API's arguments and checks them against the kernel's argument table.
"""
import ctypes
import os
import re
import sys
import threading

from . import _lib
from ._lib import ARG_SCALAR, ARG_SYMBOL, ARG_TENSOR, DTYPES, TileasmError

__all__ = ["compile", "Kernel", "CompileError", "ArgumentError", "LaunchError", "targets", "cache_stats",
           "version"]

AMD_TARGETS = ("gfx1100", "gfx90a", "gfx942")
NVIDIA_TARGETS = ("sm_80", "sm_90a")
BACKENDS = ("interp", "emu", "cuda", "hsa")
CACHE_ENTRIES = 256

_DIAG_RE = re.compile(r"^(.*?):(\d+):(\d+): (error|warning|note): (.*)$")


class CompileError(TileasmError):
    """Tile IR (or a Python kernel translated to it) that does not compile.

    str(e) is the diagnostics text ("file:line:col: error: message", the source line and a caret);
    e.errors lists (file, line, col, message) for each error."""

    def __init__(self, diagnostics):
        super().__init__(diagnostics.rstrip("\n"))
        self.diagnostics = diagnostics
        self.errors = []
        for line in diagnostics.splitlines():
            m = _DIAG_RE.match(line)
            if m and m.group(4) == "error":
                self.errors.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(5)))


class ArgumentError(TileasmError, ValueError):
    """Launch arguments that do not match the kernel (count, dtype, shape, layout, device)."""


class LaunchError(TileasmError, RuntimeError):
    """The backend failed: no driver or device, or a runtime error while running the kernel."""


def version():
    return _lib.lib().ta_version().decode()


def targets():
    """The target names compile() accepts."""
    out, i, lib = [], 0, _lib.lib()
    while True:
        n = lib.ta_target_name(i)
        if not n:
            return out
        out.append(n.decode())
        i += 1


class _Ctx:
    """One ta_ctx (used under its lock: a context is for one thread at a time)."""

    def __init__(self, defines):
        lib = _lib.lib()
        self.lock = threading.Lock()
        self.ptr = lib.ta_ctx_create()
        if not self.ptr:
            raise MemoryError("ta_ctx_create")
        for name, value in defines:
            if lib.ta_ctx_define(self.ptr, name.encode(), int(value)) != 0:
                raise ValueError(f"bad define {name}={value}")
        lib.ta_ctx_set_cache(self.ptr, CACHE_ENTRIES)

    def diagnostics(self):
        lib = _lib.lib()
        text = lib.ta_ctx_diagnostics(self.ptr).decode("utf-8", "replace")
        lib.ta_ctx_clear_diagnostics(self.ptr)
        return text

    def __del__(self):
        if getattr(self, "ptr", None) and _lib._lib is not None:
            _lib._lib.ta_ctx_destroy(self.ptr)


# -D values are fixed per context, so there is one context (and one compile cache) per set of defines.
_ctxs = {}
_ctxs_lock = threading.Lock()


def _ctx(defines):
    key = tuple(sorted((str(k), int(v)) for k, v in (defines or {}).items()))
    with _ctxs_lock:
        c = _ctxs.get(key)
        if c is None:
            if len(_ctxs) >= 64:
                _ctxs.pop(next(iter(_ctxs)))
            c = _ctxs[key] = _Ctx(key)
        return c


def cache_stats(defines=None):
    """(hits, misses) of the compile cache used for these defines."""
    c = _ctx(defines)
    h, m = ctypes.c_uint64(), ctypes.c_uint64()
    _lib.lib().ta_ctx_cache_stats(c.ptr, ctypes.byref(h), ctypes.byref(m))
    return h.value, m.value


def _read_source(source):
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
    elif isinstance(source, str) and "\n" not in source and "{" not in source:
        path = source
    else:
        return "<string>", source
    try:
        with open(path, encoding="utf-8") as f:
            return path, f.read()
    except OSError as e:
        raise CompileError(f"{path}: error: cannot read: {e.strerror}\n") from None


def compile(source, target=None, defines=None, kernel=None, filename=None, line_map=None, out_idx=None):
    """Compiles Tile IR text, a path to a .tile file, or a tileasm.language prim_func for target.

    defines: {"M": 4096, ...} specialises shape symbols (like -D).  kernel: the name of the kernel to
    return when the source has several (default: the first).  Raises CompileError.  A prim_func with
    out_idx (TileLang's tilelang.compile(func, out_idx=...)) gives a JITKernel that allocates its outputs."""
    if hasattr(source, "tile_ir"):  # a prim_func from tileasm.language
        if out_idx is not None or target in (None, "cuda", "hip", "auto"):
            from .jit import JITKernel
            return JITKernel(source, target=target, out_idx=out_idx, defines=defines)
        return source.compile(target=target, defines=defines)
    if not isinstance(target, str):
        raise TypeError(f"target must be a string, one of {', '.join(targets())}")
    fname, text = _read_source(source)
    fname = filename or fname
    c = _ctx(defines)
    lib = _lib.lib()
    data = text.encode("utf-8")
    out = ctypes.c_void_p()
    with c.lock:
        st = lib.ta_compile_source(c.ptr, fname.encode(), data, len(data), target.encode(), ctypes.byref(out))
        diags = c.diagnostics()
    if st != 0:
        if line_map:
            diags = line_map(diags)
        if not diags:
            diags = f"{fname}: error: {lib.ta_status_string(st).decode()}\n"
        raise CompileError(diags)
    return Kernel(out.value, kernel, c)


class Arg:
    """One kernel argument: name, kind ("tensor", "scalar", "symbol"), dtype (a Tile IR dtype name) and, for
    tensors, shape: a tuple of ints and symbol names."""
    __slots__ = ("name", "kind", "dtype", "shape", "index")

    def __init__(self, name, kind, dtype, shape, index):
        self.name, self.kind, self.dtype, self.shape, self.index = name, kind, dtype, shape, index

    def __repr__(self):
        if self.kind == "tensor":
            return f"{self.name}: {self.dtype}[{', '.join(str(d) for d in self.shape)}]"
        return f"{self.name}: {self.dtype} ({self.kind})"


class Kernel:
    """A compiled kernel: metadata, code, and a launcher (call it with the arguments)."""

    def __init__(self, binary, kernel, ctx):
        lib = _lib.lib()
        self._bin = binary
        self._ctx = ctx
        n = lib.ta_binary_kernel_count(binary)
        index = 0
        if kernel is not None:
            names = [lib.ta_binary_kernel(binary, i).contents.name.decode() for i in range(n)]
            if kernel not in names:
                lib.ta_binary_release(binary)
                self._bin = None
                raise ValueError(f"no kernel named {kernel!r} (the source has {', '.join(names)})")
            index = names.index(kernel)
        self.index = index
        ki = lib.ta_binary_kernel(binary, index).contents
        self.name = ki.name.decode()
        self.target = lib.ta_binary_target(binary).decode()
        self.format = lib.ta_binary_format(binary).decode()
        self.threads = ki.threads
        self.shared_bytes = ki.shared_bytes
        self.scratch_bytes = ki.scratch_bytes
        self.registers = {"sgprs": ki.sgprs, "vgprs": ki.vgprs, "agprs": ki.agprs}
        self.occupancy = ki.waves_per_simd  # waves per SIMD (AMD); 0 on NVIDIA (ptxas allocates)
        args = []
        for i in range(ki.nargs):
            a = ki.args[i]
            shape = ()
            if a.kind == ARG_TENSOR:
                shape = tuple(int(d) if d >= 0 else -1 - int(d) for d in a.dims[:a.rank])
            kind = {ARG_TENSOR: "tensor", ARG_SCALAR: "scalar", ARG_SYMBOL: "symbol"}[a.kind]
            args.append([a.name.decode(), kind, DTYPES.get(a.dtype, "?"), a, shape])
        # Symbol dimensions name the symbol argument.
        self.args = []
        for i, (name, kind, dt, a, shape) in enumerate(args):
            if kind == "tensor":
                shape = tuple(d if a.dims[j] >= 0 else args[d][0] for j, d in enumerate(shape))
            self.args.append(Arg(name, kind, dt, shape, i))
        self._raw_dims = [tuple(int(d) for d in a.dims[:a.rank]) for (_, _, _, a, _) in args]
        self.params = [a for a in self.args if a.kind != "symbol"]
        self.symbols = [a for a in self.args if a.kind == "symbol"]
        self.is_amd = self.target.split(":")[0] in AMD_TARGETS

    def __del__(self):
        if getattr(self, "_bin", None) and _lib._lib is not None:
            _lib._lib.ta_binary_release(self._bin)
            self._bin = None

    def __repr__(self):
        return (f"<tileasm.Kernel {self.name} for {self.target}: ({', '.join(map(repr, self.args))}), "
                f"{self.threads} threads, {self.shared_bytes} bytes shared>")

    # ---- metadata ----------------------------------------------------------------------------------------
    @property
    def code(self):
        """The code object (AMD) or PTX text (NVIDIA) as bytes."""
        n = ctypes.c_size_t()
        p = _lib.lib().ta_binary_data(self._bin, ctypes.byref(n))
        return ctypes.string_at(p, n.value)

    @property
    def asm(self):
        """The listing: AMD assembly with encodings and a resource summary, or the PTX."""
        with self._ctx.lock:
            s = _lib.take_string(_lib.lib().ta_binary_listing(self._ctx.ptr, self._bin))
            d = self._ctx.diagnostics()
        if s is None:
            raise TileasmError(d or "no listing")
        return s

    @property
    def ptx(self):
        if self.format != "ptx":
            raise AttributeError(f"kernel {self.name} is compiled for {self.target} (an HSA code object): "
                                 f"use .asm for its listing")
        return self.code.decode()

    @property
    def pass_times(self):
        """{pass name: milliseconds} of the compile that made this binary."""
        names = (ctypes.c_char_p * 16)()
        ms = (ctypes.c_double * 16)()
        n = _lib.lib().ta_binary_pass_times(self._bin, names, ms, 16)
        return {names[i].decode(): ms[i] for i in range(n)}

    def grid(self, **symbols):
        """The launch grid (gx, gy, gz) for the given shape symbol values."""
        vals = (ctypes.c_int64 * (len(self.args) + 1))()
        for a in self.symbols:
            if a.name not in symbols:
                raise ArgumentError(f"kernel {self.name}: grid() needs a value for shape symbol {a.name}")
            vals[a.index] = int(symbols[a.name])
        g = (ctypes.c_uint32 * 3)()
        if _lib.lib().ta_binary_grid(self._bin, self.index, vals, g) != 0:
            raise ArgumentError(f"kernel {self.name}: cannot evaluate the grid for {symbols}")
        return (g[0], g[1], g[2])

    # ---- launching ---------------------------------------------------------------------------------------
    def __call__(self, *args, backend=None, stream=None, sync=False, **kwargs):
        """Runs the kernel.  Positional arguments are the kernel's parameters in order (tensors and scalars);
        keywords name parameters or shape symbols.  See docs/python.md for backends and streams."""
        plan = _bind(self, args, kwargs)
        be = _choose_backend(self, plan, backend)
        vals = (_lib.Value * (len(self.args) + 1))()
        for i, a in enumerate(self.args):
            v = plan.values[i]
            if a.kind == "tensor":
                vals[i].ptr, vals[i].bytes = v.ptr, v.nbytes
            elif a.kind == "symbol" or not _is_float(a.dtype):
                vals[i].i = int(v)
            else:
                vals[i].f = float(v)
        device = plan.device_index if be == "cuda" else 0
        runner = _runner(be, device)
        s = None
        if be == "cuda":
            s = _cuda_stream(stream, plan)
        elif be == "hsa" and plan.torch_dev is not None:
            # ROCr dispatches on its own queue: finish torch's work on the inputs first.
            import torch
            torch.cuda.synchronize(plan.torch_dev)
        with runner.lock, self._ctx.lock:
            st = _lib.lib().ta_launch(self._ctx.ptr, runner.ptr, self._bin, self.index, vals, s)
            if st == 0 and sync:
                st = _lib.lib().ta_runner_sync(self._ctx.ptr, runner.ptr)
            d = self._ctx.diagnostics() if st != 0 else ""
        if st != 0:
            raise LaunchError(d.rstrip("\n") or f"launch failed: {_lib.lib().ta_status_string(st).decode()}")
        for t in plan.writeback:
            t()
        return None


def _is_float(dt):
    return dt.startswith("f") or dt == "bf16"


# ---- argument conversion ---------------------------------------------------------------------------------

class _Tensor:
    __slots__ = ("ptr", "nbytes", "shape", "dtype", "device", "torch_dev", "keep")

    def __init__(self, ptr, nbytes, shape, dtype, device, torch_dev=None, keep=None):
        self.ptr, self.nbytes, self.shape, self.dtype = ptr, nbytes, tuple(shape), dtype
        self.device, self.torch_dev, self.keep = device, torch_dev, keep


_NP_DTYPES = {"bool": "bool", "int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32", "uint32": "u32",
              "int64": "i64", "float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16",
              "float8_e4m3fn": "fp8e4m3", "float8_e5m2": "fp8e5m2", "float8_e4m3fnuz": "fp8e4m3fnuz",
              "float8_e5m2fnuz": "fp8e5m2fnuz"}
# NumPy has no bf16/fp8: their raw bits may come as same-sized unsigned integers.
_RAW_OK = {"bf16": "u16", "fp8e4m3": "u8", "fp8e5m2": "u8", "fp8e4m3fnuz": "u8", "fp8e5m2fnuz": "u8"}


def int4_storage_bytes(n):
    """Bytes an i4/u4 tensor of n elements takes: two a byte, rounded up to whole 32-bit words."""
    return (n + 7) // 8 * 4


def pack_int4(values):
    """Pack integers (-8..7 for i4, 0..15 for u4; only the low 4 bits are kept) into the uint8 array an i4/u4
    tensor argument takes: element i (row-major) in the low nibble of byte i // 2 when i is even, the high one when
    odd, padded with zero bytes to whole 32-bit words (docs/tile-ir.md)."""
    import numpy as np
    v = np.asarray(values).reshape(-1).astype(np.int64) & 0xF
    out = np.zeros(int4_storage_bytes(v.size), dtype=np.uint8)
    if v.size % 2:
        v = np.concatenate([v, np.zeros(1, dtype=np.int64)])
    out[:v.size // 2] = (v[0::2] | (v[1::2] << 4)).astype(np.uint8)
    return out


def unpack_int4(packed, shape, signed=True):
    """The elements of packed i4 (signed) or u4 bytes as an int8 array of the given shape."""
    import numpy as np
    b = np.asarray(packed, dtype=np.uint8).reshape(-1)
    n = int(np.prod(shape, dtype=np.int64))
    if b.size < (n + 1) // 2:
        raise ValueError(f"{b.size} bytes hold fewer than {n} 4-bit elements")
    v = np.empty(b.size * 2, dtype=np.int8)
    v[0::2], v[1::2] = b & 0xF, b >> 4
    v = v[:n]
    if signed:
        v = np.where(v >= 8, v - 16, v).astype(np.int8)
    return v.reshape(shape)


_np_dtype_cache = {}
_torch_dtype_cache = {}


def _torch_dtype_name(dt):
    return str(dt).replace("torch.", "")


def _tensor_of(x, argname, imported=False):
    mod = type(x).__module__
    if mod.startswith("torch"):
        import torch
        if not isinstance(x, torch.Tensor):
            raise ArgumentError(f"argument '{argname}': expected a tensor, got {type(x).__name__}")
        dt = _torch_dtype_cache.get(x.dtype)
        if dt is None:
            n = _torch_dtype_name(x.dtype)
            dt = _torch_dtype_cache[x.dtype] = _NP_DTYPES.get(n, "u16" if n == "uint16" else n)
        if not x.is_contiguous():
            raise ArgumentError(f"argument '{argname}' is not contiguous (strides {tuple(x.stride())}); "
                                f"tileasm tensors are dense row-major: pass .contiguous()")
        dev = x.device.type
        if dev not in ("cpu", "cuda"):
            raise ArgumentError(f"argument '{argname}' is on device '{x.device}'; tileasm runs CPU and CUDA/ROCm "
                                f"tensors")
        return _Tensor(x.data_ptr(), x.numel() * x.element_size(), x.shape, dt,
                       "host" if dev == "cpu" else "device", x.device if dev == "cuda" else None, x)
    if mod == "numpy":
        import numpy as np
        if not isinstance(x, np.ndarray):
            raise ArgumentError(f"argument '{argname}': expected an array, got {type(x).__name__}")
        if not x.flags.c_contiguous:
            raise ArgumentError(f"argument '{argname}' is not C-contiguous (strides {x.strides}); tileasm tensors "
                                f"are dense row-major: pass numpy.ascontiguousarray(...)")
        if not x.flags.writeable and not imported:  # DLPack imports are read-only views of writable memory
            raise ArgumentError(f"argument '{argname}' is a read-only array (the backends may write every "
                                f"tensor): pass a writable copy")
        dt = _np_dtype_cache.get(x.dtype)
        if dt is None:
            name = x.dtype.name
            dt = _np_dtype_cache[x.dtype] = _NP_DTYPES.get(name, "u16" if name == "uint16" else name)
        return _Tensor(x.__array_interface__["data"][0], x.nbytes, x.shape, dt, "host", None, x)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        devtype = x.__dlpack_device__()[0]
        if devtype == 1:  # kDLCPU
            import numpy as np
            return _tensor_of(np.from_dlpack(x), argname, imported=True)
        import torch.utils.dlpack
        return _tensor_of(torch.utils.dlpack.from_dlpack(x), argname)
    return None


class _Plan:
    __slots__ = ("values", "device", "device_index", "torch_dev", "writeback")


def _bind(k, args, kwargs):
    params = k.params
    if len(args) > len(params):
        raise ArgumentError(f"kernel {k.name} takes {len(params)} arguments ({', '.join(a.name for a in params)}), "
                            f"got {len(args)}")
    given = {}
    for a, v in zip(params, args):
        given[a.name] = v
    for name, v in kwargs.items():
        if name in given:
            raise ArgumentError(f"kernel {k.name}: argument '{name}' given twice")
        if not any(a.name == name for a in k.args):
            raise ArgumentError(f"kernel {k.name} has no argument '{name}' "
                                f"(it has {', '.join(a.name for a in k.args)})")
        given[name] = v
    missing = [a.name for a in params if a.name not in given]
    if missing:
        raise ArgumentError(f"kernel {k.name}: missing argument{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(missing)}")
    plan = _Plan()
    plan.values = [None] * len(k.args)
    plan.device = None
    plan.device_index = 0
    plan.torch_dev = None
    plan.writeback = []
    sym = {}  # symbol arg index -> (value, from)
    packed = []  # (arg, u8 tensor) for i4/u4 parameters given as packed bytes
    for a in k.args:
        if a.kind == "symbol" and a.name in given:
            sym[a.index] = (int(given[a.name]), f"the keyword {a.name}=")
    for a in params:
        v = given[a.name]
        if a.kind == "scalar":
            if _tensor_of(v, a.name) is not None or not isinstance(v, (int, float, bool)) and not hasattr(v, "__float__"):
                raise ArgumentError(f"argument '{a.name}' is a scalar {a.dtype}; got {type(v).__name__}")
            if not _is_float(a.dtype) and isinstance(v, float):
                raise ArgumentError(f"argument '{a.name}' is a scalar {a.dtype}; got the float {v}")
            plan.values[a.index] = v
            continue
        t = _tensor_of(v, a.name)
        if t is None:
            raise ArgumentError(f"argument '{a.name}' is a tensor {a.dtype}[{', '.join(map(str, a.shape))}]; got "
                                f"{type(v).__name__} (pass a NumPy array, a torch tensor or a DLPack tensor)")
        if a.dtype in ("i4", "u4") and t.dtype == "u8":
            # Packed nibbles (pack_int4): the byte count is checked once every shape symbol is known;
            # the device checks below apply to it as to any tensor.
            packed.append((a, t))
        else:
            if t.dtype != a.dtype and _RAW_OK.get(a.dtype) != t.dtype:
                raise ArgumentError(f"argument '{a.name}' has dtype {t.dtype}; the kernel expects {a.dtype}")
            if len(t.shape) != len(a.shape):
                raise ArgumentError(f"argument '{a.name}' has {len(t.shape)} dimensions {tuple(t.shape)}; the kernel "
                                    f"expects {len(a.shape)}: [{', '.join(map(str, a.shape))}]")
            for d, want in enumerate(k._raw_dims[a.index]):
                got = int(t.shape[d])
                if want >= 0:
                    if got != want:
                        raise ArgumentError(f"argument '{a.name}' dimension {d} is {got}; the kernel expects {want}")
                    continue
                j = -1 - want
                if j in sym and sym[j][0] != got:
                    raise ArgumentError(f"argument '{a.name}' dimension {d} is {got}, but {k.args[j].name} = "
                                        f"{sym[j][0]} from {sym[j][1]}")
                sym.setdefault(j, (got, f"argument '{a.name}' dimension {d}"))
        if plan.device is None:
            plan.device = t.device
        elif plan.device != t.device:
            raise ArgumentError(f"argument '{a.name}' is in {t.device} memory but earlier tensors are in "
                                f"{plan.device} memory")
        if t.torch_dev is not None:
            if plan.torch_dev is not None and plan.torch_dev != t.torch_dev:
                raise ArgumentError(f"argument '{a.name}' is on {t.torch_dev}, earlier tensors on {plan.torch_dev}")
            plan.torch_dev = t.torch_dev
            plan.device_index = t.torch_dev.index or 0
        plan.values[a.index] = t
    for a, t in packed:
        n = 1
        for want in k._raw_dims[a.index]:
            if want < 0 and -1 - want not in sym:
                raise ArgumentError(f"argument '{a.name}' is packed {a.dtype}; its shape symbol "
                                    f"{k.args[-1 - want].name} appears in no other tensor: pass it as a keyword")
            n *= want if want >= 0 else sym[-1 - want][0]
        if t.nbytes != int4_storage_bytes(n):
            raise ArgumentError(f"argument '{a.name}' is {a.dtype} with {n} elements: packed it takes "
                                f"{int4_storage_bytes(n)} bytes (two a byte, whole 32-bit words); got {t.nbytes}")
    for a in k.symbols:
        if a.index not in sym:
            raise ArgumentError(f"kernel {k.name}: shape symbol {a.name} appears in no tensor argument; pass "
                                f"{a.name}=... ")
        plan.values[a.index] = sym[a.index][0]
    return plan


def _torch_is_rocm():
    t = sys.modules.get("torch")
    return bool(t is not None and getattr(t.version, "hip", None))


def _choose_backend(k, plan, backend):
    dev = plan.device or "host"
    if backend is None:
        if dev == "device":
            backend = "hsa" if _torch_is_rocm() else "cuda"
        elif k.is_amd:
            backend = "emu"
        else:
            raise ArgumentError(f"kernel {k.name} is compiled for {k.target} and was given host arrays: NVIDIA code "
                                f"runs on torch CUDA tensors; pass backend=\"interp\" to run it in the CPU interpreter, "
                                f"or compile for an AMD target to use the emulator")
    if backend not in BACKENDS:
        raise ArgumentError(f"unknown backend {backend!r} ({', '.join(BACKENDS)})")
    if backend == "emu" and not k.is_amd:
        raise ArgumentError(f"backend 'emu' emulates AMD GPUs; kernel {k.name} is compiled for {k.target}")
    if backend == "cuda" and k.is_amd:
        raise ArgumentError(f"backend 'cuda' runs PTX; kernel {k.name} is compiled for {k.target}")
    if backend == "hsa" and not k.is_amd:
        raise ArgumentError(f"backend 'hsa' runs AMD code objects; kernel {k.name} is compiled for {k.target}")
    host = backend in ("interp", "emu")
    if host and dev == "device":
        raise ArgumentError(f"backend '{backend}' runs on host memory; the tensors are on the GPU (.cpu() them, or "
                            f"use backend=None)")
    if not host and dev == "host" and plan.device is not None:
        raise ArgumentError(f"backend '{backend}' runs on GPU memory; the tensors are host arrays")
    return backend


_runners = {}
_runners_lock = threading.Lock()


class _Runner:
    def __init__(self, backend, device):
        c = _ctx(None)
        p = ctypes.c_void_p()
        with c.lock:
            st = _lib.lib().ta_runner_open(c.ptr, backend.encode(), device, ctypes.byref(p))
            d = c.diagnostics()
        if st != 0:
            raise LaunchError(d.rstrip("\n") or f"cannot open backend {backend}")
        self.ptr = p.value
        self.lock = threading.Lock()  # a runner is for one thread at a time

    def __del__(self):
        if getattr(self, "ptr", None) and _lib._lib is not None:
            _lib._lib.ta_runner_close(self.ptr)


def _runner(backend, device):
    key = (backend, device)
    with _runners_lock:
        r = _runners.get(key)
        if r is None:
            r = _runners[key] = _Runner(backend, device)
        return r


def _cuda_stream(stream, plan):
    if stream is None:
        if plan.torch_dev is None:
            return None
        import torch
        return torch.cuda.current_stream(plan.torch_dev).cuda_stream or None
    if hasattr(stream, "cuda_stream"):
        return stream.cuda_stream or None
    return int(stream) or None
