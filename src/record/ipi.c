/* The recorder's IPI programs: x86's system vectors tracked as wakers' contexts (always, where
 * the kernel has their tracepoints) and the IPIs sent (record --ipi). A kernel or an
 * architecture without some of these tracepoints gets those programs left unloaded: the
 * recording starts without them, and says so in the trace's info. */
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "analysis/blocking.h"
#include "bpf/record.h"
#include "record/ipi.h"
#include "record/kbtf.h"
#include "record.skel.h"
#include "util/util.h"

void record_ipi__select(struct record_bpf *skel, bool sends, int nr_cpus, struct record_ipi *ri)
{
	char entry[64], exit[64];
	unsigned int v;

	memset(ri, 0, sizeof(*ri));
	/* A vector's name is its tracepoints' stem (irq_vectors:NAME_entry and NAME_exit) and
	 * its programs'. Entry and exit go together: an entry whose exit is missing would leave
	 * every later wake-up on that CPU put down to the vector. */
	for (v = 0; v < IPI_VECTORS; v++) {
		snprintf(entry, sizeof(entry), "%s_entry", blocking__ipi_name(v));
		snprintf(exit, sizeof(exit), "%s_exit", blocking__ipi_name(v));
		if (kbtf__has_tracepoint(entry) && kbtf__has_tracepoint(exit))
			ri->vectors |= 1u << v;
	}
	record_ipi__contexts_off(skel, ~ri->vectors, ri);
	ri->sends = sends && kbtf__has_tracepoint("ipi_send_cpu") &&
		    kbtf__has_tracepoint("ipi_send_cpumask");
	if (sends && !ri->sends)
		warning("this kernel has no ipi:ipi_send_cpu and ipi_send_cpumask tracepoints "
			"(Linux 6.3 and later have them): the IPIs sent are not recorded, and "
			"'critical' shows waits ended by IPIs without their senders");
	if (!ri->sends) {
		bpf_program__set_autoload(skel->progs.ipi_send_cpu, false);
		bpf_program__set_autoload(skel->progs.ipi_send_cpu2, false);
		bpf_program__set_autoload(skel->progs.ipi_send_cpumask, false);
		bpf_program__set_autoload(skel->progs.ipi_send_cpumask2, false);
	}
	skel->rodata->ipi_nr_cpus = nr_cpus > 0 ? nr_cpus : 1;
}

void record_ipi__contexts_off(struct record_bpf *skel, unsigned int vectors, struct record_ipi *ri)
{
	char name[64];
	unsigned int v;
	int i;

	for (v = 0; v < IPI_VECTORS; v++) {
		if (!(vectors & (1u << v)))
			continue;
		for (i = 0; i < 2; i++) {
			snprintf(name, sizeof(name), "%s_%s", blocking__ipi_name(v),
				 i ? "exit" : "entry");
			bpf_program__set_autoload(bpf_object__find_program_by_name(skel->obj, name),
						  false);
		}
		ri->vectors &= ~(1u << v);
	}
}

size_t record_ipi__info(const struct record_ipi *ri, char *buf, size_t size)
{
	size_t n = snprintf(buf, size, "ipi=%d\nipi_contexts=", ri->sends);
	unsigned int v;
	const char *sep = "";

	for (v = 0; v < IPI_VECTORS && n < size; v++)
		if (ri->vectors & (1u << v)) {
			n += snprintf(buf + n, size - n, "%s%s", sep, blocking__ipi_name(v));
			sep = ",";
		}
	if (n < size)
		n += snprintf(buf + n, size - n, "\n");
	return n < size ? n : size;
}
