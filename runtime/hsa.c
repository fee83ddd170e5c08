/* hsa.c — ROCr dispatch: dlopen, agents, regions, code object loading and
 * one AQL kernel dispatch packet per launch (amd-code-object.md §11).
 *
 * The few HSA types and constants used are declared here (they are a
 * stable ABI), so the file builds without ROCm headers; when hsa/hsa.h is
 * present (TA_HAVE_HSA_H) they are checked against it at compile time. */
#include "hsa.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int Status;
typedef struct { uint64_t handle; } Handle;

enum {
	ST_SUCCESS = 0, ST_INFO_BREAK = 1,
	AGENT_INFO_NAME = 0, AGENT_INFO_DEVICE = 17, DEVICE_TYPE_GPU = 1,
	REGION_INFO_SEGMENT = 0, REGION_INFO_GLOBAL_FLAGS = 1, REGION_SEGMENT_GLOBAL = 0,
	REGION_FLAG_KERNARG = 1, REGION_FLAG_FINE = 2, REGION_FLAG_COARSE = 4,
	SYM_KERNEL_OBJECT = 22, SYM_KERNARG_SIZE = 11, SYM_GROUP_SIZE = 13, SYM_PRIVATE_SIZE = 14,
	QUEUE_TYPE_SINGLE = 1, PROFILE_FULL = 1, ROUND_DEFAULT = 0,
	COND_LT = 2, WAIT_BLOCKED = 0,
	PACKET_KERNEL_DISPATCH = 2, FENCE_SYSTEM = 2,
};

#ifdef TA_HAVE_HSA_H
#include <hsa/hsa.h>
_Static_assert((int)AGENT_INFO_DEVICE == (int)HSA_AGENT_INFO_DEVICE, "hsa.h");
_Static_assert((int)SYM_KERNEL_OBJECT == (int)HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, "hsa.h");
_Static_assert((int)SYM_PRIVATE_SIZE == (int)HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, "hsa.h");
_Static_assert((int)REGION_FLAG_COARSE == (int)HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED, "hsa.h");
_Static_assert((int)PACKET_KERNEL_DISPATCH == (int)HSA_PACKET_TYPE_KERNEL_DISPATCH, "hsa.h");
_Static_assert((int)COND_LT == (int)HSA_SIGNAL_CONDITION_LT, "hsa.h");
#endif

/* hsa_queue_t's leading fields (64-bit little-endian layout). */
typedef struct {
	uint32_t type, features;
	void *base_address;
	Handle doorbell_signal;
	uint32_t size, reserved1;
	uint64_t id;
} Queue;

/* The entry points, resolved by name. */
#define HSA_FUNCS(X)                                                                              \
	X(hsa_init, Status, (void))                                                               \
	X(hsa_shut_down, Status, (void))                                                          \
	X(hsa_status_string, Status, (Status, const char **))                                     \
	X(hsa_iterate_agents, Status, (Status (*)(Handle, void *), void *))                       \
	X(hsa_agent_get_info, Status, (Handle, int, void *))                                      \
	X(hsa_agent_iterate_regions, Status, (Handle, Status (*)(Handle, void *), void *))        \
	X(hsa_region_get_info, Status, (Handle, int, void *))                                     \
	X(hsa_memory_allocate, Status, (Handle, size_t, void **))                                 \
	X(hsa_memory_free, Status, (void *))                                                      \
	X(hsa_memory_copy, Status, (void *, const void *, size_t))                                \
	X(hsa_code_object_reader_create_from_memory, Status, (const void *, size_t, Handle *))    \
	X(hsa_code_object_reader_destroy, Status, (Handle))                                       \
	X(hsa_executable_create_alt, Status, (int, int, const char *, Handle *))                  \
	X(hsa_executable_load_agent_code_object, Status, (Handle, Handle, Handle, const char *, void *)) \
	X(hsa_executable_freeze, Status, (Handle, const char *))                                  \
	X(hsa_executable_destroy, Status, (Handle))                                               \
	X(hsa_executable_get_symbol_by_name, Status, (Handle, const char *, const Handle *, Handle *)) \
	X(hsa_executable_symbol_get_info, Status, (Handle, int, void *))                          \
	X(hsa_queue_create, Status, (Handle, uint32_t, int, void *, void *, uint32_t, uint32_t, Queue **)) \
	X(hsa_queue_destroy, Status, (Queue *))                                                   \
	X(hsa_queue_add_write_index_relaxed, uint64_t, (const Queue *, uint64_t))                 \
	X(hsa_signal_create, Status, (int64_t, uint32_t, const Handle *, Handle *))               \
	X(hsa_signal_destroy, Status, (Handle))                                                   \
	X(hsa_signal_store_screlease, void, (Handle, int64_t))                                    \
	X(hsa_signal_wait_scacquire, int64_t, (Handle, int, int64_t, uint64_t, int))

struct RocrRt {
	void *lib;
#define X(name, ret, args) ret(*name) args;
	HSA_FUNCS(X)
#undef X
	int inited;
	Handle agent, kernarg_region, mem_region;
	char agent_name[64];
	Handle exe, reader;
	int loaded;
	Queue *queue;
};

static void hsa_err(RocrRt *rt, Diag *d, const char *what, Status s)
{
	const char *msg = NULL;
	if (!rt->hsa_status_string || rt->hsa_status_string(s, &msg) != ST_SUCCESS || !msg)
		msg = "unknown HSA status";
	diag_error(d, "hsa: %s failed: %s (status 0x%x)", what, msg, (unsigned)s);
}

static Status find_gpu(Handle agent, void *user)
{
	RocrRt *rt = user;
	int type = 0;
	if (rt->hsa_agent_get_info(agent, AGENT_INFO_DEVICE, &type) == ST_SUCCESS && type == DEVICE_TYPE_GPU) {
		rt->agent = agent;
		return ST_INFO_BREAK;
	}
	return ST_SUCCESS;
}

static Status find_regions(Handle region, void *user)
{
	RocrRt *rt = user;
	int seg = -1;
	uint32_t flags = 0;
	if (rt->hsa_region_get_info(region, REGION_INFO_SEGMENT, &seg) != ST_SUCCESS || seg != REGION_SEGMENT_GLOBAL)
		return ST_SUCCESS;
	rt->hsa_region_get_info(region, REGION_INFO_GLOBAL_FLAGS, &flags);
	if ((flags & REGION_FLAG_KERNARG) && !rt->kernarg_region.handle)
		rt->kernarg_region = region;
	if ((flags & REGION_FLAG_COARSE) || ((flags & REGION_FLAG_FINE) && !rt->mem_region.handle))
		rt->mem_region = region;
	return ST_SUCCESS;
}

int rocr_open(const char *lib, RocrRt **out, Diag *d)
{
	*out = NULL;
	RocrRt *rt = calloc(1, sizeof *rt);
	if (!rt) {
		diag_error(d, "hsa: out of memory");
		return -1;
	}
	const char *name = lib ? lib : "libhsa-runtime64.so.1";
	rt->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!rt->lib) {
		const char *why = dlerror();
		diag_error(d, "hsa: cannot load the ROCm runtime %s (%s); install ROCm (see docs/rocm.md) or use "
			   "--backend=emu", name, why ? why : "not found");
		free(rt);
		return -1;
	}
#define X(fn, ret, args)                                                                           \
	*(void **)&rt->fn = dlsym(rt->lib, #fn);                                                   \
	if (!rt->fn) {                                                                             \
		diag_error(d, "hsa: %s has no symbol %s (too old a ROCm? see docs/rocm.md)", name, #fn); \
		rocr_close(rt);                                                                    \
		return -1;                                                                         \
	}
	HSA_FUNCS(X)
#undef X
	Status s = rt->hsa_init();
	if (s != ST_SUCCESS) {
		hsa_err(rt, d, "hsa_init (is there an AMD GPU and /dev/kfd?)", s);
		rocr_close(rt);
		return -1;
	}
	rt->inited = 1;
	s = rt->hsa_iterate_agents(find_gpu, rt);
	if ((s != ST_SUCCESS && s != ST_INFO_BREAK) || !rt->agent.handle) {
		diag_error(d, "hsa: no GPU agent found (ROCr is installed but sees no AMD GPU)");
		rocr_close(rt);
		return -1;
	}
	rt->hsa_agent_get_info(rt->agent, AGENT_INFO_NAME, rt->agent_name);
	rt->agent_name[sizeof rt->agent_name - 1] = 0;
	rt->hsa_agent_iterate_regions(rt->agent, find_regions, rt);
	if (!rt->kernarg_region.handle || !rt->mem_region.handle) {
		diag_error(d, "hsa: GPU agent %s has no kernarg or global memory region", rt->agent_name);
		rocr_close(rt);
		return -1;
	}
	s = rt->hsa_queue_create(rt->agent, 64, QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &rt->queue);
	if (s != ST_SUCCESS) {
		hsa_err(rt, d, "hsa_queue_create", s);
		rocr_close(rt);
		return -1;
	}
	*out = rt;
	return 0;
}

static void unload(RocrRt *rt)
{
	if (rt->loaded) {
		rt->hsa_executable_destroy(rt->exe);
		rt->hsa_code_object_reader_destroy(rt->reader);
		rt->loaded = 0;
	}
}

void rocr_close(RocrRt *rt)
{
	if (!rt)
		return;
	if (rt->inited) {
		unload(rt);
		if (rt->queue)
			rt->hsa_queue_destroy(rt->queue);
		rt->hsa_shut_down();
	}
	if (rt->lib)
		dlclose(rt->lib);
	free(rt);
}

const char *rocr_agent_name(const RocrRt *rt) { return rt->agent_name; }

int rocr_load(RocrRt *rt, const uint8_t *co, size_t n, Diag *d)
{
	unload(rt);
	Status s = rt->hsa_code_object_reader_create_from_memory(co, n, &rt->reader);
	if (s != ST_SUCCESS) {
		hsa_err(rt, d, "hsa_code_object_reader_create_from_memory", s);
		return -1;
	}
	s = rt->hsa_executable_create_alt(PROFILE_FULL, ROUND_DEFAULT, NULL, &rt->exe);
	if (s != ST_SUCCESS) {
		rt->hsa_code_object_reader_destroy(rt->reader);
		hsa_err(rt, d, "hsa_executable_create_alt", s);
		return -1;
	}
	rt->loaded = 1;
	s = rt->hsa_executable_load_agent_code_object(rt->exe, rt->agent, rt->reader, NULL, NULL);
	if (s != ST_SUCCESS) {
		hsa_err(rt, d, "loading the code object on the GPU (is the target the agent's ISA? the agent is "
			"an AMD GPU named in the next message)", s);
		diag_error(d, "hsa: agent %s", rt->agent_name);
		unload(rt);
		return -1;
	}
	s = rt->hsa_executable_freeze(rt->exe, NULL);
	if (s != ST_SUCCESS) {
		hsa_err(rt, d, "hsa_executable_freeze", s);
		unload(rt);
		return -1;
	}
	return 0;
}

uint64_t rocr_alloc(RocrRt *rt, size_t n, Diag *d)
{
	void *p = NULL;
	Status s = rt->hsa_memory_allocate(rt->mem_region, n ? n : 4, &p);
	if (s != ST_SUCCESS) {
		hsa_err(rt, d, "hsa_memory_allocate", s);
		return 0;
	}
	return (uint64_t)(uintptr_t)p;
}

void rocr_free(RocrRt *rt, uint64_t p)
{
	if (p)
		rt->hsa_memory_free((void *)(uintptr_t)p);
}

int rocr_copy_to(RocrRt *rt, uint64_t dst, const void *src, size_t n, Diag *d)
{
	Status s = rt->hsa_memory_copy((void *)(uintptr_t)dst, src, n);
	if (s != ST_SUCCESS)
		hsa_err(rt, d, "hsa_memory_copy to the device", s);
	return s == ST_SUCCESS ? 0 : -1;
}

int rocr_copy_from(RocrRt *rt, void *dst, uint64_t src, size_t n, Diag *d)
{
	Status s = rt->hsa_memory_copy(dst, (const void *)(uintptr_t)src, n);
	if (s != ST_SUCCESS)
		hsa_err(rt, d, "hsa_memory_copy from the device", s);
	return s == ST_SUCCESS ? 0 : -1;
}

int rocr_launch(RocrRt *rt, const char *name, const uint32_t grid[3], const uint32_t block[3],
		const void *kernarg, size_t kernarg_size, uint32_t dynamic_lds, Diag *d)
{
	if (!rt->loaded) {
		diag_error(d, "hsa: no code object loaded");
		return -1;
	}
	char sym[512];
	size_t nl = strlen(name);
	snprintf(sym, sizeof sym, "%s%s", name, nl > 3 && !strcmp(name + nl - 3, ".kd") ? "" : ".kd");
	Handle symbol;
	Status s = rt->hsa_executable_get_symbol_by_name(rt->exe, sym, &rt->agent, &symbol);
	if (s != ST_SUCCESS) {
		hsa_err(rt, d, sym, s);
		return -1;
	}
	uint64_t kobj = 0;
	uint32_t ksize = 0, gsize = 0, psize = 0;
	rt->hsa_executable_symbol_get_info(symbol, SYM_KERNEL_OBJECT, &kobj);
	rt->hsa_executable_symbol_get_info(symbol, SYM_KERNARG_SIZE, &ksize);
	rt->hsa_executable_symbol_get_info(symbol, SYM_GROUP_SIZE, &gsize);
	rt->hsa_executable_symbol_get_info(symbol, SYM_PRIVATE_SIZE, &psize);
	size_t kbytes = TA_MAX(TA_MAX((size_t)ksize, kernarg_size), (size_t)16);
	void *ka = NULL;
	s = rt->hsa_memory_allocate(rt->kernarg_region, kbytes, &ka);
	if (s != ST_SUCCESS) {
		hsa_err(rt, d, "allocating the kernarg segment", s);
		return -1;
	}
	memset(ka, 0, kbytes);
	if (kernarg_size)
		memcpy(ka, kernarg, kernarg_size);
	Handle done;
	s = rt->hsa_signal_create(1, 0, NULL, &done);
	if (s != ST_SUCCESS) {
		rt->hsa_memory_free(ka);
		hsa_err(rt, d, "hsa_signal_create", s);
		return -1;
	}
	uint64_t idx = rt->hsa_queue_add_write_index_relaxed(rt->queue, 1);
	uint8_t *pkt = (uint8_t *)rt->queue->base_address + 64 * (idx & (rt->queue->size - 1));
	memset(pkt + 4, 0, 60);
	uint16_t wg[3] = {(uint16_t)block[0], (uint16_t)block[1], (uint16_t)block[2]};
	uint32_t gs[3] = {grid[0] * block[0], grid[1] * block[1], grid[2] * block[2]}; /* work-items */
	uint32_t lds = gsize + dynamic_lds;
	uint64_t kaddr = (uint64_t)(uintptr_t)ka;
	memcpy(pkt + 4, wg, 6);
	memcpy(pkt + 12, gs, 12);
	/* Scratch bytes per work-item (PRIVATE_SEGMENT_FIXED_SIZE, for kernels
	 * that spill to scratch): CP grows the queue's scratch to fit it. */
	memcpy(pkt + 24, &psize, 4);
	memcpy(pkt + 28, &lds, 4);
	memcpy(pkt + 32, &kobj, 8);
	memcpy(pkt + 40, &kaddr, 8);
	memcpy(pkt + 56, &done.handle, 8);
	uint16_t setup = (uint16_t)(grid[2] > 1 ? 3 : grid[1] > 1 ? 2 : 1);
	uint16_t header = (uint16_t)(PACKET_KERNEL_DISPATCH | 1 << 8 | FENCE_SYSTEM << 9 | FENCE_SYSTEM << 11);
	/* The header goes last, with release semantics: the packet processor
	 * may read the packet as soon as the header is valid. */
	atomic_store_explicit((_Atomic uint32_t *)pkt, (uint32_t)header | (uint32_t)setup << 16, memory_order_release);
	rt->hsa_signal_store_screlease(rt->queue->doorbell_signal, (int64_t)idx);
	while (rt->hsa_signal_wait_scacquire(done, COND_LT, 1, UINT64_MAX, WAIT_BLOCKED) != 0)
		;
	rt->hsa_signal_destroy(done);
	rt->hsa_memory_free(ka);
	return 0;
}
