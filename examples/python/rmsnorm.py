"""RMS normalisation in TileLang's style: Y = X * rsqrt(mean(X^2) + eps) * W, four rows per block."""
import tileasm
import tileasm.language as T


@tileasm.jit(out_idx=[-1])
def rmsnorm(M, N, eps=1e-6, block_M=4, block_N=256, dtype="float16", accum_dtype="float"):

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            X_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            W_f = T.alloc_fragment((block_N,), accum_dtype)
            ss = T.alloc_fragment((block_M,), accum_dtype)
            T.clear(ss)
            for j in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, j * block_N], X_f)
                for i, k in T.Parallel(block_M, block_N):
                    X_f[i, k] = X_f[i, k] * X_f[i, k]
                T.reduce_sum(X_f, ss, dim=1, clear=False)
            for i in T.Parallel(block_M):
                ss[i] = T.rsqrt(ss[i] / N + eps)
            for j in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, j * block_N], X_f)
                T.copy(W[j * block_N], W_f)
                for i, k in T.Parallel(block_M, block_N):
                    X_f[i, k] = X_f[i, k] * ss[i] * W_f[k]
                T.copy(X_f, Y[bx * block_M, j * block_N])

    return main


def reference(x, w, eps=1e-6):
    import numpy as np
    x = x.astype(np.float32)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w.astype(np.float32)
