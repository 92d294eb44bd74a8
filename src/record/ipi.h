/* The recorder's IPI programs: which of x86's system vectors are tracked as wakers'
 * contexts on this kernel, and whether the IPIs sent are recorded (record --ipi). */
#ifndef SRVSCOPE_RECORD_IPI_H
#define SRVSCOPE_RECORD_IPI_H

#include <stdbool.h>
#include <stddef.h>

struct record_bpf;

struct record_ipi {
	unsigned int vectors; /* bit v: enum ipi_vector v is tracked */
	bool sends;	      /* REC_IPI_SEND records are written */
};

/* Between the skeleton's open and load: the programs of every vector whose tracepoints this
 * kernel has are kept, the others left unloaded; the send programs only with sends (and
 * the tracepoints). nr_cpus: the possible CPUs. */
void record_ipi__select(struct record_bpf *skel, bool sends, int nr_cpus, struct record_ipi *ri);
/* Between the open and the load: the entry and exit programs of the vectors (bits) left
 * unloaded, and those vectors no longer tracked in ri. */
void record_ipi__contexts_off(struct record_bpf *skel, unsigned int vectors, struct record_ipi *ri);
/* The info section's lines: "ipi=0|1\nipi_contexts=irq_work,...\n". Returns the length. */
size_t record_ipi__info(const struct record_ipi *ri, char *buf, size_t size);

#endif
