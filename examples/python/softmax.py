"""Row softmax in TileLang's style: an online max and sum over column tiles, then a normalising pass."""
import tileasm
import tileasm.language as T


@tileasm.jit(out_idx=[-1])
def softmax(M, N, block_M=4, block_N=256, dtype="float16", accum_dtype="float"):

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            X_f = T.alloc_fragment((block_M, block_N), accum_dtype)
            m = T.alloc_fragment((block_M,), accum_dtype)
            m_new = T.alloc_fragment((block_M,), accum_dtype)
            s = T.alloc_fragment((block_M,), accum_dtype)
            T.fill(m, -T.infinity(accum_dtype))
            T.clear(s)
            for j in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, j * block_N], X_f)
                for i, k in T.Parallel(block_M, block_N):  # columns past N must not count
                    X_f[i, k] = T.if_then_else(j * block_N + k < N, X_f[i, k], -T.infinity(accum_dtype))
                T.reduce_max(X_f, m_new, dim=1)
                for i in T.Parallel(block_M):
                    m_new[i] = T.max(m_new[i], m[i])
                    s[i] = s[i] * T.exp(m[i] - m_new[i])
                    m[i] = m_new[i]
                for i, k in T.Parallel(block_M, block_N):
                    X_f[i, k] = T.exp(X_f[i, k] - m[i])
                T.reduce_sum(X_f, s, dim=1, clear=False)
            for j in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, j * block_N], X_f)
                for i, k in T.Parallel(block_M, block_N):
                    X_f[i, k] = T.exp(X_f[i, k] - m[i]) / s[i]
                T.copy(X_f, Y[bx * block_M, j * block_N])

    return main


def reference(x):
    import numpy as np
    x = x.astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
