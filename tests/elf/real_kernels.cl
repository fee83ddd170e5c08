// real_kernels.cl — ordinary kernels compiled with clang-19 -S -O3 at test time
// (tests/elf/test_asm.c, clang_assemble): the .s clang writes is assembled
// as is by tileasm (instructions, directives, .rodata data) and compared with
// llvm-mc-19 + ld.lld-19.  A register-blocked SGEMM, an MFMA (gfx90a/gfx942) or
// WMMA (gfx1100) GEMM, and a wave reduction with DPP (and DPP8 on gfx11).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float8_t __attribute__((ext_vector_type(8)));
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef half half4_t __attribute__((ext_vector_type(4)));
typedef half half16_t __attribute__((ext_vector_type(16)));

// C[M,N] = A[M,K] * B[K,N], 16x16 threads, a 4x4 register block per thread, 64x64 tile, K step 8.
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void sgemm(__global const float *A, __global const float *B, __global float *C, int M, int N, int K)
{
	__local float As[8][64 + 1], Bs[8][64];
	int tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y(), tid = ty * 16 + tx;
	int bm = __builtin_amdgcn_workgroup_id_y() * 64, bn = __builtin_amdgcn_workgroup_id_x() * 64;
	float acc[4][4] = {{0}};
	for (int k0 = 0; k0 < K; k0 += 8) {
		for (int i = tid; i < 8 * 64; i += 256) {
			int r = i / 8, c = i % 8;
			As[c][r] = A[(bm + r) * K + k0 + c];
			Bs[i / 64][i % 64] = B[(k0 + i / 64) * N + bn + i % 64];
		}
		__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
		__builtin_amdgcn_s_barrier();
		__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
#pragma unroll
		for (int kk = 0; kk < 8; kk++) {
			float a[4], b[4];
			for (int i = 0; i < 4; i++)
				a[i] = As[kk][ty * 4 + i], b[i] = Bs[kk][tx * 4 + i];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] = __builtin_fmaf(a[i], b[j], acc[i][j]);
		}
		__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
		__builtin_amdgcn_s_barrier();
		__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			C[(bm + ty * 4 + i) * N + bn + tx * 4 + j] = acc[i][j];
}

// Row sums of x with DPP row shifts and a cross-row step; one store per 16 lanes.
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void reduce_dpp(__global const float *x, __global float *out, int n)
{
	int i = (__builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x());
	float v = i < n ? x[i] : 0.0f;
	int b = __builtin_astype(v, int);
	v += __builtin_astype(__builtin_amdgcn_update_dpp(0, b, 0x111, 0xf, 0xf, 0), float); // row_shr:1
	b = __builtin_astype(v, int);
	v += __builtin_astype(__builtin_amdgcn_update_dpp(0, b, 0x112, 0xf, 0xf, 0), float); // row_shr:2
	b = __builtin_astype(v, int);
	v += __builtin_astype(__builtin_amdgcn_update_dpp(0, b, 0x114, 0xf, 0xe, 0), float); // row_shr:4
	b = __builtin_astype(v, int);
	v += __builtin_astype(__builtin_amdgcn_update_dpp(0, b, 0x118, 0xf, 0xc, 0), float); // row_shr:8
#if defined(__gfx1100__)
	b = __builtin_astype(v, int);
	v += __builtin_astype(__builtin_amdgcn_mov_dpp8(b, 0x053977), float); // dpp8:[7,6,5,4,3,2,1,0]
	v += __builtin_astype(__builtin_amdgcn_permlanex16(0, __builtin_astype(v, int), -1, -1, false, false), float);
#else
	b = __builtin_astype(v, int);
	v += __builtin_astype(__builtin_amdgcn_update_dpp(0, b, 0x142, 0xa, 0xf, 0), float); // row_bcast:15
#endif
	int lane = __builtin_amdgcn_mbcnt_lo(~0u, 0);
	if ((lane & 15) == 15)
		out[i / 16] = v;
}

// One 32x32 (MFMA) or 16x16 (WMMA) tile of C = A * B (f16 in, f32 out) per wave.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void mma_gemm(__global const half *A, __global const half *B, __global float *C, int K)
{
	int lane = __builtin_amdgcn_workitem_id_x();
#if defined(__gfx1100__)
	float8_t acc = 0;
	for (int k0 = 0; k0 < K; k0 += 16) {
		half16_t a, b;
		for (int i = 0; i < 16; i++) {
			a[i] = A[(lane % 16) * K + k0 + i];
			b[i] = B[(k0 + i) * 16 + lane % 16];
		}
		acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, acc);
	}
	for (int i = 0; i < 8; i++)
		C[(i * 2 + lane / 16) * 16 + lane % 16] = acc[i];
#else
	float16_t acc = 0;
	for (int k0 = 0; k0 < K; k0 += 8) {
		half4_t a, b;
		for (int i = 0; i < 4; i++) {
			a[i] = A[(lane % 32) * K + k0 + (lane / 32) * 4 + i];
			b[i] = B[(k0 + (lane / 32) * 4 + i) * 32 + lane % 32];
		}
		acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, acc, 0, 0, 0);
	}
	for (int i = 0; i < 16; i++)
		C[((i / 4) * 8 + (lane / 32) * 4 + i % 4) * 32 + lane % 32] = acc[i];
#endif
}

// A constant table in .rodata that the kernel reads.
__constant float coef[8] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void poly(__global float *x)
{
	int i = (__builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x());
	float v = x[i], r = 0;
	for (int k = 7; k >= 0; k--)
		r = r * v + coef[k];
	x[i] = r;
}
