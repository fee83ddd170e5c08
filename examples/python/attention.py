"""Multi-head attention forward (flash attention) in TileLang's style: Q, K, V, O are [batch, seq, heads, dim];
each block owns block_M query rows of one (batch, head) and streams K/V tiles with an online softmax."""
import math

import tileasm
import tileasm.language as T


@tileasm.jit(out_idx=[3])
def flashattn(batch, heads, seq_len, dim, is_causal, block_M=64, block_N=64):
    scale = (1.0 / math.sqrt(dim)) * 1.44269504  # log2(e): exp2 below
    shape = (batch * seq_len * heads, dim)        # rows (b, s, h) flattened: Tile IR tensors are 1..4-D
    dtype = "float16"
    accum_dtype = "float"

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            P_shared = T.alloc_shared((block_M, block_N), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            m = T.alloc_fragment((block_M,), accum_dtype)
            m_prev = T.alloc_fragment((block_M,), accum_dtype)
            l = T.alloc_fragment((block_M,), accum_dtype)
            r = T.alloc_fragment((block_M,), accum_dtype)
            for i, d in T.Parallel(block_M, dim):  # loads are guarded by `if` (select evaluates both sides)
                if bx * block_M + i < seq_len:
                    Q_shared[i, d] = Q[(bz * seq_len + bx * block_M + i) * heads + by, d]
                else:
                    Q_shared[i, d] = 0
            T.clear(acc_o)
            T.clear(l)
            T.fill(m, -T.infinity(accum_dtype))
            n_tiles = T.ceildiv(seq_len, block_N)
            if is_causal:
                n_tiles = T.min(bx + 1, T.ceildiv(seq_len, block_N))
            for kb in T.Pipelined(n_tiles, num_stages=2):
                for j, d in T.Parallel(block_N, dim):
                    if kb * block_N + j < seq_len:
                        K_shared[j, d] = K[(bz * seq_len + kb * block_N + j) * heads + by, d]
                        V_shared[j, d] = V[(bz * seq_len + kb * block_N + j) * heads + by, d]
                    else:
                        K_shared[j, d] = 0
                        V_shared[j, d] = 0
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, clear_accum=True)
                for i, j in T.Parallel(block_M, block_N):
                    if is_causal:
                        acc_s[i, j] = T.if_then_else((kb * block_N + j < seq_len) and
                                                     (kb * block_N + j <= bx * block_M + i),
                                                     acc_s[i, j] * scale, -T.infinity(accum_dtype))
                    else:
                        acc_s[i, j] = T.if_then_else(kb * block_N + j < seq_len, acc_s[i, j] * scale,
                                                     -T.infinity(accum_dtype))
                T.copy(m, m_prev)
                T.reduce_max(acc_s, m, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] - m[i])
                T.reduce_sum(acc_s, r, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * T.exp2(m_prev[i] - m[i]) + r[i]
                for i, d in T.Parallel(block_M, dim):
                    acc_o[i, d] = acc_o[i, d] * T.exp2(m_prev[i] - m[i])
                T.copy(acc_s, P_shared)
                T.gemm(P_shared, V_shared, acc_o)
            for i, d in T.Parallel(block_M, dim):
                if bx * block_M + i < seq_len:
                    Output[(bz * seq_len + bx * block_M + i) * heads + by, d] = acc_o[i, d] / l[i]

    return main


def reference(q, k, v, batch, heads, seq_len, dim, is_causal):
    import numpy as np
    f = lambda x: x.astype(np.float32).reshape(batch, seq_len, heads, dim).transpose(0, 2, 1, 3)
    q, k, v = f(q), f(k), f(v)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dim)
    if is_causal:
        s = np.where(np.tril(np.ones((seq_len, seq_len), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(batch * seq_len * heads, dim)
