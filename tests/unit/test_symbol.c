/* Unit tests of the symbol layer against real objects: this test binary, libc and its
 * Debian debug file, the vdso, stripped objects with .gnu_debuglink built on the fly, a
 * non-PIE child process, perf maps and kallsyms. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/maps.h"
#include "symbol/demangle.h"
#include "symbol/dso.h"
#include "symbol/perfmap.h"
#include "symbol/symbolizer.h"
#include "unit.h"
#include "util/util.h"

/* Sanitizers slow parsing several times over: time limits are only checked without. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TIMING_CHECKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TIMING_CHECKS 0
#endif
#endif
#ifndef TIMING_CHECKS
#define TIMING_CHECKS 1
#endif

static char tmpdir[] = "/tmp/srvscope-symtest.XXXXXX";

__attribute__((noinline)) int symtest_target_fn(int x)
{
	/* Big enough that offsets a few bytes in stay inside it. */
	volatile int a = x;

	a = a * 3 + 1;
	a = a ^ 0x55;
	return a + x;
}

static uintptr_t cmp_return_address;

__attribute__((noinline)) static int cmp_int(const void *a, const void *b)
{
	cmp_return_address = (uintptr_t)__builtin_return_address(0);
	return *(const int *)a - *(const int *)b;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	if (r)
		printf("# command failed (%d): %s\n", r, cmd);
	return r;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void test_demangle(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"_ZN3foo3barEi", "foo::bar(int)"},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi",
		 "std::vector<int, std::allocator<int> >::push_back(int const&)"},
		{"_ZNSsC1Ev", "std::basic_string<char, std::char_traits<char>, "
			      "std::allocator<char> >::basic_string()"},
		{"_Z3fooi.cold", "foo(int) [clone .cold]"},
		{"_ZN3foo3barEi@@VER", "foo::bar(int)@@VER"},
		{"_ZSt4cout", "std::cout"},
	};
	size_t i;
	char *d;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		d = symbol__demangle(cases[i].in);
		is_str(d, cases[i].want, "demangle %s", cases[i].in);
		free(d);
	}
	ok(symbol__demangle("main") == NULL, "a C name is not demangled");
	ok(symbol__demangle("_Znotmangled") == NULL, "garbage after _Z is not demangled");

	/* Same text as c++filt for everything above. */
	{
		char cmd[1024] = "printf '%s\\n'", line[512];
		FILE *f;
		bool same = true;

		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			strcat(cmd, " '");
			strcat(cmd, cases[i].in);
			strcat(cmd, "'");
		}
		/* Through stdin, as c++filt is used on tools' output: there it keeps a
		 * version suffix after the demangled name. */
		strcat(cmd, " | c++filt");
		f = popen(cmd, "r");
		for (i = 0; f && i < ARRAY_SIZE(cases) && fgets(line, sizeof(line), f); i++) {
			line[strcspn(line, "\n")] = '\0';
			d = symbol__demangle(cases[i].in);
			if (!d || strcmp(d, line)) {
				printf("# c++filt says '%s', we say '%s'\n", line,
				       d ? d : "(null)");
				same = false;
			}
			free(d);
		}
		ok(f && i == ARRAY_SIZE(cases) && same, "output identical to c++filt");
		if (f)
			pclose(f);
	}
}

struct phdr_info {
	uintptr_t addr; /* an address inside the object looked for */
	uintptr_t bias;
	uintptr_t eh_vaddr, eh_size;
	bool found;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct phdr_info *pi = data;
	int i;
	bool inside = false;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && pi->addr >= info->dlpi_addr + ph->p_vaddr &&
		    pi->addr < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
			inside = true;
	}
	if (!inside)
		return 0;
	pi->found = true;
	pi->bias = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) {
			pi->eh_vaddr = info->dlpi_phdr[i].p_vaddr;
			pi->eh_size = info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

/* Mixed addresses of libc and of this binary, resolved cold: includes opening libc and
 * loading its debug file's symbols. */
static void test_speed(void)
{
	struct proc_maps *maps = proc_maps__read(getpid());
	uintptr_t libc = (uintptr_t)dlsym(RTLD_DEFAULT, "epoll_wait");
	uintptr_t self = (uintptr_t)symtest_target_fn;
	struct symbolizer *s;
	struct sym_result r;
	uint64_t t0, t1;
	int i, named = 0;

	dso__cache_flush();
	s = symbolizer__new(getpid(), maps);
	t0 = now_ns();
	for (i = 0; i < 20000; i++) {
		/* 2000 distinct addresses, each seen 10 times, like stacks of many threads. */
		uintptr_t a = (i % 2 ? libc - 0x40000 + (i % 2000) * 97 : self + (i % 2000) % 40);

		symbolizer__resolve(s, a, &r);
		named += r.symbol != NULL;
	}
	t1 = now_ns();
	printf("# 20000 frames in %.2f ms\n", (t1 - t0) / 1e6);
	ok(!TIMING_CHECKS || t1 - t0 < 100000000ull,
	   "20,000 frames symbolized in under 100 ms, cold caches%s",
	   TIMING_CHECKS ? "" : " # SKIP sanitizer build");
	ok(named > 15000, "most of them named (%d)", named);
	symbolizer__delete(s);
	proc_maps__delete(maps);
}

static void test_self(void)
{
	struct proc_maps *maps = proc_maps__read(getpid());
	struct symbolizer *s = symbolizer__new(getpid(), maps);
	uintptr_t fn = (uintptr_t)symtest_target_fn;
	struct map_entry *m;
	struct sym_result r, r2;
	struct phdr_info pi = {.addr = fn};
	char exe[PATH_MAX];
	unsigned char buf[16];
	uint64_t vaddr, ehv, ehs;
	struct dso *d, *d2;
	const char *bid;

	ok(maps != NULL, "read own maps");
	symbolizer__resolve(s, fn, &r);
	is_str(r.symbol, "symtest_target_fn", "own function by name");
	is_int(r.offset, 0, "own function at offset 0");
	ok(!r.kernel, "user frame is not kernel");
	ok(realpath("/proc/self/exe", exe) && r.module && !strcmp(r.module, exe),
	   "module is the executable's path (%s)", r.module);
	symbolizer__resolve(s, fn + 5, &r);
	is_str(r.symbol, "symtest_target_fn", "inside own function");
	is_int(r.offset, 5, "offset inside own function");
	symbolizer__resolve(s, fn + 5, &r2);
	ok(r.symbol == r2.symbol && r.offset == r2.offset, "second lookup served from the cache");

	m = proc_maps__find(maps, fn);
	d = m ? m->dso : NULL;
	ok(d != NULL, "symbolizer stored the dso in the map entry");
	dl_iterate_phdr(phdr_cb, &pi);
	ok(pi.found, "dl_iterate_phdr knows this binary");
	if (d && pi.found) {
		is_int(dso__load_bias(d, m), pi.bias, "load bias matches the dynamic loader's");
		vaddr = fn - dso__load_bias(d, m);
		ok(dso__read(d, vaddr, buf, sizeof(buf)) == 0 &&
			   !memcmp(buf, (void *)fn, sizeof(buf)),
		   "dso__read serves the same bytes as the mapped code");
		is_int(dso__read(d, 0x7fffffffffff0000ull, buf, 8), -EFAULT,
		       "dso__read outside every segment");
		ok(dso__eh_frame_hdr(d, &ehv, &ehs) == 0 && ehv == pi.eh_vaddr && ehs == pi.eh_size,
		   "eh_frame_hdr matches PT_GNU_EH_FRAME");
		d2 = dso__get(getpid(), m);
		ok(d2 == d, "dso__get of the same map returns the cached object");
		dso__put(d2);
	}
	bid = d ? dso__build_id(d) : NULL;
	{
		char cmd[PATH_MAX + 64], line[256], *p;
		FILE *f;
		bool match = false;

		snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", exe);
		f = popen(cmd, "r");
		while (f && fgets(line, sizeof(line), f))
			if ((p = strstr(line, "Build ID: "))) {
				p[10 + strcspn(p + 10, "\n")] = '\0';
				match = bid && !strcmp(p + 10, bid);
			}
		if (f)
			pclose(f);
		ok(match, "build-id agrees with readelf (%s)", bid ? bid : "none");
	}

	symbolizer__resolve(s, 0x1000, &r);
	ok(r.symbol == NULL && !strcmp(r.module, "[unknown]") && r.offset == 0x1000,
	   "unmapped address is [unknown] + absolute address");

	/* Same library through two of its maps (text and read-only data) shares one dso. */
	{
		uintptr_t ew = (uintptr_t)dlsym(RTLD_DEFAULT, "epoll_wait");
		struct map_entry *mt = proc_maps__find(maps, ew), *mr = NULL;
		size_t i;

		for (i = 0; mt && i < maps->nr; i++)
			if (&maps->maps[i] != mt && maps->maps[i].path &&
			    !strcmp(maps->maps[i].path, mt->path) &&
			    maps->maps[i].inode == mt->inode)
				mr = &maps->maps[i];
		if (mt && mr) {
			struct dso *a = dso__get(getpid(), mt), *b = dso__get(getpid(), mr);

			ok(a && a == b, "two maps of libc share one dso");
			ok(a && dso__load_bias(a, mt) == dso__load_bias(a, mr),
			   "and agree on the load bias");
			dso__put(a);
			dso__put(b);
		} else {
			ok(0, "found two maps of libc");
		}
	}

	symbolizer__set_maps(s, maps);
	symbolizer__resolve(s, fn, &r);
	is_str(r.symbol, "symtest_target_fn", "still resolves after set_maps");
	symbolizer__delete(s);
	proc_maps__delete(maps);
}

static void test_libc(void)
{
	struct proc_maps *maps = proc_maps__read(getpid());
	struct symbolizer *s = symbolizer__new(getpid(), maps);
	uintptr_t ew = (uintptr_t)dlsym(RTLD_DEFAULT, "epoll_wait");
	int v[8] = {5, 3, 7, 1, 9, 2, 8, 4};
	struct sym_result r;
	struct map_entry *m;
	Dl_info info;

	ok(ew != 0, "dlsym found epoll_wait");
	symbolizer__resolve(s, ew, &r);
	is_str(r.symbol, "epoll_wait", "libc's epoll_wait");
	is_int(r.offset, 0, "at offset 0");
	ok(r.module && strstr(r.module, "libc.so"), "module is libc (%s)", r.module);
	m = proc_maps__find(maps, ew);
	ok(m && m->dso && starts_with(dso__debug_path(m->dso), "/usr/lib/debug/.build-id/"),
	   "libc's symbols come from its build-id debug file (%s)",
	   m && m->dso ? dso__debug_path(m->dso) : "none");

	/* msort_with_tmp is local to libc: only the debug file names it. */
	qsort(v, 8, sizeof(v[0]), cmp_int);
	ok(cmp_return_address != 0, "comparator saw its return address");
	symbolizer__resolve(s, cmp_return_address, &r);
	ok(starts_with(r.symbol, "msort_with_tmp"), "qsort's internal caller is %s",
	   r.symbol ? r.symbol : "(null)");
	ok(r.offset > 0, "return address is inside it (+%#llx)", (unsigned long long)r.offset);
	ok(!dladdr((void *)cmp_return_address, &info) || !info.dli_sname ||
		   !starts_with(info.dli_sname, "msort_with_tmp"),
	   "the dynamic symbol table alone could not have named it");

	/* Aliases: libc's debug .symtab has malloc, __libc_malloc, __malloc and
	 * __GI___libc_malloc at one address; the plain global name is the one shown. */
	{
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		uintptr_t a = libc ? (uintptr_t)dlsym(libc, "malloc") : 0;
		uintptr_t b = libc ? (uintptr_t)dlsym(libc, "__read") : 0;

		symbolizer__resolve(s, a, &r);
		is_str(r.symbol, "malloc", "malloc chosen among its aliases");
		symbolizer__resolve(s, b, &r);
		is_str(r.symbol, "read", "read chosen over __read");
		if (libc)
			dlclose(libc);
	}
	symbolizer__delete(s);
	proc_maps__delete(maps);
}

/* Maps that are not ELF objects: no dso, named by their path and file offset. */
static void test_not_elf(void)
{
	char path[PATH_MAX];
	struct proc_maps *maps;
	struct symbolizer *s;
	struct sym_result r;
	struct map_entry *m;
	struct dso *d;
	void *p;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/data.txt", tmpdir);
	f = fopen(path, "w");
	for (int i = 0; f && i < 2048; i++)
		fputs("not an ELF file\n", f);
	if (f)
		fclose(f);
	fd = open(path, O_RDONLY);
	p = fd >= 0 ? mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 4096) : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	if (!ok(p != MAP_FAILED, "mapped a text file"))
		return;
	maps = proc_maps__read(getpid());
	m = proc_maps__find(maps, (uintptr_t)p);
	errno = 0;
	d = m ? dso__get(getpid(), m) : NULL;
	ok(!d && errno == ENOEXEC, "dso__get of a text file: NULL, ENOEXEC");
	errno = 0;
	d = m ? dso__get(getpid(), m) : NULL;
	ok(!d && errno == ENOEXEC, "and again, from the negative cache");
	s = symbolizer__new(getpid(), maps);
	symbolizer__resolve(s, (uintptr_t)p + 0x10, &r);
	ok(!r.symbol && r.module && !strcmp(r.module, path) && r.offset == 4096 + 0x10,
	   "symbolized as path + file offset (%s +%#llx)", r.module, (unsigned long long)r.offset);
	symbolizer__delete(s);
	symbolizer__delete(NULL);
	dso__put(NULL);
	proc_maps__delete(maps);
	munmap(p, 8192);
}

/* The vdso's clock_gettime, located independently by reading our own vdso with libelf. */
static void test_vdso(void)
{
	struct proc_maps *maps = proc_maps__read(getpid());
	struct symbolizer *s = symbolizer__new(getpid(), maps), *s0;
	uintptr_t base = getauxval(AT_SYSINFO_EHDR), want = 0;
	struct sym_result r;
	size_t i;
	Elf *elf;
	Elf_Scn *scn = NULL;

	elf_version(EV_CURRENT);
	elf = base ? elf_memory((char *)base, 8192) : NULL;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && gelf_getsym(d, i, &sym); i++)
			if (!strcmp(elf_strptr(elf, sh.sh_link, sym.st_name),
				    "__vdso_clock_gettime"))
				want = base + sym.st_value;
	}
	if (elf)
		elf_end(elf);
	ok(want != 0, "found __vdso_clock_gettime in the vdso");
	/* As for a trace file, with no process to read: our own vdso stands in. First, so
	 * that no copy made from the process is cached yet. */
	s0 = symbolizer__new(0, maps);
	symbolizer__resolve(s0, want + 2, &r);
	ok(r.symbol && strstr(r.symbol, "clock_gettime"), "vdso symbol without the process (%s)",
	   r.symbol ? r.symbol : "(null)");
	symbolizer__delete(s0);
	symbolizer__resolve(s, want + 2, &r);
	is_str(r.module, "[vdso]", "vdso module");
	ok(r.symbol && strstr(r.symbol, "clock_gettime"), "vdso symbol (%s)",
	   r.symbol ? r.symbol : "(null)");
	is_int(r.offset, 2, "offset into the vdso function");
	symbolizer__delete(s);
	proc_maps__delete(maps);
}

static const char fixlib_src[] = "static int __attribute__((noinline)) hidden_fn(int x)\n"
				 "{ volatile int a = x; a = a * 7 + VARIANT; return a; }\n"
				 "void *get_hidden(void) { return (void *)hidden_fn; }\n";

/* Builds a stripped shared object whose symbols live only in NAME.debug. */
static int build_stripped_lib(const char *dir, const char *name, int variant)
{
	return run("mkdir -p %1$s && cd %1$s && printf '%%s' '%2$s' > %3$s.c && "
		   "cc -g -O1 -fPIC -shared -DVARIANT=%4$d -o %3$s %3$s.c && "
		   "objcopy --only-keep-debug %3$s %3$s.debug && strip --strip-all %3$s && "
		   "objcopy --add-gnu-debuglink=%3$s.debug %3$s",
		   dir, fixlib_src, name, variant);
}

/* dlopens path and returns the address of its static hidden_fn. */
static uintptr_t hidden_fn_of(const char *path, void **handle)
{
	void *(*get)(void);

	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*handle) {
		printf("# dlopen: %s\n", dlerror());
		return 0;
	}
	get = (void *(*)(void))dlsym(*handle, "get_hidden");
	return get ? (uintptr_t)get() : 0;
}

static void resolve_in_self(uintptr_t addr, struct sym_result *r, char *debug, size_t len)
{
	struct proc_maps *maps = proc_maps__read(getpid());
	struct symbolizer *s = symbolizer__new(getpid(), maps);
	static char sym[256], mod[PATH_MAX];
	struct map_entry *m;
	const char *dp;

	symbolizer__resolve(s, addr, r);
	m = proc_maps__find(maps, addr);
	dp = m && m->dso ? dso__debug_path(m->dso) : NULL;
	snprintf(debug, len, "%s", dp ? dp : "");
	/* Results live in the symbolizer, deleted below: copy what the caller checks. */
	snprintf(sym, sizeof(sym), "%s", r->symbol ? r->symbol : "");
	snprintf(mod, sizeof(mod), "%s", r->module ? r->module : "");
	r->symbol = r->symbol ? sym : NULL;
	r->module = mod;
	symbolizer__delete(s);
	proc_maps__delete(maps);
}

static void test_debuglink(void)
{
	char dir[PATH_MAX / 2], path[PATH_MAX], debug[PATH_MAX];
	void *h1 = NULL, *h2 = NULL, *h3 = NULL, *h4 = NULL;
	struct sym_result r;
	uintptr_t a;

	/* 1: debug file next to the object. */
	snprintf(dir, sizeof(dir), "%s/next", tmpdir);
	ok(build_stripped_lib(dir, "libsymtest.so", 1) == 0, "built a stripped .so + debuglink");
	snprintf(path, sizeof(path), "%s/libsymtest.so", dir);
	a = hidden_fn_of(path, &h1);
	ok(a != 0, "loaded it");
	resolve_in_self(a + 1, &r, debug, sizeof(debug));
	is_str(r.symbol, "hidden_fn", "static function named through .gnu_debuglink");
	is_int(r.offset, 1, "offset into it");
	is_str(r.module, path, "module is the stripped object");
	ok(ends_with(debug, "/next/libsymtest.so.debug"), "debug file beside it (%s)", debug);

	/* 2: debug file in .debug/ beside the object. */
	snprintf(dir, sizeof(dir), "%s/dotdebug", tmpdir);
	ok(run("mkdir -p %1$s/.debug && cp %2$s/next/libsymtest.so %1$s/libsymtest2.so && "
	       "cp %2$s/next/libsymtest.so.debug %1$s/.debug/",
	       dir, tmpdir) == 0,
	   "copied into a .debug/ layout");
	snprintf(path, sizeof(path), "%s/libsymtest2.so", dir);
	a = hidden_fn_of(path, &h2);
	resolve_in_self(a, &r, debug, sizeof(debug));
	is_str(r.symbol, "hidden_fn", "named through .debug/");
	ok(ends_with(debug, "/dotdebug/.debug/libsymtest.so.debug"), "found in .debug/ (%s)",
	   debug);

	/* 3: a debug file of another build under the right name: the CRC must refuse it. */
	snprintf(dir, sizeof(dir), "%s/badcrc", tmpdir);
	ok(build_stripped_lib(dir, "other.so", 2) == 0 &&
		   run("cp %2$s/next/libsymtest.so %1$s/libsymtest3.so && "
		       "cp %1$s/other.so.debug %1$s/libsymtest.so.debug",
		       dir, tmpdir) == 0,
	   "set up a mismatching debug file");
	snprintf(path, sizeof(path), "%s/libsymtest3.so", dir);
	a = hidden_fn_of(path, &h3);
	resolve_in_self(a, &r, debug, sizeof(debug));
	ok(!r.symbol || strcmp(r.symbol, "hidden_fn"), "mismatching CRC: not named (%s)",
	   r.symbol ? r.symbol : "null");
	is_str(debug, "", "and no debug file used");

	/* 4: the object deleted while mapped: opened through map_files. */
	snprintf(dir, sizeof(dir), "%s/deleted", tmpdir);
	ok(run("mkdir -p %1$s && cp %2$s/next/libsymtest.so %1$s/libsymtest4.so && "
	       "cp %2$s/next/libsymtest.so.debug %1$s/",
	       dir, tmpdir) == 0,
	   "copied a library to delete");
	snprintf(path, sizeof(path), "%s/libsymtest4.so", dir);
	a = hidden_fn_of(path, &h4);
	ok(unlink(path) == 0, "deleted it while mapped");
	resolve_in_self(a + 2, &r, debug, sizeof(debug));
	is_str(r.symbol, "hidden_fn", "deleted object still symbolized");
	is_int(r.offset, 2, "with its offset");

	if (h1)
		dlclose(h1);
	if (h2)
		dlclose(h2);
	if (h3)
		dlclose(h3);
	if (h4)
		dlclose(h4);
}

/* Another process, built without PIE (bias 0), found through /proc/PID/root. */
static void test_child_nopie(void)
{
	char src[PATH_MAX], bin[PATH_MAX], line[64];
	int pfd[2];
	pid_t pid;
	FILE *f;
	unsigned long addr = 0;
	struct proc_maps *maps = NULL;
	struct symbolizer *s = NULL;
	struct sym_result r = {0};

	snprintf(src, sizeof(src), "%s/child.c", tmpdir);
	snprintf(bin, sizeof(bin), "%s/child", tmpdir);
	write_text(src,
		   "#include <stdio.h>\n#include <unistd.h>\n"
		   "__attribute__((noinline)) int child_target_fn(int x) { return x * 2 + 1; }\n"
		   "int main(void) { printf(\"%lx\\n\", (unsigned long)child_target_fn);\n"
		   "fflush(stdout); pause(); return child_target_fn(1); }\n");
	if (!ok(run("cc -O1 -no-pie -fno-pie -o %s %s", bin, src) == 0, "built a non-PIE child"))
		return;
	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (f && fgets(line, sizeof(line), f))
		addr = strtoul(line, NULL, 16);
	ok(addr != 0 && addr < 0x1000000, "child printed a non-PIE address (%#lx)", addr);
	maps = proc_maps__read(pid);
	s = symbolizer__new(pid, maps);
	symbolizer__resolve(s, addr + 3, &r);
	is_str(r.symbol, "child_target_fn", "other process's function");
	is_int(r.offset, 3, "offset in it");
	is_str(r.module, bin, "module is the child's executable");
	symbolizer__delete(s);
	proc_maps__delete(maps);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (f)
		fclose(f);
}

static void test_perfmap_parse(void)
{
	static const char text[] = "1000 10 first\n"
				   "0x2000 0x20 with spaces in it\r\n"
				   "garbage line\n"
				   "3000 0 zero_size\n"
				   "4000 100 big_old\n"
				   "4010 10 small_inside\n"
				   "5000 10\n"
				   "4000 80 big_new\n"
				   "6000 10 _ZN3foo3barEi\n"
				   "ffffffffffffffff 2 overflow\n"
				   "8000 100 outer\n"
				   "8010 10 inner\n"
				   "  7000   8   indented";
	char path[PATH_MAX];
	struct perfmap *pm = perfmap__parse(text, sizeof(text) - 1), *pm2;
	uint64_t off = 99;

	/* first, spaces, big_new (big_old shares its start), small_inside, _ZN..., outer,
	 * inner, indented. */
	is_int(perfmap__nr(pm), 8, "perf map: 8 usable entries");
	is_str(perfmap__find(pm, 0x1000, &off), "first", "start of an entry");
	is_int(off, 0, "offset 0");
	is_str(perfmap__find(pm, 0x100f, &off), "first", "last byte of an entry");
	ok(perfmap__find(pm, 0x1010, &off) == NULL, "end is exclusive");
	is_str(perfmap__find(pm, 0x2011, &off), "with spaces in it", "names keep spaces, lose \\r");
	is_int(off, 0x11, "offset into it");
	ok(perfmap__find(pm, 0x3000, &off) == NULL, "zero-size entry ignored");
	is_str(perfmap__find(pm, 0x4005, &off), "big_new", "later line wins at the same start");
	is_str(perfmap__find(pm, 0x4012, &off), "big_new",
	       "newer code over an older nested entry wins");
	is_str(perfmap__find(pm, 0x8012, &off), "inner", "newer nested entry wins inside it");
	is_int(off, 2, "offset from the nested entry");
	is_str(perfmap__find(pm, 0x8050, &off), "outer", "enclosing entry past the nested one");
	ok(perfmap__find(pm, 0x4090, &off) == NULL, "old larger entry superseded");
	is_str(perfmap__find(pm, 0x6001, &off), "foo::bar(int)", "mangled JIT names demangled");
	is_str(perfmap__find(pm, 0x7007, &off), "indented", "leading blanks tolerated");
	ok(perfmap__find(pm, 0x500, &off) == NULL, "below everything");
	perfmap__delete(pm);
	perfmap__delete(NULL);

	pm = perfmap__parse("", 0);
	is_int(perfmap__nr(pm), 0, "empty map");
	perfmap__delete(pm);

	snprintf(path, sizeof(path), "%s/perf-test.map", tmpdir);
	write_text(path, "a000 40 from_file\n");
	pm2 = perfmap__load(path);
	is_str(perfmap__find(pm2, 0xa03f, &off), "from_file", "perfmap__load reads a file");
	perfmap__delete(pm2);
	ok(perfmap__load("/nonexistent/perf-1.map") == NULL && errno == ENOENT,
	   "missing file: NULL, ENOENT");
}

/* Anonymous executable memory named by /tmp/perf-PID.map, as a JIT would. */
static void test_perfmap_jit(void)
{
	char path[64], text[256];
	size_t len = 16384;
	unsigned char *code = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct proc_maps *maps;
	struct symbolizer *s;
	struct sym_result r;
	FILE *f;

	if (!ok(code != MAP_FAILED, "mapped anonymous executable memory"))
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(text, sizeof(text), "%lx 20 jitted_fn\n", (unsigned long)(code + 0x100));
	write_text(path, text);
	maps = proc_maps__read(getpid());
	s = symbolizer__new(getpid(), maps);
	symbolizer__resolve(s, (uintptr_t)code + 0x108, &r);
	is_str(r.symbol, "jitted_fn", "JIT code named from the perf map");
	is_str(r.module, "[jit]", "module [jit]");
	is_int(r.offset, 8, "offset into the JIT function");
	symbolizer__resolve(s, (uintptr_t)code + 0x2000, &r);
	ok(!r.symbol && !strcmp(r.module, "[unknown]") && r.offset == (uintptr_t)code + 0x2000,
	   "anonymous code not in the map is [unknown] (%s %s +%#llx)",
	   r.symbol ? r.symbol : "null", r.module, (unsigned long long)r.offset);

	/* The JIT appends; the next miss rereads the file. */
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "%lx 10 later_fn\n", (unsigned long)(code + 0x3000));
		fclose(f);
	}
	symbolizer__resolve(s, (uintptr_t)code + 0x3004, &r);
	is_str(r.symbol, "later_fn", "perf map reread after it grew");
	symbolizer__delete(s);
	proc_maps__delete(maps);
	unlink(path);
	munmap(code, len);
}

static void test_kallsyms_text(void)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000000 T _text\n"
				   "ffffffff81000000 T startup_64\n"
				   "ffffffff81000100 t local_fn\n"
				   "0000000000000000 A fixed_percpu_data\n"
				   "ffffffff81000200 T global_fn\n"
				   "not a line\n"
				   "ffffffffc0001000 t xfs_fn\t[xfs]\n"
				   "ffffffffc0000000 t ext4_fn\t[ext4]\n"
				   "ffffffffc0000100 T ext4_fn2\t[ext4]\n"
				   "ffffffff81000300 T _etext";
	struct ksyms *k = ksyms__parse(text, sizeof(text) - 1);
	const char *mod = NULL;
	uint64_t off = 0;

	ok(k != NULL, "parsed kallsyms text");
	is_str(ksyms__resolve(k, 0xffffffff81000000ull, &off, &mod), "startup_64",
	       "a real name wins over _stext/_text aliases");
	is_str(mod, "[kernel]", "core kernel module name");
	is_str(ksyms__resolve(k, 0xffffffff81000150ull, &off, &mod), "local_fn", "local symbol");
	is_int(off, 0x50, "offset");
	is_str(ksyms__resolve(k, 0xffffffff810001ffull, &off, NULL), "local_fn",
	       "runs to the next symbol");
	is_str(ksyms__resolve(k, 0xffffffff81000200ull, &off, NULL), "global_fn", "next symbol");
	is_str(ksyms__resolve(k, 0xffffffffc0000010ull, &off, &mod), "ext4_fn",
	       "module symbol (input unsorted)");
	is_str(mod, "[ext4]", "module in brackets");
	is_str(ksyms__resolve(k, 0xffffffffc0000180ull, &off, &mod), "ext4_fn2",
	       "last symbol of a module");
	is_str(ksyms__resolve(k, 0xffffffffc0001008ull, &off, &mod), "xfs_fn", "other module");
	is_str(mod, "[xfs]", "its module");
	ok(ksyms__resolve(k, 0xffffffffc1000000ull, &off, &mod) == NULL,
	   "far past the last symbol: none");
	ok(ksyms__resolve(k, 0x1000, &off, &mod) == NULL, "absolute symbols ignored");
	ksyms__delete(k);
	ksyms__delete(NULL);

	errno = 0;
	k = ksyms__parse("0000000000000000 T a\n0000000000000000 T b\n", 42);
	ok(!k && errno == EPERM, "all-zero addresses (kptr_restrict) is EPERM");
	k = ksyms__parse("", 0);
	ok(k && !ksyms__resolve(k, 0xffffffff81000000ull, &off, &mod), "empty text");
	ksyms__delete(k);
}

static void test_kallsyms_real(void)
{
	char *p;
	FILE *f = fopen("/proc/kallsyms", "r");
	uint64_t t0, t1, sched = 0, off = 1;
	uint64_t read_ns = UINT64_MAX, parse_ns = UINT64_MAX, load_ns = UINT64_MAX;
	size_t text_cap = 64u << 20;
	char *text = NULL;
	struct ksyms *k = NULL;
	int i;
	const char *mod = NULL;
	struct sym_result r;

	if (f) {
		char line[512];

		while (fgets(line, sizeof(line), f))
			if ((p = strstr(line, " T schedule\n")) && p - line == 16)
				sched = strtoull(line, NULL, 16);
		fclose(f);
	}
	ok(sched != 0, "found schedule in /proc/kallsyms (%#llx)", (unsigned long long)sched);

	/* Most of the time is the kernel formatting the file, which varies with the machine:
	 * time our parsing alone on the same text, and the whole load against just reading
	 * the file. CPU time, best of five, so other work on the machine does not count. */
	for (i = 0; i < 5; i++) {
		int fd = open("/proc/kallsyms", O_RDONLY);
		size_t len = 0;
		ssize_t n;

		if (!text)
			text = xmalloc(text_cap);
		t0 = cpu_ns();
		while (fd >= 0 && len + 1 < text_cap &&
		       (n = read(fd, text + len, text_cap - 1 - len)) > 0)
			len += n;
		t1 = cpu_ns();
		if (fd >= 0)
			close(fd);
		if (t1 - t0 < read_ns)
			read_ns = t1 - t0;
		t0 = cpu_ns();
		k = ksyms__parse(text, len);
		t1 = cpu_ns();
		ksyms__delete(k);
		if (t1 - t0 < parse_ns)
			parse_ns = t1 - t0;
		t0 = cpu_ns();
		k = ksyms__load();
		t1 = cpu_ns();
		if (t1 - t0 < load_ns)
			load_ns = t1 - t0;
		if (i < 4)
			ksyms__delete(k);
	}
	free(text);
	printf("# /proc/kallsyms CPU time: read %.1f ms, ksyms__parse %.1f ms, ksyms__load %.1f "
	       "ms\n",
	       read_ns / 1e6, parse_ns / 1e6, load_ns / 1e6);
	ok(k != NULL, "loaded /proc/kallsyms");
	ok(!TIMING_CHECKS || parse_ns < 30000000ull, "parsing the real text takes under 30 ms%s",
	   TIMING_CHECKS ? "" : " # SKIP sanitizer build");
	ok(!TIMING_CHECKS || load_ns < 100000000ull || load_ns < read_ns + 30000000ull,
	   "loading takes under 100 ms (or little more than the kernel takes to write it)%s",
	   TIMING_CHECKS ? "" : " # SKIP sanitizer build");
	is_str(ksyms__resolve(k, sched, &off, &mod), "schedule", "schedule round-trips");
	is_int(off, 0, "at offset 0");
	is_str(mod, "[kernel]", "in the kernel");
	is_str(ksyms__resolve(k, sched + 4, &off, &mod), "schedule", "inside schedule");
	is_int(off, 4, "offset 4");
	ksyms__delete(k);

	symbolizer__resolve_kernel(NULL, sched + 1, &r);
	ok(r.kernel && r.symbol && !strcmp(r.symbol, "schedule") && r.offset == 1 &&
		   !strcmp(r.module, "[kernel]"),
	   "symbolizer__resolve_kernel");
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_speed();
	test_demangle();
	test_self();
	test_libc();
	test_vdso();
	test_not_elf();
	test_debuglink();
	test_child_nopie();
	test_perfmap_parse();
	test_perfmap_jit();
	test_kallsyms_text();
	test_kallsyms_real();
	symbolizer__exit();
	run("rm -rf '%s'", tmpdir);
	return done_testing();
}
