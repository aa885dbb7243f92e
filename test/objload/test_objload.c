/*
 * test/objload/test_objload.c - unit tests of src/compile/objload.c, the loader
 * that links cached compiled shapes without LLVM.
 *
 *   test_objload LARGE.o SMALL.o PIC.o MISSING.o
 *
 * LARGE.o is fixture.c compiled the way the module's compiler emits code
 * (large code model, static: R_X86_64_64 everywhere) and must link and
 * run; SMALL.o with the small code model (PC32 / PLT32 to the host, which
 * cannot reach a mapping anywhere in the address space: must be refused
 * by the range check), PIC.o position-
 * independent (GOT-relative relocations: must be refused), MISSING.o refers
 * to a symbol nobody defines (must be refused).  Each object is also fed
 * truncated and corrupted, and with its code made writable (refused).
 * After the links, no mapping of the process may be writable and
 * executable at once.  Prints "ok"/"not ok" lines and exits non-zero on
 * any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <elf.h>

#include "objload.h"

/* What the fixture finds in the "host process" (we link with -rdynamic). */
int			host_scale = 3;
int			host_add(int a, int b);

int
host_add(int a, int b)
{
	return a + b;
}

static int	failures = 0;
static int	checks = 0;

static void
check(int ok, const char *what, const char *detail)
{
	checks++;
	if (!ok)
		failures++;
	printf("%s - %s%s%s\n", ok ? "ok  " : "not ok", what,
		   detail && detail[0] ? ": " : "", detail ? detail : "");
}

static char *
slurp(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf;
	long		n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0)
	{
		perror(path);
		exit(2);
	}
	rewind(f);
	/* malloc: 16-byte aligned, as the module's palloc'd buffers are 8 */
	buf = malloc(n + 1);
	if (buf == NULL || fread(buf, 1, n, f) != (size_t) n)
	{
		perror(path);
		exit(2);
	}
	fclose(f);
	*len = n;
	return buf;
}

/* How many mappings of this process are writable and executable. */
static int
wx_mappings(void)
{
	FILE	   *f = fopen("/proc/self/maps", "r");
	char		line[512];
	int			n = 0;

	while (f && fgets(line, sizeof(line), f))
	{
		char		p[5];

		if (sscanf(line, "%*x-%*x %4s", p) == 1 && p[1] == 'w' && p[2] == 'x')
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* The permissions of the mapping holding addr, from /proc/self/maps. */
static void
perms_of(const void *addr, char *perms)
{
	FILE	   *f = fopen("/proc/self/maps", "r");
	char		line[512];
	uintptr_t	a = (uintptr_t) addr;

	strcpy(perms, "?");
	while (f && fgets(line, sizeof(line), f))
	{
		unsigned long lo,
					hi;
		char		p[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && a >= lo && a < hi)
		{
			strcpy(perms, p);
			break;
		}
	}
	if (f)
		fclose(f);
}

static const char *const names[] = {"fx_add_scaled", "fx_calls", "fx_switch",
"fx_scale", "fx_word"};
#define NNAMES 5

typedef int (*int2_fn) (int, int);
typedef int (*void_fn) (void);
typedef int (*int_fn) (int);
typedef double (*dbl_fn) (double);
typedef const char *(*word_fn) (int);

static void
test_links(const char *label, const char *path)
{
	size_t		len;
	char	   *img = slurp(path, &len);
	void	   *addr[NNAMES];
	char		why[256];
	char		what[128];
	char		perms[8];
	int			ok;

	ok = btjit_object_link(img, len, names, addr, NNAMES, why, sizeof(why));
	snprintf(what, sizeof(what), "%s: links", label);
	check(ok, what, why);
	if (!ok)
		return;
	free(img);					/* the linked code must not depend on it */

	snprintf(what, sizeof(what), "%s: external call and data", label);
	check(((int2_fn) addr[0]) (2, 5) == 21, what, NULL);
	((int2_fn) addr[0]) (1, 1);
	snprintf(what, sizeof(what), "%s: .bss and .data", label);
	check(((void_fn) addr[1]) () == 2, what, NULL);
	snprintf(what, sizeof(what), "%s: jump table", label);
	check(((int_fn) addr[2]) (0) == 11 && ((int_fn) addr[2]) (3) == 47 &&
		  ((int_fn) addr[2]) (7) == 89 && ((int_fn) addr[2]) (8) == -1 &&
		  ((int_fn) addr[2]) (-3) == -1, what, NULL);
	snprintf(what, sizeof(what), "%s: constant pool", label);
	check(((dbl_fn) addr[3]) (2.0) == 6.625, what, NULL);
	snprintf(what, sizeof(what), "%s: pointers in read-only data", label);
	check(strcmp(((word_fn) addr[4]) (2), "two") == 0 &&
		  strcmp(((word_fn) addr[4]) (7), "three") == 0, what, NULL);
	perms_of(addr[0], perms);
	snprintf(what, sizeof(what), "%s: code is r-x", label);
	check(strncmp(perms, "r-x", 3) == 0, what, perms);
	/* the constant strings (and the table of them) are read-only data */
	perms_of(((word_fn) addr[4]) (1), perms);
	snprintf(what, sizeof(what), "%s: read-only data is not writable", label);
	check(perms[0] == 'r' && perms[1] == '-', what, perms);
}

/* A stand-in for host_add and host_scale, given to the linker by address. */
static int	known_scale = 5;

static int
known_mul(int a, int b)
{
	return a * b;
}

/*
 * Undefined symbols found in the caller's table are taken from there, not
 * from dlsym; the others still come from dlsym.
 */
static void
test_known(const char *path)
{
	size_t		len;
	char	   *img = slurp(path, &len);
	void	   *addr[NNAMES];
	char		why[256];
	const BtjitObjectSymbol known_fn[] = {{"host_add", (void *) known_mul}};
	const BtjitObjectSymbol known_both[] = {{"host_scale", (void *) &known_scale},
	{"host_add", (void *) known_mul}};
	const BtjitObjectWanted wanted = {names, addr, NNAMES};
	const BtjitObjectKnown known1 = {known_fn, 1};
	const BtjitObjectKnown known2 = {known_both, 2};
	int			ok;

	ok = btjit_object_link_known(img, len, &wanted, &known1, why, sizeof(why));
	check(ok && ((int2_fn) addr[0]) (2, 5) == 30,
		  "known function used, the data symbol from dlsym", why);
	ok = btjit_object_link_known(img, len, &wanted, &known2, why, sizeof(why));
	check(ok && ((int2_fn) addr[0]) (2, 5) == 50,
		  "known function and data used", why);
	free(img);
}

static void
test_refused(const char *label, const char *path, const char *want)
{
	size_t		len;
	char	   *img = slurp(path, &len);
	void	   *addr[NNAMES];
	char		why[256];
	char		what[128];
	int			ok;

	ok = btjit_object_link(img, len, names, addr, NNAMES, why, sizeof(why));
	snprintf(what, sizeof(what), "%s: refused, reason mentions \"%s\"", label, want);
	check(!ok && strstr(why, want) != NULL, what, why);
	free(img);
}

/* Truncations, a bad magic, a bad machine, a missing name: all refused. */
static void
test_damaged(const char *path)
{
	size_t		len;
	char	   *img = slurp(path, &len);
	char	   *copy = malloc(len);
	void	   *addr[NNAMES];
	const char *other[] = {"fx_no_such_function"};
	char		why[256];
	char		what[128];
	int			accepted = 0;
	size_t		cuts[] = {0, 10, 63, 64, len / 3, len / 2, len - 200, len - 1};

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
	{
		memcpy(copy, img, len);
		if (btjit_object_link(copy, cuts[i], names, addr, NNAMES, why, sizeof(why)))
			accepted++;
	}
	check(accepted == 0, "truncated objects refused (8 lengths)", NULL);

	/* the code section made writable: refused, whatever else it holds */
	{
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *) img;
		int			marked = 0;

		memcpy(copy, img, len);
		for (int i = 0; i < eh->e_shnum; i++)
		{
			Elf64_Shdr *sh = (Elf64_Shdr *) (copy + eh->e_shoff) + i;

			if (sh->sh_flags & SHF_EXECINSTR)
			{
				sh->sh_flags |= SHF_WRITE;
				marked++;
			}
		}
		check(marked > 0 &&
			  !btjit_object_link(copy, len, names, addr, NNAMES, why, sizeof(why)) &&
			  strstr(why, "writable and executable"),
			  "a writable code section refused", why);
	}

	memcpy(copy, img, len);
	copy[1] = 'X';
	check(!btjit_object_link(copy, len, names, addr, NNAMES, why, sizeof(why)) &&
		  strstr(why, "ELF"), "bad magic refused", why);

	memcpy(copy, img, len);
	copy[18] = 3;				/* e_machine = EM_386 */
	check(!btjit_object_link(copy, len, names, addr, NNAMES, why, sizeof(why)) &&
		  strstr(why, "x86-64"), "other machine refused", why);

	memcpy(copy, img, len);
	snprintf(what, sizeof(what), "a name the object lacks refused");
	check(!btjit_object_link(copy, len, other, addr, 1, why, sizeof(why)) &&
		  strstr(why, "fx_no_such_function"), what, why);

	/* random byte flips: refused or linked, never a crash */
	srand(42);
	for (int i = 0; i < 200; i++)
	{
		memcpy(copy, img, len);
		for (int k = 0; k < 4; k++)
			copy[64 + rand() % (len - 64)] ^= (char) (1 + rand() % 255);
		(void) btjit_object_link(copy, len, names, addr, NNAMES, why, sizeof(why));
	}
	check(1, "200 randomly damaged objects: no crash", NULL);
	free(copy);
	free(img);
}

int
main(int argc, char **argv)
{
	if (argc != 5)
	{
		fprintf(stderr, "usage: %s LARGE.o SMALL.o PIC.o MISSING.o\n", argv[0]);
		return 2;
	}
	test_links("large code model", argv[1]);
	test_known(argv[1]);
	/* PC-relative references to the host cannot reach an arbitrary mapping */
	test_refused("small code model", argv[2], "out of range");
	test_refused("PIC (GOT-relative)", argv[3], "is not supported");
	test_refused("undefined symbol", argv[4], "host_missing");
	test_damaged(argv[1]);
	check(wx_mappings() == 0, "no mapping is writable and executable", NULL);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
