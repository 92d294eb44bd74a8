/* libunwind remote address space with accessors over a captured thread: registers from
 * the capture, stack from its copy, read-only memory from ELF files, the rest from
 * cached /proc/PID/mem pages. Unwind tables come from each object's .eh_frame_hdr, found
 * once per object and searched by libunwind through the same accessors. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <libunwind.h>

#include "proc/maps.h"
#include "snapshot/snapshot.h"
#include "symbol/dso.h"
#include "unwind/memcache.h"
#include "unwind/unwind.h"
#include "util/util.h"

/* Exported by libunwind but not declared in its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

struct unwinder {
	pid_t pid;
	struct proc_maps *maps;
	unw_addr_space_t as;
	struct memcache *mem;
	struct thread_sample *cur;  /* the thread being unwound */
	bool no_live;		    /* never read the live process's memory */
	struct unwind_reads *reads; /* noting the reads, when set */
	uint64_t bad_addr;	    /* what ended the last unwind outside the maps */
};

/* The executable mapping of the object mapped by m, and the object itself. */
static struct dso *map_dso(struct unwinder *u, struct map_entry *m)
{
	if (!m->path || m->path[0] == '\0')
		return NULL;
	if (!m->dso)
		m->dso = dso__get(u->pid, m);
	return m->dso;
}

/* Reads a word of read-only file-backed memory from the object's file (the vdso's from
 * its copy). */
static int read_from_file(struct unwinder *u, uint64_t addr, uint64_t *val)
{
	struct map_entry *m = proc_maps__find(u->maps, addr);
	struct dso *dso;

	if (!m || (m->prot & PROT_WRITE) || !m->path ||
	    (m->path[0] == '[' && strcmp(m->path, "[vdso]")))
		return -EFAULT;
	dso = map_dso(u, m);
	if (!dso)
		return -EFAULT;
	return dso__read(dso, addr - dso__load_bias(dso, m), val, 8);
}

/* One word of the stack copy read, at off from its start: kept once, in order. */
static void note_read(struct unwind_reads *r, uint64_t off, uint64_t val)
{
	unsigned int i;

	if (!r || r->uncheckable)
		return;
	/* libunwind reads a word again as it steps: look back a little. */
	for (i = r->nr > 4 ? r->nr - 4 : 0; i < r->nr; i++)
		if (r->off[i] == off)
			return;
	if (r->nr == UNWIND_READS_MAX) {
		r->uncheckable = true;
		return;
	}
	r->off[r->nr] = off;
	r->val[r->nr++] = val;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	struct unwinder *u = arg;
	struct thread_sample *t = u->cur;
	uint64_t v;

	if (write)
		return -UNW_EINVAL;
	if (t->stack_data && addr >= t->stack_addr && addr + 8 <= t->stack_addr + t->stack_len) {
		memcpy(valp, t->stack_data + (addr - t->stack_addr), 8);
		note_read(u->reads, addr - t->stack_addr, *valp);
		return 0;
	}
	/* Read-only file contents do not change while the maps do not. */
	if (read_from_file(u, addr, &v) == 0) {
		*valp = v;
		return 0;
	}
	if (!u->no_live && memcache__read_word(u->mem, addr, &v) == 0) {
		if (u->reads)
			u->reads->uncheckable = true;
		*valp = v;
		return 0;
	}
	if (u->reads && addr >= t->stack_addr && addr - t->stack_addr < u->reads->copy_limit)
		u->reads->uncheckable = true;
	return -UNW_EINVAL;
}

/* Where each libunwind register number lives in the captured registers. */
#define REG(unw, field) [UNW_X86_64_##unw] = offsetof(struct user_regs_struct, field) + 1
static const size_t reg_offset[] = {
	REG(RAX, rax), REG(RDX, rdx), REG(RCX, rcx), REG(RBX, rbx), REG(RSI, rsi), REG(RDI, rdi),
	REG(RBP, rbp), REG(RSP, rsp), REG(R8, r8),   REG(R9, r9),   REG(R10, r10), REG(R11, r11),
	REG(R12, r12), REG(R13, r13), REG(R14, r14), REG(R15, r15), REG(RIP, rip),
};
#undef REG

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
	struct unwinder *u = arg;

	if (write)
		return -UNW_EREADONLYREG;
	/* Offsets are stored + 1 so that 0 marks a register we do not have. */
	if (reg < 0 || (size_t)reg >= ARRAY_SIZE(reg_offset) || !reg_offset[reg])
		return -UNW_EBADREG;
	memcpy(valp, (const char *)&u->cur->regs + reg_offset[reg] - 1, sizeof(*valp));
	if (u->reads)
		u->reads->regs |= 1ull << ((reg_offset[reg] - 1) / 8);
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	return -UNW_ENOINFO;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

/* .eh_frame_hdr: version, eh_frame_ptr encoding, fde_count encoding, table encoding,
 * then eh_frame_ptr, fde_count and a sorted table of (initial location, FDE address)
 * pairs. libunwind binary-searches that table when it is datarel sdata4 (0x3b). */
#define DW_EH_PE_udata4	 0x03
#define DW_EH_PE_sdata4	 0x0b
#define DW_EH_PE_pcrel	 0x10
#define DW_EH_PE_datarel 0x30

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct unwinder *u = arg;
	struct map_entry *m = proc_maps__find(u->maps, ip);
	struct dso *dso;
	uint64_t hdr, size;
	uint8_t h[12];
	uint32_t fde_count;
	int64_t bias;
	unw_dyn_info_t di;

	if (!m || !(m->prot & PROT_EXEC))
		return -UNW_ENOINFO;
	dso = map_dso(u, m);
	if (!dso || dso__eh_frame_hdr(dso, &hdr, &size) || size < sizeof(h) ||
	    dso__read(dso, hdr, h, sizeof(h)))
		return -UNW_ENOINFO;
	if (h[0] != 1 || h[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) || h[2] != DW_EH_PE_udata4 ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -UNW_ENOINFO;
	memcpy(&fde_count, h + 8, 4);
	bias = dso__load_bias(dso, m);
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = hdr + bias;
	di.u.rti.table_data = hdr + 12 + bias;
	/* In words: each entry is two 4-byte values. */
	di.u.rti.table_len = (uint64_t)fde_count * 8 / sizeof(unw_word_t);
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, u);
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

struct unwinder *unwinder__new(pid_t pid, struct proc_maps *maps)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->pid = pid;
	u->maps = maps;
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	u->mem = memcache__new(pid);
	return u;
}

void unwinder__delete(struct unwinder *u)
{
	if (!u)
		return;
	unw_destroy_addr_space(u->as);
	memcache__delete(u->mem);
	free(u);
}

void unwinder__set_maps(struct unwinder *u, struct proc_maps *maps)
{
	u->maps = maps;
	unw_flush_cache(u->as, 0, 0);
	memcache__flush(u->mem);
}

void unwinder__set_live_memory(struct unwinder *u, bool live)
{
	u->no_live = !live;
}

void unwinder__new_sample(struct unwinder *u)
{
	memcache__flush(u->mem);
}

void unwinder__note_reads(struct unwinder *u, struct unwind_reads *r)
{
	u->reads = r;
}

uint64_t unwinder__bad_address(const struct unwinder *u)
{
	return u->bad_addr;
}

/* Whether ip can be a frame: inside an executable mapping. A return address anywhere else
 * was read from a stack slot that holds something else (a frame without frame pointer
 * walked as one, a copy taken while the thread ran on). */
static bool executable(const struct unwinder *u, uint64_t ip)
{
	const struct map_entry *m = u->maps ? proc_maps__find(u->maps, ip) : NULL;

	return m && (m->prot & PROT_EXEC);
}

int unwinder__unwind(struct unwinder *u, struct thread_sample *t)
{
	unw_cursor_t c;
	unw_word_t ip, prev_sp = 0, sp;
	int r;

	t->nr_ips = 0;
	t->flags &= ~THREAD_TRUNCATED;
	u->bad_addr = 0;
	if (u->reads) {
		uint64_t limit = u->reads->copy_limit;

		memset(u->reads, 0, offsetof(struct unwind_reads, off));
		u->reads->copy_limit = limit;
	}
	if (!(t->flags & THREAD_HAVE_REGS))
		return -ENODATA;
	u->cur = t;
	r = unw_init_remote(&c, u->as, u);
	if (r < 0) {
		if (executable(u, t->regs.rip))
			t->ips[t->nr_ips++] = t->regs.rip;
		t->flags |= THREAD_TRUNCATED;
		u->cur = NULL;
		return -EINVAL;
	}
	do {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		unw_get_reg(&c, UNW_REG_SP, &sp);
		/* Each caller's frame is above its callee's: a CFA that does not grow is a
		 * loop or garbage. */
		if (t->nr_ips && sp <= prev_sp) {
			t->flags |= THREAD_TRUNCATED;
			break;
		}
		if (!executable(u, ip)) {
			u->bad_addr = ip;
			t->flags |= THREAD_TRUNCATED;
			break;
		}
		prev_sp = sp;
		t->ips[t->nr_ips++] = ip;
		if (t->nr_ips == SNAP_MAX_FRAMES) {
			t->flags |= THREAD_TRUNCATED;
			break;
		}
		r = unw_step(&c);
	} while (r > 0);
	if (r < 0)
		t->flags |= THREAD_TRUNCATED;
	u->cur = NULL;
	return 0;
}
