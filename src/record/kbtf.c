/* The running kernel's BTF, parsed once: its raw tracepoints (libbpf_find_vmlinux_btf_id
 * would parse it again for each name) and its per-CPU variables (pahole encodes each with
 * its offset in the .data..percpu section). */
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "record/kbtf.h"

static struct btf *kbtf;
static bool kbtf_tried;

static const struct btf *kernel_btf(void)
{
	if (!kbtf_tried) {
		kbtf = btf__load_vmlinux_btf(); /* NULL when it cannot */
		kbtf_tried = true;
	}
	return kbtf;
}

void kbtf__release(void)
{
	btf__free(kbtf);
	kbtf = NULL;
	kbtf_tried = false;
}

bool kbtf__has_tracepoint(const char *name)
{
	const struct btf *btf = kernel_btf();
	char type[128];

	if (!btf || snprintf(type, sizeof(type), "btf_trace_%s", name) >= (int)sizeof(type))
		return false;
	return btf__find_by_name_kind(btf, type, BTF_KIND_TYPEDEF) > 0;
}

/* The offset of member name in struct type id of btf, -1 when it has none. */
static int64_t member_off(const struct btf *btf, uint32_t id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	const struct btf_member *m;
	int i;

	if (!t || !btf_is_struct(t))
		return -1;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), name))
			return btf_member_bit_offset(t, i) / 8;
	return -1;
}

int64_t kbtf__preempt_count_off(void)
{
	const struct btf *btf = kernel_btf();
	int64_t pc = -1, rq = -1, off = 0;
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	int id, i;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	sec = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0, v = sec ? btf_var_secinfos(sec) : NULL; sec && i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);
		const char *name = var ? btf__name_by_offset(btf, var->name_off) : NULL;
		int64_t m;

		if (!name)
			continue;
		if (!strcmp(name, "runqueues"))
			rq = v->offset;
		else if (!strcmp(name, "__preempt_count") && v->size == 4)
			pc = v->offset;
		else if (!strcmp(name, "pcpu_hot") && pc < 0 &&
			 (m = member_off(btf, var->type, "preempt_count")) >= 0)
			pc = v->offset + m;
	}
	if (pc >= 0 && rq >= 0)
		off = pc - rq;
	return off;
}
