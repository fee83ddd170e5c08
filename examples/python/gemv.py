"""GEMV y = A x in TileLang's thread style (its example_gemv.py): a 2-D thread block of 32 K-lanes (tx) by
block_N rows (ty), a mutable per-thread accumulator (T.alloc_var), guarded loads, and the 32 partial sums of a
row combined with warp shuffles (T.shfl_xor)."""
import tileasm
import tileasm.language as T


@tileasm.jit(out_idx=[-1])
def gemv(N, K, block_N=4, dtype="float16", accum_dtype="float"):

    @T.prim_func
    def main(A: T.Tensor((N, K), dtype), X: T.Tensor((K,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=(32, block_N)) as bx:
            tk = T.get_thread_binding(0)
            tn = T.get_thread_binding(1)
            acc = T.alloc_var(accum_dtype)
            if tn < block_N:
                n = bx * block_N + tn
                acc = 0.0
                for k0 in T.serial(T.ceildiv(K, 32)):
                    k = k0 * 32 + tk
                    acc = acc + T.cast(T.if_then_else(k < K and n < N, A[n, k], 0), accum_dtype) * \
                        T.cast(T.if_then_else(k < K, X[k], 0), accum_dtype)
                for s in T.serial(5):
                    acc = acc + T.shfl_xor(acc, 16 >> s)
                if tk == 0 and n < N:
                    Y[n] = T.cast(acc, dtype)

    return main


def reference(a, x):
    import numpy as np
    return (a.astype(np.float64) @ x.astype(np.float64)).astype(np.float16)
