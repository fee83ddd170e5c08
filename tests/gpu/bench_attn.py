#!/usr/bin/env python3
"""tests/gpu/bench_attn.py [LIBTILEASM] — issue 14 row 5: examples/mha_fwd.tile as written (f16; bf16 = the same
text with f16 replaced by bf16) through the Python package, next to torch SDPA's flash, memory-efficient and cuDNN
backends in the same process, at B=4 H=16 S=4096, D = 64 and 128, causal and not.

Each kernel is launched back to back with a CUDA event between launches; the time is the median of 30 launches.
The output is checked before timing: against SDPA's math in float32 for two heads (every element), and against the
fastest SDPA backend's output for all heads (max abs error).  Prints one row per case and exits 1 if a check fails.
Environment: ATTN_TARGETS (default "sm_90a"; "sm_80 sm_90a" adds the sm_80 PTX, run through the driver JIT),
ATTN_SHAPE "B H S" (default "4 16 4096").
"""
import math
import os
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
try:
    import tileasm
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    lib = sys.argv[1] if len(sys.argv) > 1 else next(
        (p for p in (os.path.join(ROOT, d, "libtileasm.so") for d in ("build-pygpu", "build-gpu", "build-py", "build"))
         if os.path.exists(p)), None)
    if lib:
        os.environ["TILEASM_LIB"] = os.path.abspath(lib)
    import tileasm

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

try:
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError:  # older torch
    SDPBackend = sdpa_kernel = None

N_TIMED = 30


def gpu_median(fn, n=N_TIMED):
    """Median ms per launch of fn, launched back to back (events between launches)."""
    fn()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    ev[0].record()
    for i in range(n):
        fn()
        ev[i + 1].record()
    torch.cuda.synchronize()
    return statistics.median(ev[i].elapsed_time(ev[i + 1]) for i in range(n))


def reference(q, k, v, causal, scale, heads):
    """float32 attention for batch 0 and the given heads: [len(heads), S, D]."""
    out = []
    for h in heads:
        s = (q[0, h].float() @ k[0, h].float().T) * scale
        if causal:
            S = s.shape[0]
            s.masked_fill_(torch.ones(S, S, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
        out.append(torch.softmax(s, -1) @ v[0, h].float())
    return torch.stack(out)


def sdpa_backends():
    """[(short name, SDPBackend)] of the SDPA backends this torch has: flash, efficient, cudnn."""
    backends = []
    if SDPBackend is not None:
        for name in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
            if hasattr(SDPBackend, name):
                backends.append((name.split("_")[0].lower(), getattr(SDPBackend, name)))
    return backends


def sdpa_times(backends, q, k, v, causal):
    """Each backend's median ms (None where it cannot run this case) and output; the available ones; the fastest."""
    peer_ms, peer_out = {}, {}
    for name, be in backends:
        try:
            with sdpa_kernel([be]):
                fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
                peer_out[name] = fn()
                peer_ms[name] = gpu_median(fn)
        except RuntimeError as e:  # backend not available for this dtype/shape
            peer_ms[name] = None
            print(f"  sdpa {name}: {str(e).splitlines()[0][:80]}")
    avail = {n: t for n, t in peer_ms.items() if t is not None}
    return peer_ms, peer_out, avail, (min(avail, key=avail.get) if avail else None)


def main():
    B, H, S = (int(x) for x in os.environ.get("ATTN_SHAPE", "4 16 4096").split())
    targets = os.environ.get("ATTN_TARGETS", "sm_90a").split()
    src = open(os.path.join(ROOT, "examples", "mha_fwd.tile"), encoding="utf-8").read()
    dev = torch.device("cuda")
    backends = sdpa_backends()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, B={B} H={H} S={S}, "
          f"median of {N_TIMED} back-to-back launches")
    hdr = f"{'case':<34} {'tileasm ms':>10} {'TFLOP/s':>8} " + " ".join(f"{n + ' ms':>10}" for n, _ in backends)
    print(hdr + f" {'best':>8} {'ratio':>6}  check")
    fails = 0
    rows = []
    for dt_name, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        text = src if dt_name == "f16" else src.replace("f16[", "bf16[")
        for D in (64, 128):
            kern = {}
            for tgt in targets:
                t0 = time.perf_counter()
                kern[tgt] = tileasm.compile(text, target=tgt, defines={"D": D}, filename="mha_fwd.tile")
                ct = (time.perf_counter() - t0) * 1e3
                print(f"  compile mha_fwd {dt_name} D={D} {tgt}: {ct:.1f} ms")
            g = torch.Generator(device=dev).manual_seed(D)
            q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=dt, generator=g) for _ in range(3))
            o = torch.empty_like(q)
            scale = 1.0 / math.sqrt(D)
            for causal in (False, True):
                flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
                peer_ms, peer_out, avail, best = sdpa_times(backends, q, k, v, causal)
                ref = reference(q, k, v, causal, scale, (0, H - 1))
                for tgt in targets:
                    kk = kern[tgt]
                    o.fill_(float("nan"))
                    run = lambda: kk(q, k, v, o, scale, int(causal))  # noqa: E731
                    run()
                    torch.cuda.synchronize()
                    got = torch.stack([o[0, 0], o[0, H - 1]]).float()
                    err_ref = (got - ref).abs().max().item()
                    err_peer = (o.float() - peer_out[best].float()).abs().max().item() if best else float("nan")
                    tol = 2e-2 if dt_name == "bf16" else 4e-3
                    ok = bool(torch.isfinite(o).all().item()) and err_ref <= tol and (not best or err_peer <= 2 * tol)
                    ms = gpu_median(run)
                    fails += 0 if ok else 1
                    case = f"{dt_name} D={D} {'causal' if causal else 'full'} {tgt}"
                    peers = " ".join(f"{peer_ms[n]:10.4f}" if peer_ms[n] is not None else f"{'-':>10}"
                                     for n, _ in backends)
                    ratio = avail[best] / ms if best else float("nan")
                    line = (f"{case:<34} {ms:10.4f} {flops / ms / 1e9:8.1f} {peers} {best or '-':>8} {ratio:6.3f}  "
                            f"{'PASS' if ok else 'FAIL'} (vs fp32 {err_ref:.2e}, vs {best} {err_peer:.2e})")
                    print(line, flush=True)
                    rows.append(line)
    print(f"{len(rows) - fails}/{len(rows)} checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
