"""A small autotuner: try configurations of a kernel factory on the device, keep the fastest per shape.

    @tileasm.autotune(configs=[dict(block_M=64, block_N=64), dict(block_M=128, block_N=128)])
    @tileasm.jit(out_idx=[-1])
    def matmul(M, N, K, block_M=128, block_N=128, block_K=32): ...

    k = matmul(1024, 1024, 1024)     # times every config (on random inputs) the first time for these
    k.best_config                    # arguments; later calls with the same arguments reuse the choice
"""
import time


def _random_inputs(k):
    """Random tensors for a compiled kernel's parameters, on the device its target runs on."""
    import numpy as np
    rng = np.random.default_rng(0)
    out = []
    use_torch = not k.is_amd
    for a in k.params:
        if a.kind != "tensor":
            out.append(0.5 if a.dtype.startswith("f") or a.dtype == "bf16" else 1)
            continue
        if any(isinstance(d, str) for d in a.shape):
            raise ValueError(f"autotune: parameter '{a.name}' has a symbolic shape {a.shape}; pass supply=")
        if use_torch:
            import torch
            dt = getattr(torch, {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}.get(a.dtype, "float32"))
            out.append(torch.randn(a.shape, device="cuda").to(dt))
        else:
            x = rng.standard_normal(a.shape).astype({"f16": np.float16, "f32": np.float32}.get(a.dtype, np.float32))
            out.append(x)
    return out


def _time(fn, args, warmup, rep):
    torch_dev = any(type(a).__module__.startswith("torch") and a.is_cuda for a in args if hasattr(a, "is_cuda"))
    for _ in range(warmup):
        fn(*args)
    if torch_dev:
        import torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(rep):
            fn(*args)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / rep
    t0 = time.perf_counter()
    for _ in range(rep):
        fn(*args)
    return (time.perf_counter() - t0) * 1e3 / rep


class _Tuned:
    def __init__(self, factory, configs, warmup, rep, supply):
        self.factory, self.configs, self.warmup, self.rep, self.supply = factory, configs, warmup, rep, supply
        self.cache = {}     # (args, kwargs) -> (best config, JITKernel, {config index: ms})

    def __call__(self, *args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        hit = self.cache.get(key)
        if hit is None:
            results, best = {}, None
            for i, cfg in enumerate(self.configs):
                jk = self.factory(*args, **{**kwargs, **cfg})
                k = jk.kernel(jk.target or ("gfx942" if jk.backend in (None, "emu", "interp") and not _has_cuda()
                                            else "sm_90a"))
                inputs = self.supply(k) if self.supply else _random_inputs(k)
                call = (lambda *a, _jk=jk, _k=k: _k(*a, backend=_jk.backend)) if not jk.out_idx else \
                    (lambda *a, _k=k: _k(*a))
                try:
                    ms = _time(call, inputs, self.warmup, self.rep)
                except Exception as e:  # a config the compiler or device rejects is skipped, and said so
                    results[i] = e
                    continue
                results[i] = ms
                if best is None or ms < results[best]:
                    best = i
            if best is None:
                raise RuntimeError(f"autotune: no configuration ran: {results}")
            jk = self.factory(*args, **{**kwargs, **self.configs[best]})
            hit = self.cache[key] = (self.configs[best], jk, results)
        cfg, jk, results = hit
        jk.best_config = cfg
        jk.autotune_results = results
        return jk


def _has_cuda():
    try:
        import torch
        return torch.cuda.is_available() and not getattr(torch.version, "hip", None)
    except ImportError:
        return False


def autotune(configs, warmup=1, rep=5, supply=None):
    """Decorator over a @tileasm.jit factory: configs is a list of keyword dicts (tile sizes, stages,
    threads); supply(kernel) may give the inputs to time on (default: random tensors)."""
    configs = list(configs)
    if not configs:
        raise ValueError("autotune: configs is empty")
    return lambda factory: _Tuned(factory, configs, warmup, rep, supply)
