# srvscope build. Quiet unless V=1. See README.md for the two commands.
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

BUILD    ?= build
CC       ?= gcc
CXX      ?= g++
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := x86

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2);
endif

WARN     := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
CPPFLAGS += -D_GNU_SOURCE -Isrc -I$(BUILD) -I$(BUILD)/bpf
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -pthread
LIBS     := -lbpf -lunwind-x86_64 -lunwind -ldw -lelf -ljansson -lncursesw -ltinfo \
	    -liberty -lzstd -ldeflate -lz -llzma -lbz2 -lpthread -ldl
LIBS     += -lm
LIBS     += -lhwloc
LIBS     += -lprotobuf-c
LIBS     += -lmicrohttpd

SRCS     := $(shell find src -name '*.c' ! -name '*.bpf.c' | sort)
OBJS     := $(SRCS:%.c=$(BUILD)/%.o)
LIBOBJS  := $(filter-out $(BUILD)/src/main.o,$(OBJS))
BPFSRCS  := $(wildcard src/bpf/*.bpf.c)
SKELS    := $(BPFSRCS:src/bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)
# The recorder built for kernels before 6.2 (no bpf_rdonly_cast): same maps and programs.
SKELS    += $(BUILD)/bpf/record_compat.skel.h

# pprof: C code generated from src/output/profile.proto into $(BUILD)/proto (not committed;
# the fuzz targets link this same object).
PROTO_OBJ := $(BUILD)/proto/profile.pb-c.o
OBJS     += $(PROTO_OBJ)
LIBOBJS  += $(PROTO_OBJ)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)

all: $(BUILD)/srvscope fixtures demo-bins

$(BUILD)/srvscope: $(OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

# A fully static binary: no runtime dependency, the BPF objects embedded.
static: $(BUILD)/srvscope-static
$(BUILD)/srvscope-static: $(OBJS)
	$(call msg,STATIC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -static -o $@ $^ $(LIBS)

$(BUILD)/src/%.o: src/%.c $(SKELS) | $(BUILD)/vmlinux.h
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# srvscope report: the page's HTML, CSS and JavaScript are built into assets.o (.incbin).
$(BUILD)/src/report/assets.o: $(wildcard src/report/assets/*)
$(BUILD)/proto/profile.pb-c.c: src/output/profile.proto
	$(call msg,PROTOC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)protoc-c --proto_path=src/output --c_out=$(@D) $<
$(BUILD)/proto/profile.pb-c.h: $(BUILD)/proto/profile.pb-c.c
$(BUILD)/proto/%.o: $(BUILD)/proto/%.c
	$(call msg,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
$(BUILD)/src/output/pprof.o $(BUILD)/fuzzobj/src/output/pprof.o: $(BUILD)/proto/profile.pb-c.h
# serve: the static binary gets stand-ins for GnuTLS (src/serve/gnutls_stubs.inc says why).
$(BUILD)/srvscope-static: $(BUILD)/static/gnutls_stubs.o
$(BUILD)/static/gnutls_stubs.o: src/serve/gnutls_stubs.inc
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Wno-unused-parameter -x c -c -o $@ $<

# BPF: vmlinux.h from the running kernel's BTF, CO-RE objects, skeletons.
$(BUILD)/vmlinux.h:
	$(call msg,BTF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)if [ -r /sys/kernel/btf/vmlinux ]; then \
		$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@; \
	else \
		echo "srvscope: /sys/kernel/btf/vmlinux is missing: build on a kernel with CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; \
	fi

$(BUILD)/bpf/%.bpf.o: src/bpf/%.bpf.c $(wildcard src/bpf/*.h) $(BUILD)/vmlinux.h
	$(call msg,BPF,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -Isrc/bpf -c $< -o $@
	$(Q)llvm-strip -g $@ 2>/dev/null || true

$(BUILD)/bpf/record_compat.bpf.o: src/bpf/record.bpf.c $(wildcard src/bpf/*.h) $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DRECORD_NO_RDONLY_CAST -I$(BUILD) -Isrc/bpf -c $< -o $@
	$(Q)llvm-strip -g $@ 2>/dev/null || true

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# Unit tests: pure C, linked against the library objects, TAP output.
$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/unit.h $(LIBOBJS)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) -o $@ $< $(LIBOBJS) $(LIBS)

# Fixtures: small programs with known, deterministic stacks.
FIX      := $(BUILD)/fixtures
FIXFLAGS := -g -pthread -Wall
STACKFIX := $(FIX)/stackfix-c-pie $(FIX)/stackfix-c-debuglink $(FIX)/stackfix-c-O2 \
	    $(FIX)/stackfix-cxx-pie $(FIX)/stackfix-cxx-debuglink $(FIX)/stackfix-cxx-O2
OTHERFIX := $(patsubst tests/fixtures/%.c,$(FIX)/%,$(filter-out tests/fixtures/stackfix.c tests/fixtures/fixlib%.c,$(wildcard tests/fixtures/*.c)))
FIXLIBS  := $(patsubst tests/fixtures/%.c,$(FIX)/%.so,$(wildcard tests/fixtures/fixlib*.c))

fixtures: $(STACKFIX) $(OTHERFIX) $(FIXLIBS)

$(FIX)/stackfix-c-pie: tests/fixtures/stackfix.c tests/fixtures/fixture.h
	$(call msg,FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXFLAGS) -O0 -fPIE -pie -o $@ $<
$(FIX)/stackfix-c-O2: tests/fixtures/stackfix.c tests/fixtures/fixture.h
	$(call msg,FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXFLAGS) -O2 -fomit-frame-pointer -o $@ $<
$(FIX)/stackfix-cxx-pie: tests/fixtures/stackfix.cc tests/fixtures/fixture.h
	$(call msg,FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(FIXFLAGS) -O0 -fPIE -pie -o $@ $<
$(FIX)/stackfix-cxx-O2: tests/fixtures/stackfix.cc tests/fixtures/fixture.h
	$(call msg,FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(FIXFLAGS) -O2 -fomit-frame-pointer -o $@ $<
# Stripped, with symbols only in a separate file found through .gnu_debuglink.
$(FIX)/stackfix-%-debuglink: $(FIX)/stackfix-%-pie
	$(call msg,STRIP,$@)
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)strip --strip-all -o $@ $<
	$(Q)cd $(@D) && objcopy --add-gnu-debuglink=$(@F).debug $(@F)

$(FIX)/%.so: tests/fixtures/%.c tests/fixtures/fixture.h
	$(call msg,FIXLIB,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXFLAGS) -O0 -fPIC -shared -o $@ $<
# Big stack frames, DWARF only: untouched stack pages stay absent (no stack clash probes).
$(FIX)/rec_bigframe: tests/fixtures/rec_bigframe.c tests/fixtures/fixture.h
	$(call msg,FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXFLAGS) -O2 -fomit-frame-pointer -fno-stack-clash-protection -o $@ $<
$(FIX)/%: tests/fixtures/%.c tests/fixtures/fixture.h
	$(call msg,FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXFLAGS) -O1 -fno-omit-frame-pointer -o $@ $< -ldl

# The bundled demo server and its load client.
demo-bins: $(BUILD)/demo-server $(BUILD)/demo-client
$(BUILD)/demo-%: demo/demo-%.c demo/demo.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -pthread -o $@ $<

deps:
	$(Q)scripts/install-deps.sh

demo: deps all
	$(Q)scripts/demo.sh

check: deps all static $(UNIT_BINS) fuzz-bins
	$(Q)scripts/check.sh

# Sanitizer build of everything, then the whole suite against it.
asan:
	$(Q)$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
		build-asan/srvscope fixtures demo-bins fuzz-bins \
		$(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BINS))
	$(Q)BUILD=build-asan SRVSCOPE_NO_STATIC=1 scripts/check.sh

# Fuzz targets: libFuzzer binaries over the library built with clang and ASan.
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZOBJS  := $(LIBOBJS:$(BUILD)/src/%=$(BUILD)/fuzzobj/src/%)
FUZZFLAGS := -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer
$(BUILD)/fuzzobj/src/%.o: src/%.c $(SKELS) | $(BUILD)/vmlinux.h
	$(call msg,FUZZCC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) -std=gnu11 -pthread $(FUZZFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZOBJS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) -std=gnu11 -pthread $(FUZZFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZOBJS) $(LIBS)
fuzz-bins: $(FUZZ_BINS)

# Fuzz every target for FUZZ_SECONDS (default 60) each.
fuzz: fuzz-bins
	$(Q)FUZZ_SECONDS=$${FUZZ_SECONDS:-60} scripts/fuzz.sh

format:
	$(Q)clang-format -i $(SRCS) $(wildcard src/*/*.h src/*.h)

clean:
	$(Q)rm -rf build build-asan

.PHONY: all static fixtures demo-bins deps demo check asan fuzz fuzz-bins format clean
-include $(OBJS:.o=.d) $(FUZZOBJS:.o=.d)
