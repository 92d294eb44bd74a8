/* Fuzz target for the parsers of user-written files of 'srvscope cpu': a components file
 * (--components) and folded stacks (--folded). Any bytes must parse or be refused with a
 * message naming a line, and the rules read must classify without crashing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct comp_table *t = comp_table__new();
	struct cpu_profile *p = cpu_profile__new(2);
	struct cpu_comp_share cs;
	struct cpu_func_row *rows;
	char err[256] = "";
	size_t nr;
	int ret;

	ret = comp_table__parse(t, "fuzz", (const char *)data, size, err, sizeof(err));
	if (ret && strncmp(err, "fuzz:", 5))
		__builtin_trap(); /* a refusal names the file and the line */
	comp_table__classify(t, "tcp_sendmsg", true);
	comp_table__classify(t, "memcpy_orig.isra.0", true);
	comp_table__classify(t, "main", false);
	comp_table__classify(t, "", true);
	ret = cpu_profile__parse_folded(p, "fuzz", (const char *)data, size, err, sizeof(err));
	cpu_profile__classify(p, t);
	cpu_profile__components(p, t, size & 1, NULL, NULL, &cs);
	if (cs.unmatched > cs.kernel_total)
		__builtin_trap();
	cpu_comp_share__free(&cs);
	rows = cpu_profile__functions(p, &nr);
	free(rows);
	cpu_profile__delete(p);
	comp_table__delete(t);
	return 0;
}
