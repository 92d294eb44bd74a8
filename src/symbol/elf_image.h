/* An ELF file held in memory and opened with libelf: the common ground of mapped objects,
 * their separate debug files and the vdso copy. Also reads the GNU build-id note and the
 * .gnu_debuglink section. Internal to src/symbol. */
#ifndef SRVSCOPE_SYMBOL_ELF_IMAGE_H
#define SRVSCOPE_SYMBOL_ELF_IMAGE_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct elf_image {
	void *data; /* the whole file */
	size_t size;
	bool mapped; /* data is an mmap (else malloc'd) */
	Elf *elf;
};

/* Maps the file at path and opens it with libelf. *st (may be NULL) receives its fstat.
 * Returns 0, -ENOEXEC when it is not ELF, or another -errno. */
int elf_image__open(struct elf_image *img, const char *path, struct stat *st);
/* Opens an ELF image held in malloc'd memory; takes ownership of buf even on failure. */
int elf_image__from_memory(struct elf_image *img, void *buf, size_t size);
/* Releases everything; accepts an image that was never opened (zeroed). */
void elf_image__close(struct elf_image *img);

/* Writes the lower-case hex GNU build-id to hex (NUL-terminated). 0 or -ENOENT. */
int elf_image__build_id(const struct elf_image *img, char *hex, size_t hexlen);
/* The first section called name with its header, or NULL. */
Elf_Scn *elf_image__section(const struct elf_image *img, const char *name, GElf_Shdr *shdr);
/* The file name and CRC32 recorded in .gnu_debuglink. 0 or -ENOENT. */
int elf_image__debuglink(const struct elf_image *img, const char **name, uint32_t *crc);

#endif
