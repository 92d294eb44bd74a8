/* Per-CPU variables of the running kernel, located from its BTF: pahole encodes every
 * per-CPU variable with its offset in the .data..percpu section. */
#include <string.h>

#include <bpf/btf.h>

#include "record/percpu.h"

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

int64_t percpu__preempt_count_off(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
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
	btf__free(btf);
	return off;
}
