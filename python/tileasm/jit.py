"""@tileasm.jit and @T.prim_func: Python kernels compiled through Tile IR.

    @tileasm.jit                                   # TileLang's style: a factory returning a @T.prim_func
    def matmul(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float"):
        @T.prim_func
        def kernel(A: T.Tensor((M, K), dtype), ...):
            with T.Kernel(...) as (bx, by): ...
        return kernel

    k = matmul(1024, 1024, 1024, 128, 128, 32)     # translated to Tile IR (not compiled yet)
    k(a, b, c)                                     # compiled for the target the tensors imply, then run

The decorated function may also be the kernel itself (annotated parameters, a `with T.Kernel` body).
"""
import functools
import sys
import threading

from . import language as T
from .core import AMD_TARGETS, NVIDIA_TARGETS, ArgumentError, compile as _compile
from .frontend import translate

# TileLang target names -> the tileasm target used when the device does not say more.
_TARGET_ALIASES = {"hip": "gfx942", "rocm": "gfx942", "cuda": None, "auto": None}
_IGNORED_JIT_OPTIONS = ("pass_configs", "execution_backend", "verbose", "debug_root_path", "compile_flags",
                        "target_host")


class PrimFunc:
    """A kernel function (body not executed).  .tile_ir is its Tile IR text; call it like a JITKernel."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self._tr = None

    @property
    def translation(self):
        if self._tr is None:
            self._tr = translate(self.fn)
        return self._tr

    @property
    def tile_ir(self):
        return self.translation.text

    def script(self):
        return self.tile_ir

    def show(self):
        print(self.tile_ir, end="")

    def compile(self, target, defines=None):
        tr = self.translation
        return _compile(tr.text, target=target, defines=defines, filename=tr.name + ".tile",
                        line_map=tr.map_diagnostics)

    def __call__(self, *args, **kwargs):
        return JITKernel(self)(*args, **kwargs)

    def __repr__(self):
        return f"<tileasm PrimFunc {self.__name__}>"


def _device_target(t):
    """The tileasm target for the GPU a torch tensor lives on."""
    import torch
    idx = t.device.index or 0
    if getattr(torch.version, "hip", None):
        arch = torch.cuda.get_device_properties(idx).gcnArchName.split(":")[0]
        if arch not in AMD_TARGETS:
            raise ArgumentError(f"the GPU is {arch}; tileasm compiles for {', '.join(AMD_TARGETS)}")
        return arch
    major, minor = torch.cuda.get_device_capability(idx)
    if major >= 9:
        return "sm_90a" if (major, minor) == (9, 0) else "sm_80"
    if major == 8:
        return "sm_80"
    raise ArgumentError(f"the GPU has compute capability {major}.{minor}; tileasm's PTX needs sm_80 or newer")


def _first_tensor(args):
    for a in args:
        m = type(a).__module__
        if m.startswith("torch") or m == "numpy" or hasattr(a, "__dlpack__"):
            return a
    return None


class JITKernel:
    """A PrimFunc bound to a target and backend (chosen from the first call's tensors when not given),
    compiled once per target.  Calling it launches; out_idx makes it allocate and return outputs."""

    def __init__(self, prim, target=None, backend=None, out_idx=None, defines=None):
        self.prim = prim
        tgt = _TARGET_ALIASES.get(target, target) if isinstance(target, str) else target
        if tgt is not None and tgt.split(":")[0] not in AMD_TARGETS + NVIDIA_TARGETS:
            raise ValueError(f"unknown target {target!r} (gfx1100, gfx90a, gfx942, sm_80, sm_90a, or TileLang's "
                             f"'cuda'/'hip'/'auto')")
        self.target = tgt
        self.backend = backend
        if isinstance(out_idx, int):
            out_idx = [out_idx]
        self.out_idx = list(out_idx or [])
        self.defines = defines
        self._kernels = {}
        self._lock = threading.Lock()

    # TileLang-compatible inspection
    @property
    def tile_ir(self):
        return self.prim.tile_ir

    def kernel(self, target=None):
        """The compiled tileasm.Kernel for target (default: this JITKernel's, or the last one used)."""
        target = target or self.target or (next(reversed(self._kernels)) if self._kernels else None)
        if target is None:
            raise ValueError("no target yet: call the kernel once or pass target=")
        with self._lock:
            k = self._kernels.get(target)
            if k is None:
                k = self._kernels[target] = self.prim.compile(target, self.defines)
        return k

    def get_kernel_source(self, target=None):
        return self.kernel(target).asm

    def __getattr__(self, name):  # metadata of the compiled kernel (.asm, .registers, .pass_times, ...)
        if name.startswith("_") or name in ("prim", "target", "backend", "out_idx", "defines"):
            raise AttributeError(name)
        return getattr(self.kernel(), name)

    def _pick_target(self, args):
        if self.target is not None:
            return self.target
        t = _first_tensor(args)
        if t is not None and type(t).__module__.startswith("torch") and t.device.type == "cuda":
            return _device_target(t)
        if self.backend == "cuda":
            return "sm_90a"
        return "gfx942"  # host arrays: the emulator runs AMD code (docs/python.md)

    def __call__(self, *args, **kwargs):
        k = self.kernel(self._pick_target(args)) if self.target is None else self.kernel()
        backend = kwargs.pop("backend", self.backend)
        if not self.out_idx:
            k(*args, backend=backend, **kwargs)
            return None
        nparams = len(k.params)
        outs_at = sorted(i % nparams for i in self.out_idx)
        if len(args) + len(outs_at) != nparams:
            raise ArgumentError(f"kernel {k.name}: with out_idx={self.out_idx} it takes "
                                f"{nparams - len(outs_at)} inputs, got {len(args)}")
        full, it = [], iter(args)
        for i in range(nparams):
            full.append(None if i in outs_at else next(it))
        like = _first_tensor(args)
        sym = _symbols_from(k, full)
        outs = []
        for i in outs_at:
            a = k.params[i]
            shape = tuple(d if isinstance(d, int) else sym.get(d) for d in a.shape)
            if None in shape:
                raise ArgumentError(f"kernel {k.name}: cannot size output '{a.name}' {a.shape}: a symbol appears in "
                                    f"no input")
            full[i] = _empty_like(like, shape, a.dtype)
            outs.append(full[i])
        k(*full, backend=backend, **kwargs)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _symbols_from(k, full):
    sym = {}
    for a, v in zip(k.params, full):
        if v is None or a.kind != "tensor" or not hasattr(v, "shape"):
            continue
        for d, s in zip(a.shape, v.shape):
            if isinstance(d, str):
                sym.setdefault(d, int(s))
    return sym


_TORCH_NAMES = {"bool": "bool", "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64",
                "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "fp8e4m3": "float8_e4m3fn",
                "fp8e5m2": "float8_e5m2", "fp8e4m3fnuz": "float8_e4m3fnuz", "fp8e5m2fnuz": "float8_e5m2fnuz",
                "u32": "uint32"}


def _empty_like(like, shape, dt):
    if like is not None and type(like).__module__.startswith("torch"):
        import torch
        return torch.empty(shape, dtype=getattr(torch, _TORCH_NAMES[dt]), device=like.device)
    import numpy as np
    if dt == "bf16":
        return np.empty(shape, dtype=np.uint16)
    if dt.startswith("fp8"):
        return np.empty(shape, dtype=np.uint8)
    return np.empty(shape, dtype=_TORCH_NAMES[dt] if dt != "bool" else np.bool_)


def _is_prim_style(fn):
    ann = getattr(fn, "__annotations__", {})
    return any(isinstance(v, T.TensorType) for v in ann.values())


class _Factory:
    """@tileasm.jit on a factory: calling it builds the PrimFunc (the factory runs as ordinary Python) and
    returns its JITKernel, cached per argument values."""

    def __init__(self, fn, opts):
        self.fn, self.opts = fn, opts
        self._cache = {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        try:
            hit = self._cache.get(key)
        except TypeError:  # unhashable arguments
            key, hit = None, None
        if hit is not None:
            return hit
        prim = self.fn(*args, **kwargs)
        if not isinstance(prim, PrimFunc):
            if callable(prim) and _is_prim_style(prim):
                prim = PrimFunc(prim)
            else:
                raise TypeError(f"@tileasm.jit: {self.fn.__name__}(...) returned {type(prim).__name__}; a factory "
                                f"must return a @T.prim_func kernel")
        jk = JITKernel(prim, **self.opts)
        if key is not None:
            self._cache[key] = jk
        return jk


def jit(fn=None, *, target=None, backend=None, out_idx=None, defines=None, **ignored):
    """TileLang's @tilelang.jit.  target: a tileasm target, or 'cuda'/'hip'/'auto' (default: from the
    first call's tensors); backend: 'interp', 'emu', 'cuda', 'hsa' or None (from the tensors);
    out_idx: parameters the call allocates and returns.  TileLang's pass_configs, execution_backend,
    verbose and similar options are accepted and ignored."""
    for k in ignored:
        if k not in _IGNORED_JIT_OPTIONS:
            raise TypeError(f"tileasm.jit() got an unexpected keyword argument '{k}'")
    opts = dict(target=target, backend=backend, out_idx=out_idx, defines=defines)

    def wrap(f):
        if isinstance(f, PrimFunc):
            return JITKernel(f, **opts)
        if _is_prim_style(f):
            return JITKernel(PrimFunc(f), **opts)
        return _Factory(f, opts)

    return wrap(fn) if fn is not None else wrap
