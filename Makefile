# btree_jit: JIT-compiled, key-shape-specialised B-tree page search.
#
#   make && make install      build and install into the server found by
#                             $(PG_CONFIG) (needs root for install)
#   test/run                  every test (see README.md)
#   bench/run                 the headline benchmark (see README.md)

# The three build products, one folder of src/ or more each (src/README
# has the file map):
#   btree_jit.so        the module: src/btree_jit.c (start-up, settings),
#                       src/stats/, src/targets/, src/runtime/,
#                       src/compile/, src/locate/, src/binpatch/
#   btree_jit_llvm.so   the compiler library, the only code that links LLVM:
#                       src/llvm/, loaded by a process on its first compile
#   search_template.bc  the bitcode template: llvm-ir/
# src/include/ holds the headers the products share.
MODULE_big = btree_jit
LOCATE_OBJS = src/locate/binsrch.o src/locate/readpage.o src/locate/split.o
BINPATCH_OBJS = src/binpatch/callconv.o src/binpatch/clobbers.o \
	src/binpatch/refsweep.o src/binpatch/elf_image.o \
	src/binpatch/messages.o src/binpatch/redirect.o src/binpatch/x86.o
TARGETS_OBJS = src/targets/binsrch.o src/targets/compare.o \
	src/targets/insert.o src/targets/checkkeys.o src/targets/readpage.o \
	src/targets/build.o src/targets/buildsort.o src/targets/keepnatts.o \
	src/targets/descent.o src/targets/first.o src/targets/keybounds.o \
	src/targets/gettuple.o src/targets/deform.o
RUNTIME_OBJS = src/runtime/redirects.o src/runtime/dispatch.o \
	src/runtime/blockhints.o src/runtime/jitcache.o src/runtime/keyshape.o \
	src/runtime/recentbuf.o
COMPILE_OBJS = src/compile/policy.o src/compile/worker.o \
	src/compile/compiler_lib.o src/compile/objcache.o \
	src/compile/objload.o src/compile/bitcode.o
STATS_OBJS = src/stats/indexstats.o src/stats/sqlfuncs.o
OBJS = src/btree_jit.o $(STATS_OBJS) $(TARGETS_OBJS) $(RUNTIME_OBJS) \
	$(COMPILE_OBJS) $(LOCATE_OBJS) $(BINPATCH_OBJS)

# The compiler, the only part that links LLVM, is a library of its own,
# loaded by a process when it first compiles (see src/compile/compiler_lib.c).
COMPILER_LIB = btree_jit_llvm$(DLSUFFIX)
COMPILER_OBJS = src/llvm/specialise.o src/llvm/bcimport.o \
	src/llvm/llvm_error.o src/llvm/llvm_bitcode.o

EXTENSION = btree_jit
DATA = sql/btree_jit--1.0.sql sql/btree_jit--1.0--1.1.sql \
	sql/btree_jit--1.1--1.2.sql sql/btree_jit--1.2--1.3.sql \
	sql/btree_jit--1.3--1.4.sql sql/btree_jit--1.4--1.5.sql
PGFILEDESC = "btree_jit - specialised B-tree page search"

# Bitcode templates, specialised at run time (installed under pkglibdir).
TEMPLATES = llvm-ir/search_template.bc

PG_CONFIG ?= pg_config

# The extension's version, from the control file (the one place it is set),
# named in the start-up LOG line.
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(dir $(firstword $(MAKEFILE_LIST)))btree_jit.control)
ifeq ($(strip $(EXTVERSION)),)
$(error btree_jit.control names no default_version)
endif

PG_CPPFLAGS = -I$(srcdir)/src -I$(srcdir)/src/include -DBTJIT_VERSION='"$(EXTVERSION)"'
PG_CXXFLAGS = -fno-exceptions
SHLIB_LINK = -lZydis
# The compiler links the LLVM the server's own JIT links, as PGXS records
# it (LLVM_LIBS; 14 for PostgreSQL 15, 19 for 17, 21 for 18 on Debian).
COMPILER_LINK = $(LLVM_LIBS) -lstdc++
EXTRA_CLEAN = $(COMPILER_LIB) $(COMPILER_OBJS) $(TEMPLATES) test/patcher/test_patcher $(PATCHER_FAKES) \
	test/objload/test_objload $(OBJLOAD_FIXTURES) \
	test/bcimport/test_bcimport test/bcimport/fixture.bc

# Our own bitcode is the template; PGXS's per-object bitcode for inlining
# is of no use to anyone, so do not build or install it.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# LLVM's headers, C++ standard and clang as the server's JIT was built with
# them (PGXS's Makefile.global: LLVM_CPPFLAGS, LLVM_CXXFLAGS, CLANG).
ifeq ($(strip $(CLANG)),)
$(error $(PG_CONFIG) describes a server built without LLVM support (PGXS sets no CLANG))
endif
override CPPFLAGS := $(CPPFLAGS) $(LLVM_CPPFLAGS)
override CXXFLAGS := $(CXXFLAGS) $(LLVM_CXXFLAGS)

# The template is compiled with the server's own bitcode flags so that the
# struct layouts it sees are the server's.
BTJIT_BITCODE_FLAGS = $(BITCODE_CFLAGS) -O2 -Wno-ignored-attributes -I$(srcdir)/src/include \
	-I$(includedir_server) -I$(includedir_internal) $(CPPFLAGS)

# PGXS does not track header dependencies; a header change rebuilds every
# object that may include it (the shared headers of src/include/, and each
# layer's own).
$(OBJS) $(COMPILER_OBJS): $(wildcard src/include/*.h)
# ... and the version (BTJIT_VERSION) is the control file's
$(OBJS) $(COMPILER_OBJS): btree_jit.control
$(BINPATCH_OBJS) $(LOCATE_OBJS): $(wildcard src/binpatch/*.h)
$(LOCATE_OBJS): $(wildcard src/locate/*.h)
$(TARGETS_OBJS) $(RUNTIME_OBJS) $(STATS_OBJS) src/btree_jit.o: $(wildcard src/targets/*.h src/runtime/*.h src/stats/*.h src/locate/locate.h src/binpatch/binpatch.h)
$(TARGETS_OBJS) $(RUNTIME_OBJS) $(STATS_OBJS) $(COMPILE_OBJS) src/btree_jit.o: $(wildcard src/compile/*.h)
$(COMPILER_OBJS): $(wildcard src/llvm/*.h)

$(COMPILER_LIB): $(COMPILER_OBJS)
	$(CXX) $(CFLAGS) $(CFLAGS_SL) -shared -o $@ $(COMPILER_OBJS) \
		$(LDFLAGS) $(LDFLAGS_SL) $(COMPILER_LINK)

llvm-ir/%.bc: llvm-ir/%.c $(wildcard src/include/*.h)
	$(CLANG) $(BTJIT_BITCODE_FLAGS) -emit-llvm -c $< -o $@

all: $(TEMPLATES) $(COMPILER_LIB)

install: install-templates install-compiler
installdirs: installdirs-templates

install-compiler: $(COMPILER_LIB)
	$(INSTALL_SHLIB) $(COMPILER_LIB) '$(DESTDIR)$(pkglibdir)/'

installdirs-templates:
	$(MKDIR_P) '$(DESTDIR)$(pkglibdir)/btree_jit'

install-templates: $(TEMPLATES) installdirs-templates
	$(INSTALL_DATA) $(TEMPLATES) '$(DESTDIR)$(pkglibdir)/btree_jit/'

uninstall: uninstall-templates
uninstall-templates:
	rm -rf '$(DESTDIR)$(pkglibdir)/btree_jit'
	rm -f '$(DESTDIR)$(pkglibdir)/$(COMPILER_LIB)'

# Unit tests of the locator and redirect.c outside PostgreSQL, with
# miniature servers for the locator built in the code shapes it must handle
# (and some it must refuse); see test/patcher/fake_server.c.
PATCHER_FAKES = test/patcher/fake_fp test/patcher/fake_nofp_cet \
	test/patcher/fake_endbr test/patcher/fake_swapped \
	test/patcher/fake_addr_taken test/patcher/fake_extra_caller \
	test/patcher/fake_ipa_ra

# The locator and binary-analysis sources the patcher tests link (no
# PostgreSQL).
PATCHER_SRCS = $(LOCATE_OBJS:.o=.c) $(BINPATCH_OBJS:.o=.c)
PATCHER_HDRS = $(wildcard src/locate/*.h src/binpatch/*.h)
PATCHER_INCLUDES = -I$(srcdir)/src -I$(srcdir)/src/locate -I$(srcdir)/src/binpatch
# scratch files test_patcher writes next to itself (and removes)
EXTRA_CLEAN += test/patcher/cross_page.bin test/patcher/elf_machine.bin \
	test/patcher/unknown_build.bin

# The server it tests is the one PGXS describes (BTJIT_TEST_SERVER
# overrides at run time), so that a build for another major, e.g. in a
# chroot, tests that major's binary.
test/patcher/test_patcher: test/patcher/test_patcher.c $(PATCHER_SRCS) $(PATCHER_HDRS) $(PATCHER_FAKES)
	$(CC) -O1 -g -Wall $(PATCHER_INCLUDES) \
		-DDEFAULT_SERVER=\"$(bindir)/postgres\" -DDEFAULT_MAJOR=$(MAJORVERSION) \
		-o $@ test/patcher/test_patcher.c $(PATCHER_SRCS) -lZydis

PATCHER_FAKE_SRC = test/patcher/fake_server.c $(PATCHER_SRCS) $(PATCHER_HDRS)
PATCHER_FAKE_CC = $(CC) -O2 -g -Wall -rdynamic $(PATCHER_INCLUDES) -o $@ \
	test/patcher/fake_server.c $(PATCHER_SRCS) -lZydis

test/patcher/fake_fp: $(PATCHER_FAKE_SRC)
	$(PATCHER_FAKE_CC) -fno-omit-frame-pointer -fcf-protection=none
test/patcher/fake_nofp_cet: $(PATCHER_FAKE_SRC)
	$(PATCHER_FAKE_CC) -fomit-frame-pointer -fcf-protection=full
test/patcher/fake_endbr: $(PATCHER_FAKE_SRC)
	$(PATCHER_FAKE_CC) -fomit-frame-pointer -fcf-protection=full -DFAKE_ENDBR
test/patcher/fake_swapped: $(PATCHER_FAKE_SRC)
	$(PATCHER_FAKE_CC) -fno-omit-frame-pointer -DFAKE_SWAPPED
test/patcher/fake_addr_taken: $(PATCHER_FAKE_SRC)
	$(PATCHER_FAKE_CC) -fno-omit-frame-pointer -DFAKE_ADDR_TAKEN
test/patcher/fake_extra_caller: $(PATCHER_FAKE_SRC)
	$(PATCHER_FAKE_CC) -fno-omit-frame-pointer -DFAKE_EXTRA_CALLER
test/patcher/fake_ipa_ra: $(PATCHER_FAKE_SRC)
	$(PATCHER_FAKE_CC) -fno-omit-frame-pointer -DFAKE_IPA_RA

# Unit tests of objload.c (linking cached objects without LLVM), on
# fixture.c compiled in the code models it must link and one it must refuse.
OBJLOAD_FIXTURES = test/objload/fixture_large.o test/objload/fixture_small.o \
	test/objload/fixture_pic.o test/objload/fixture_missing.o
OBJLOAD_FIXTURE_CC = $(CLANG) -O2 -c -o $@ test/objload/fixture.c

test/objload/fixture_large.o: test/objload/fixture.c
	$(OBJLOAD_FIXTURE_CC) -fno-pic -mcmodel=large
test/objload/fixture_small.o: test/objload/fixture.c
	$(OBJLOAD_FIXTURE_CC) -fno-pic -mcmodel=small
test/objload/fixture_pic.o: test/objload/fixture.c
	$(OBJLOAD_FIXTURE_CC) -fPIC
test/objload/fixture_missing.o: test/objload/fixture.c
	$(OBJLOAD_FIXTURE_CC) -fno-pic -mcmodel=large -DNEED_MISSING

test/objload/test_objload: test/objload/test_objload.c src/compile/objload.c src/compile/objload.h $(OBJLOAD_FIXTURES)
	$(CC) -O1 -g -Wall -rdynamic -I$(srcdir)/src/compile -o $@ test/objload/test_objload.c src/compile/objload.c -ldl

# Unit tests of the bitcode import rules (bcimport.c) outside PostgreSQL,
# on fixture.c compiled to bitcode by the server's clang; the same program
# measures the rules on the server's own procs (test/bcimport/tiers.sh).
test/bcimport/fixture.bc: test/bcimport/fixture.c
	$(CLANG) -O1 -emit-llvm -c -o $@ $<

test/bcimport/test_bcimport: test/bcimport/test_bcimport.c src/llvm/bcimport.c src/llvm/bcimport.h src/include/why.h src/llvm/llvm_bitcode.o test/bcimport/fixture.bc
	$(CC) -O1 -g -Wall -I$(srcdir)/src/llvm -I$(srcdir)/src/include $(LLVM_CPPFLAGS) -c -o test/bcimport/test_bcimport.o test/bcimport/test_bcimport.c
	$(CC) -O1 -g -Wall -I$(srcdir)/src/llvm -I$(srcdir)/src/include $(LLVM_CPPFLAGS) -c -o test/bcimport/bcimport.o src/llvm/bcimport.c
	$(CXX) -o $@ test/bcimport/test_bcimport.o test/bcimport/bcimport.o src/llvm/llvm_bitcode.o \
		$(LDFLAGS) $(COMPILER_LINK)
	rm -f test/bcimport/test_bcimport.o test/bcimport/bcimport.o

# The binary-level unit tests, outside PostgreSQL: the patcher, the object
# loader and the bitcode import rules.
unitcheck: test/patcher/test_patcher test/objload/test_objload test/bcimport/test_bcimport
	test/patcher/test_patcher
	test/objload/test_objload $(OBJLOAD_FIXTURES)
	test/bcimport/test_bcimport test/bcimport/fixture.bc

.PHONY: install-templates install-compiler installdirs-templates uninstall-templates unitcheck

# The object lists, for test/lib/link_cycles.py (the layering check).
print-objs:
	@echo OBJS=$(OBJS)
	@echo COMPILER_OBJS=$(COMPILER_OBJS)

.PHONY: print-objs
