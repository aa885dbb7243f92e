# btree_jit: JIT-compiled, key-shape-specialised B-tree page search.
#
#   make && make install      build and install into the server found by
#                             $(PG_CONFIG) (needs root for install)
#   test/run                  every test (see README.md)
#   bench/run                 the headline benchmark (see README.md)

MODULE_big = btree_jit
OBJS = \
	src/btree_jit.o \
	src/locate.o \
	src/redirect.o \
	src/dispatch.o \
	src/keyshape.o \
	src/jitcache.o \
	src/compile.o \
	src/llvm_error.o \
	src/sqlfuncs.o

EXTENSION = btree_jit
DATA = sql/btree_jit--1.0.sql
PGFILEDESC = "btree_jit - specialised B-tree page search"

# Bitcode templates, specialised at run time (installed under pkglibdir).
TEMPLATES = llvm-ir/search_template.bc

PG_CONFIG ?= pg_config
LLVM_CONFIG ?= llvm-config-14
CLANG ?= clang-14

PG_CPPFLAGS = -I$(srcdir)/src -I$(shell $(LLVM_CONFIG) --includedir)
PG_CXXFLAGS = -std=c++14 -fno-exceptions
SHLIB_LINK = -L$(shell $(LLVM_CONFIG) --libdir) -lLLVM-14 -lZydis -lstdc++
EXTRA_CLEAN = $(TEMPLATES) test/patcher/test_patcher $(PATCHER_FAKES)

# Our own bitcode is the template; PGXS's per-object bitcode for inlining
# is of no use to anyone, so do not build or install it.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

override CPPFLAGS := $(CPPFLAGS) -I$(shell $(LLVM_CONFIG) --includedir)

# The template is compiled with the server's own bitcode flags so that the
# struct layouts it sees are the server's.
BTJIT_BITCODE_FLAGS = $(BITCODE_CFLAGS) -O2 -I$(srcdir)/src \
	-I$(includedir_server) -I$(includedir_internal) $(CPPFLAGS)

# PGXS does not track header dependencies; the module's structs are shared
# by every file, so a header change must rebuild everything.
$(OBJS): $(wildcard src/*.h)

llvm-ir/%.bc: llvm-ir/%.c src/shape.h
	$(CLANG) $(BTJIT_BITCODE_FLAGS) -emit-llvm -c $< -o $@

all: $(TEMPLATES)

install: install-templates
installdirs: installdirs-templates

installdirs-templates:
	$(MKDIR_P) '$(DESTDIR)$(pkglibdir)/btree_jit'

install-templates: $(TEMPLATES) installdirs-templates
	$(INSTALL_DATA) $(TEMPLATES) '$(DESTDIR)$(pkglibdir)/btree_jit/'

uninstall: uninstall-templates
uninstall-templates:
	rm -rf '$(DESTDIR)$(pkglibdir)/btree_jit'

# Unit tests of locate.c/redirect.c outside PostgreSQL, with miniature
# servers for the locator built in the code shapes it must handle (and
# some it must refuse); see test/patcher/fake_server.c.
PATCHER_FAKES = test/patcher/fake_fp test/patcher/fake_nofp_cet \
	test/patcher/fake_endbr test/patcher/fake_swapped \
	test/patcher/fake_addr_taken test/patcher/fake_extra_caller

test/patcher/test_patcher: test/patcher/test_patcher.c src/redirect.c src/locate.c src/binpatch.h $(PATCHER_FAKES)
	$(CC) -O1 -g -Wall -I$(srcdir)/src -o $@ test/patcher/test_patcher.c src/redirect.c src/locate.c -lZydis

PATCHER_FAKE_SRC = test/patcher/fake_server.c src/redirect.c src/locate.c src/binpatch.h
PATCHER_FAKE_CC = $(CC) -O2 -g -Wall -rdynamic -I$(srcdir)/src -o $@ \
	test/patcher/fake_server.c src/redirect.c src/locate.c -lZydis

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

patcher-check: test/patcher/test_patcher
	test/patcher/test_patcher

.PHONY: install-templates installdirs-templates uninstall-templates patcher-check
