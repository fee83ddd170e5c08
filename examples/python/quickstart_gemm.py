"""TileLang's README quickstart (a GEMM with a ReLU epilogue) with only the imports changed:
`import tilelang` -> `import tileasm as tilelang`, `import tilelang.language as T` -> `import tileasm.language as T`.

    python3 examples/python/quickstart_gemm.py            # torch on a GPU if there is one, else NumPy (emulator)
"""
import tileasm as tilelang
import tileasm.language as T


@tilelang.jit
def matmul(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float"):

    @T.prim_func
    def matmul_relu_kernel(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j], 0)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return matmul_relu_kernel


def run_numpy(M=200, N=130, K=70, target="gfx942", backend=None):
    import numpy as np
    kernel = matmul(M, N, K, 128, 128, 32)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.empty((M, N), np.float16)
    tilelang.jit(kernel.prim, target=target, backend=backend)(a, b, c)
    ref = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    return float(np.abs(c.astype(np.float32) - ref).max())


if __name__ == "__main__":
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if gpu:
        M = N = K = 1024
        matmul_relu_kernel = matmul(M, N, K, 128, 128, 32)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        matmul_relu_kernel(a, b, c)
        torch.testing.assert_close(c, torch.relu(a @ b), rtol=1e-2, atol=1e-2)
        print("torch: relu(a @ b) matches")
    else:
        err = run_numpy()
        print(f"emulator (gfx942) vs NumPy: max error {err:.3g}")
        assert err < 0.1
