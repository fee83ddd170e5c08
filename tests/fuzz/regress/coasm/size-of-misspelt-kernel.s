// fuzz_coasm: '.size' naming no label left kernel a without a size; its code
// then ran to the end of .text over b, and co_source's text moved b.
	.text
	.p2align 8
	.globl a
	.type a,@function
a:
	s_endpgm
.La_end:
	.size misspelt, .La_end-a
	.p2align 8
	.globl b
	.type b,@function
b:
	s_endpgm
.Lb_end:
	.size b, .Lb_end-b
	.rodata
	.p2align 6
	.amdhsa_kernel a
	.amdhsa_next_free_vgpr 4
	.amdhsa_next_free_sgpr 4
	.amdhsa_accum_offset 4
	.end_amdhsa_kernel
	.p2align 6
	.amdhsa_kernel b
	.amdhsa_next_free_vgpr 4
	.amdhsa_next_free_sgpr 4
	.amdhsa_accum_offset 4
	.end_amdhsa_kernel
