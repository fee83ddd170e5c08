// kernels.cl — OpenCL kernels compiled with clang-19 -S at test time; the
// .s clang emits (every .amdhsa_* key, block-style metadata YAML) is fed to
// tileasm's code-object directives and compared with llvm-mc + ld.lld.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void vadd(__global const float *a, __global const float *b, __global float *c, int len)
{
	int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
	if (i < len)
		c[i] = a[i] + b[i];
}

__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void transpose(__global const float *in, __global float *out, int n)
{
	__local float tile[16][17];
	int lx = __builtin_amdgcn_workitem_id_x(), ly = __builtin_amdgcn_workitem_id_y();
	int bx = __builtin_amdgcn_workgroup_id_x() * 16, by = __builtin_amdgcn_workgroup_id_y() * 16;
	tile[ly][lx] = in[(by + ly) * n + bx + lx];
	__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
	__builtin_amdgcn_s_barrier();
	__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
	out[(bx + ly) * n + by + lx] = tile[lx][ly];
}

// Uses the COV5 hidden kernel arguments (workgroup size).
__kernel void scale(__global float *x, float s)
{
	int i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
	x[i] *= s;
}
