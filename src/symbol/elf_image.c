/* Holding ELF files in memory for libelf, and the two notes every symbol lookup needs first:
 * the GNU build-id and the .gnu_debuglink name + CRC. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbol/elf_image.h"
#include "util/safefile.h"

static void libelf_init(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

static int image_begin(struct elf_image *img)
{
	libelf_init();
	if (img->size < EI_NIDENT || memcmp(img->data, ELFMAG, SELFMAG))
		return -ENOEXEC;
	img->elf = elf_memory(img->data, img->size);
	if (!img->elf)
		return -ENOEXEC;
	if (elf_kind(img->elf) != ELF_K_ELF) {
		elf_end(img->elf);
		img->elf = NULL;
		return -ENOEXEC;
	}
	return 0;
}

int elf_image__open(struct elf_image *img, const char *path, struct stat *st)
{
	struct stat sb;
	void *p;
	int fd, err;

	memset(img, 0, sizeof(*img));
	/* The path comes from a target's maps or from a trace: it may name a FIFO. */
	fd = safefile__open_read(path, &sb);
	if (fd == -EINVAL || fd == -EISDIR)
		return -ENOEXEC;
	if (fd < 0)
		return fd;
	if (sb.st_size < EI_NIDENT) {
		err = -ENOEXEC;
		goto out_close;
	}
	/* Private and writable: libelf may fix up data in place (it is allowed to with
	 * elf_memory), and a copy-on-write page is harmless; MAP_NORESERVE because nothing is
	 * ever meant to be written, so no swap needs to be committed for large debug files. */
	p = mmap(NULL, sb.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto out_close;
	}
	close(fd);
	img->data = p;
	img->size = sb.st_size;
	img->mapped = true;
	if (st)
		*st = sb;
	err = image_begin(img);
	if (err)
		elf_image__close(img);
	return err;

out_close:
	close(fd);
	return err;
}

int elf_image__from_memory(struct elf_image *img, void *buf, size_t size)
{
	int err;

	memset(img, 0, sizeof(*img));
	img->data = buf;
	img->size = size;
	err = image_begin(img);
	if (err)
		elf_image__close(img);
	return err;
}

void elf_image__close(struct elf_image *img)
{
	if (!img)
		return;
	if (img->elf)
		elf_end(img->elf);
	if (img->data) {
		if (img->mapped)
			munmap(img->data, img->size);
		else
			free(img->data);
	}
	memset(img, 0, sizeof(*img));
}

static int notes_build_id(Elf_Data *d, char *hex, size_t hexlen)
{
	size_t pos = 0, next, name_off, desc_off, i;
	GElf_Nhdr nh;

	if (!d || !d->d_buf)
		return -ENOENT;
	while ((next = gelf_getnote(d, pos, &nh, &name_off, &desc_off)) > 0) {
		const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    !memcmp((char *)d->d_buf + name_off, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) &&
		    nh.n_descsz > 0 && nh.n_descsz * 2 < hexlen) {
			for (i = 0; i < nh.n_descsz; i++) {
				hex[2 * i] = "0123456789abcdef"[desc[i] >> 4];
				hex[2 * i + 1] = "0123456789abcdef"[desc[i] & 15];
			}
			hex[2 * i] = '\0';
			return 0;
		}
		pos = next;
	}
	return -ENOENT;
}

int elf_image__build_id(const struct elf_image *img, char *hex, size_t hexlen)
{
	Elf *elf = img->elf;
	Elf_Scn *scn = NULL;
	size_t i, nr;

	/* Program headers first: they are what a loaded object is known by, and they survive
	 * strip --strip-sections; debug files keep the section instead. */
	if (elf_getphdrnum(elf, &nr) == 0) {
		for (i = 0; i < nr; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
				continue;
			if (ph.p_offset >= img->size || ph.p_filesz > img->size - ph.p_offset)
				continue;
			d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (notes_build_id(d, hex, hexlen) == 0)
				return 0;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (notes_build_id(elf_getdata(scn, NULL), hex, hexlen) == 0)
			return 0;
	}
	return -ENOENT;
}

Elf_Scn *elf_image__section(const struct elf_image *img, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(img->elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(img->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(img->elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int elf_image__debuglink(const struct elf_image *img, const char **name, uint32_t *crc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_image__section(img, ".gnu_debuglink", &sh);
	Elf_Data *d;
	const char *p;
	size_t len, crc_off;

	if (!scn || sh.sh_type == SHT_NOBITS)
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < 6)
		return -ENOENT;
	p = d->d_buf;
	len = strnlen(p, d->d_size);
	/* The name, its NUL, padding to 4, then the CRC in the object's byte order. */
	crc_off = (len + 1 + 3) & ~(size_t)3;
	if (len == 0 || crc_off + 4 > d->d_size)
		return -ENOENT;
	memcpy(crc, p + crc_off, 4);
	if ((elf_getident(img->elf, NULL)[EI_DATA] == ELFDATA2MSB) !=
	    (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		*crc = __builtin_bswap32(*crc);
	*name = p;
	return 0;
}
