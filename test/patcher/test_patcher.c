/*-------------------------------------------------------------------------
 *
 * test_patcher.c
 *	  Unit tests of the locator (src/locate/, with the analysis of
 *	  src/binpatch/) and redirect.c, outside PostgreSQL.
 *
 * Four groups:
 *
 *	1. The detour, on small functions written in assembly with the prologue
 *	   shapes real builds have (frame pointer, endbr64, no frame pointer,
 *	   RIP-relative loads, a call in the first bytes), one emitted as bytes
 *	   into an executable page near a static array, one crossing a page
 *	   boundary of a file mapping whose second page was written before
 *	   (accepted), and shapes that must be refused (a loop back into the
 *	   first bytes, a conditional branch or a too-short function there; a
 *	   function crossing into a page that is not the next piece of the same
 *	   file, or not executable).  Each is called through its normal
 *	   address, with the detour to a counting replacement that calls
 *	   d->stock, and again after removal.
 *
 *	2. The locator on miniature servers (fake_server.c) built with and
 *	   without frame pointer and endbr64, compared with the true address
 *	   from their .symtab; broken builds must be refused.  Each is also run
 *	   with --self: it locates itself through /proc/self/exe, detours, and
 *	   checks its own searches.
 *
 *	3. The locator on the real server binary under test (the one PGXS
 *	   describes, see the Makefile, or $BTJIT_TEST_SERVER) and, if present,
 *	   another minor release (never downloaded here).  The binary is mapped
 *	   like the loader would; the fault modes must fail with a message; on
 *	   a build examined by hand (listed by build-id in known_builds.tsv,
 *	   next to this program, or $BTJIT_TEST_KNOWN_BUILDS) the address,
 *	   call sites, _bt_compare's extent and the detour lengths are checked,
 *	   and single-instruction mutations of the mapped code (wrong
 *	   registers, an extra caller, an expected caller missing, the address
 *	   taken) must each break the proof in the expected way; any other
 *	   build gets the generic checks and the output says so (run on a copy
 *	   of the server with its build-id changed).  The detours are installed
 *	   on (never run on) the real _bt_binsrch and then, with that one kept,
 *	   _bt_compare, as the module does.
 *
 *	4. Servers for other architectures: bare ELF headers, and a copy of the
 *	   real server differing only in e_machine, must be refused by name.
 *
 * Output ends with "N passed, M failed"; the exit status is non-zero on
 * any failure.
 *
 * test/patcher/test_patcher.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "binpatch.h"
#include "locate.h"

/*
 * The server under test: the Makefile passes the one PGXS describes
 * ($(bindir)/postgres) and its major version; BTJIT_TEST_SERVER overrides.
 */
#ifndef DEFAULT_SERVER
#define DEFAULT_SERVER		"/usr/lib/postgresql/15/bin/postgres"
#endif
#ifndef DEFAULT_MAJOR
#define DEFAULT_MAJOR		15
#endif

/*
 * Another minor release of the same major, unpacked by hand (never
 * downloaded here); BTJIT_TEST_OTHER_SERVER overrides.  Only 15 has one.
 */
#if DEFAULT_MAJOR == 15
#define DEFAULT_OTHER		"/tmp/pg1520/usr/lib/postgresql/15/bin/postgres"
#define OTHER_HINT			" (to test it: cd /tmp && apt-get download postgresql-15=15.20-0+deb12u1 && " \
	"dpkg-deb -x postgresql-15_15.20-0+deb12u1_amd64.deb /tmp/pg1520)"
#else
#define DEFAULT_OTHER		NULL
#define OTHER_HINT			""
#endif

/*
 * _bt_readpage's signature as the server headers of DEFAULT_MAJOR give it
 * (the module takes it from the headers it is built with; this program is
 * built without them): 15 has (scan, dir, offnum) and hands _bt_checkkeys
 * &continuescan (a bool) as its fifth argument; 17 and 18 add firstPage
 * and hand it the BTReadPageState (48 bytes in both) as its second.
 */
#if DEFAULT_MAJOR == 15
static const BtjitReadpageSignature readpage_signature = {3, 4, 1};
#else
static const BtjitReadpageSignature readpage_signature = {4, 1, 48};
#endif

/*
 * _bt_search as gcc may split it (src/targets/descent.c gives the module's
 * locator the same): its head "*bufP = _bt_getroot(rel[, heaprel],
 * access)", the part handing rel to _bt_moveright (18: _bt_relandgetbuf).
 */
#if DEFAULT_MAJOR == 15
static const BtjitSplitSignature search_split_signature = {
	"_bt_search", 5, 1u << 3, "_bt_getroot", 2, {0, 3}, 2, "_bt_moveright"
};
#elif DEFAULT_MAJOR == 17
static const BtjitSplitSignature search_split_signature = {
	"_bt_search", 5, 1u << 4, "_bt_getroot", 3, {0, 1, 4}, 3, "_bt_moveright"
};
#else
static const BtjitSplitSignature search_split_signature = {
	"_bt_search", 5, 1u << 4, "_bt_getroot", 3, {0, 1, 4}, 3, "_bt_relandgetbuf"
};
#endif

/*
 * What the module asks the locator for on 15 to 18: _bt_binsrch and the
 * three exported functions it may redirect after it.
 */
static const BtjitLocateRequest *
req(BtjitLocateFault fault)
{
	static BtjitLocateRequest r;

	memset(&r, 0, sizeof(r));
	r.fault = fault;
	r.nexported = 3;
	r.exported[0] = "_bt_compare";
	r.exported[1] = "_bt_binsrch_insert";
	r.exported[2] = "_bt_checkkeys";
	return &r;
}

/* The location of an exported function the request named */
static uintptr_t
exp_addr(const BtjitLocation *loc, const char *name)
{
	const BtjitExportedLocation *e = btjit_location_exported(loc, name);

	return e != NULL ? e->addr : 0;
}

static size_t
exp_size(const BtjitLocation *loc, const char *name)
{
	const BtjitExportedLocation *e = btjit_location_exported(loc, name);

	return e != NULL ? e->size : 0;
}

static const char *
exp_refusal(const BtjitLocation *loc, const char *name)
{
	const BtjitExportedLocation *e = btjit_location_exported(loc, name);

	return e != NULL ? e->refusal : "not requested";
}

/* where this program, the miniature servers and known_builds.tsv are */
static char test_dir[512];

static int	npassed;
static int	nfailed;

#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
static bool
check(bool ok, const char *fmt,...)
{
	va_list		ap;

	printf("%s - ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (ok)
		npassed++;
	else
		nfailed++;
	return ok;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ----------------------------------------------------------------
 *		Functions to detour, in assembly: exact shapes, any -O level
 * ----------------------------------------------------------------
 *
 * All are long f(long a, long b, long c).
 */

long		g_scale = 7;
long		g_table[4] = {100, 200, 300, 400};

#define DECL(name) \
	extern long name(long, long, long); \
	extern const char name##_end[]

DECL(t_fp);
DECL(t_endbr);
DECL(t_nofp);
DECL(t_riprel);
DECL(t_leafirst);
DECL(t_callfirst);
DECL(t_jmpfirst);
DECL(t_loop);
DECL(t_jccfirst);
DECL(t_entryloop);
DECL(t_tiny);

#define FUNC(name) \
	"	.p2align 4\n" \
	"	.globl " #name "\n" \
	"	.hidden " #name "\n" \
	"	.type " #name ", @function\n" \
	#name ":\n"
#define END(name) \
	"	.globl " #name "_end\n" \
	"	.hidden " #name "_end\n" \
	#name "_end:\n" \
	"	.size " #name ", " #name "_end - " #name "\n"

__asm__(
		"	.text\n"
		"	.intel_syntax noprefix\n"

/* frame pointer, _bt_binsrch's prologue in Debian's build: 3a + b + (uint32) c */
		FUNC(t_fp)
		"	push rbp\n"
		"	mov rbp, rsp\n"
		"	push r15\n"
		"	push r14\n"
		"	push r13\n"
		"	mov r13, rsi\n"
		"	push r12\n"
		"	push rbx\n"
		"	sub rsp, 0x28\n"
		"	mov [rbp-0x38], rdi\n"
		"	mov ebx, edx\n"
		"	mov rax, [rbp-0x38]\n"
		"	lea rax, [rax+rax*2]\n"
		"	add rax, r13\n"
		"	add rax, rbx\n"
		"	add rsp, 0x28\n"
		"	pop rbx\n"
		"	pop r12\n"
		"	pop r13\n"
		"	pop r14\n"
		"	pop r15\n"
		"	pop rbp\n"
		"	ret\n"
		END(t_fp)

/* endbr64 entry (CET builds): a + 2b - c */
		FUNC(t_endbr)
		"	endbr64\n"
		"	push rbp\n"
		"	mov rbp, rsp\n"
		"	push rbx\n"
		"	mov rbx, rdi\n"
		"	lea rax, [rbx+rsi*2]\n"
		"	sub rax, rdx\n"
		"	pop rbx\n"
		"	pop rbp\n"
		"	ret\n"
		END(t_endbr)

/* no frame pointer, rsp-based spill: (a ^ b) + (uint32) c */
		FUNC(t_nofp)
		"	push rbx\n"
		"	mov ebx, edx\n"
		"	sub rsp, 16\n"
		"	mov [rsp+8], rdi\n"
		"	mov rax, [rsp+8]\n"
		"	xor rax, rsi\n"
		"	add rax, rbx\n"
		"	add rsp, 16\n"
		"	pop rbx\n"
		"	ret\n"
		END(t_nofp)

/* RIP-relative load first: g_scale * a + b + c */
		FUNC(t_riprel)
		"	mov rax, [rip + g_scale]\n"
		"	imul rax, rdi\n"
		"	add rax, rsi\n"
		"	add rax, rdx\n"
		"	ret\n"
		END(t_riprel)

/* RIP-relative lea first: g_table[a] + b + c */
		FUNC(t_leafirst)
		"	lea rax, [rip + g_table]\n"
		"	mov rax, [rax + rdi*8]\n"
		"	add rax, rsi\n"
		"	add rax, rdx\n"
		"	ret\n"
		END(t_leafirst)

/* a call in the displaced bytes: a + b + c */
		FUNC(t_callfirst)
		"	sub rsp, 8\n"
		"	call t_helper\n"
		"	add rsp, 8\n"
		"	add rax, rdi\n"
		"	ret\n"
		END(t_callfirst)
		"t_helper:\n"
		"	lea rax, [rsi+rdx]\n"
		"	ret\n"

/* a jmp rel32 as the whole displaced part: a + b - c */
		FUNC(t_jmpfirst)
		"	.byte 0xe9\n"
		"	.long 0\n"
		"	lea rax, [rdi+rsi]\n"
		"	sub rax, rdx\n"
		"	ret\n"
		END(t_jmpfirst)

/* loop back to +2, inside the first 5 bytes (refuse): a * b + c */
		FUNC(t_loop)
		"	xor eax, eax\n"
		"1:	add rax, rdi\n"
		"	dec rsi\n"
		"	jnz 1b\n"
		"	add rax, rdx\n"
		"	ret\n"
		END(t_loop)

/* conditional branch in the first bytes (refuse): a ? a + b : c */
		FUNC(t_jccfirst)
		"	test rdi, rdi\n"
		"	je 1f\n"
		"	lea rax, [rdi+rsi]\n"
		"	ret\n"
		"1:	mov rax, rdx\n"
		"	ret\n"
		END(t_jccfirst)

/* loop back to the entry itself (refuse): c + a, for a >= 1 */
		FUNC(t_entryloop)
		"	add rdx, 1\n"
		"	dec rdi\n"
		"	jnz t_entryloop\n"
		"	mov rax, rdx\n"
		"	ret\n"
		END(t_entryloop)

/* three bytes of code, then padding (refuse): (uint32) a */
		FUNC(t_tiny)
		"	mov eax, edi\n"
		"	ret\n"
		"	int3\n"
		"	int3\n"
		"	int3\n"
		"	int3\n"
		END(t_tiny)

		"	.att_syntax prefix\n"
);

typedef long (*fn3) (long, long, long);

static BtjitDetour *cur_detour;
static int	nrepl;

/* the replacement: count, then run the original through the trampoline */
static long
replacement(long a, long b, long c)
{
	fn3			stock = (fn3) cur_detour->stock;

	nrepl++;
	return stock(a, b, c);
}

/* a C caller with direct calls to t_fp: callers compiled elsewhere */
static __attribute__((noinline)) long
call_t_fp_twice(long a, long b, long c)
{
	return t_fp(a, b, c) + t_fp(b, a, c);
}

/* permissions of the mapping holding addr, from /proc/self/maps */
static void
perms_of(const void *addr, char *out)
{
	FILE	   *f = fopen("/proc/self/maps", "r");
	char		line[512];

	strcpy(out, "????");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f))
	{
		unsigned long s;
		unsigned long e;
		char		p[8];

		if (sscanf(line, "%lx-%lx %7s", &s, &e, p) == 3 &&
			(unsigned long) addr >= s && (unsigned long) addr < e)
		{
			memcpy(out, p, 4);
			out[4] = '\0';
			break;
		}
	}
	fclose(f);
}

static int
count_mappings(void)
{
	FILE	   *f = fopen("/proc/self/maps", "r");
	int			n = 0;
	int			c;

	if (f == NULL)
		return -1;
	while ((c = fgetc(f)) != EOF)
		if (c == '\n')
			n++;
	fclose(f);
	return n;
}

static void
detour_case(const char *name, fn3 fn, const char *end, long a, long b, long c,
			long expect, size_t want_offset, size_t want_displaced)
{
	size_t		size = (size_t) (end - (const char *) fn);
	unsigned char before[64];
	BtjitDetour d;
	char		why[512];
	char		perms[8];
	long		r;
	bool		ok;
	long		dist;

	memcpy(before, (const void *) fn, size < sizeof(before) ? size : sizeof(before));
	check(fn(a, b, c) == expect, "%s: original returns %ld", name, expect);

	ok = btjit_detour_install((void *) fn, size, (void *) replacement, &d, why, sizeof(why));
	if (!check(ok, "%s: detour installed: %s", name, ok ? d.description : why))
		return;
	check(d.patch_offset == want_offset && d.displaced_len == want_displaced,
		  "%s: patch at +%zu, %zu bytes displaced (expected +%zu, %zu)", name,
		  d.patch_offset, d.displaced_len, want_offset, want_displaced);
	perms_of((const void *) fn, perms);
	check(strncmp(perms, "r-x", 3) == 0, "%s: text page back to r-x (%s)", name, perms);
	perms_of(d.stub_page, perms);
	check(strncmp(perms, "r-x", 3) == 0, "%s: stub page is r-x (%s)", name, perms);
	dist = (long) ((char *) d.stub_page - (char *) fn);
	check(dist > -0x7fff0000L && dist < 0x7fff0000L, "%s: stub within 2 GiB (%+ld)", name, dist);

	cur_detour = &d;
	nrepl = 0;
	r = fn(a, b, c);
	check(r == expect && nrepl == 1, "%s: call through the original address reaches the replacement (%ld, %d calls)",
		  name, r, nrepl);
	r = ((fn3) d.stock) (a, b, c);
	check(r == expect && nrepl == 1, "%s: d->stock alone gives the original result (%ld)", name, r);

	ok = btjit_detour_remove(&d, why, sizeof(why));
	check(ok, "%s: detour removed%s%s", name, ok ? "" : ": ", ok ? "" : why);
	check(memcmp(before, (const void *) fn, size < sizeof(before) ? size : sizeof(before)) == 0,
		  "%s: original bytes restored", name);
	r = fn(a, b, c);
	check(r == expect && nrepl == 1, "%s: after removal, the original runs alone (%ld)", name, r);
}

static void
refuse_case(const char *name, fn3 fn, const char *end, long a, long b, long c,
			long expect, const char *reason)
{
	size_t		size = (size_t) (end - (const char *) fn);
	unsigned char before[64];
	BtjitDetour d;
	char		why[512];
	int			maps_before = count_mappings();
	bool		ok;

	memcpy(before, (const void *) fn, size < sizeof(before) ? size : sizeof(before));
	ok = btjit_detour_install((void *) fn, size, (void *) replacement, &d, why, sizeof(why));
	check(!ok && strstr(why, reason) != NULL, "%s: refused: %s", name, ok ? "(installed!)" : why);
	if (ok)
	{
		btjit_detour_remove(&d, why, sizeof(why));
		return;
	}
	check(memcmp(before, (const void *) fn, size < sizeof(before) ? size : sizeof(before)) == 0 &&
		  count_mappings() == maps_before,
		  "%s: nothing changed (bytes, mappings)", name);
	check(fn(a, b, c) == expect, "%s: still works", name);
}

/*
 * A function emitted as bytes into an executable page near g_array, with a
 * RIP-relative load of g_array[1] in the displaced bytes.
 */
static long g_array[2] = {5, 1000};

static void *
map_near(const void *near)
{
	long		ps = sysconf(_SC_PAGESIZE);
	uintptr_t	base = ((uintptr_t) near & ~(uintptr_t) (ps - 1));
	int			k;

	for (k = 1; k < 4096; k++)
	{
		uintptr_t	at = base - (uintptr_t) k * 0x100000;
		void	   *p = mmap((void *) at, ps, PROT_READ | PROT_WRITE,
							 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p == (void *) at)
			return p;
		if (p != MAP_FAILED)
			munmap(p, ps);
	}
	return NULL;
}

static void
bytes_case(void)
{
	unsigned char *page = map_near(g_array);
	unsigned char code[] = {
		0x55,					/* push rbp */
		0x48, 0x89, 0xe5,		/* mov rbp, rsp */
		0x48, 0x8b, 0x05, 0, 0, 0, 0,	/* mov rax, [rip + X] */
		0x48, 0x01, 0xf8,		/* add rax, rdi */
		0x48, 0x01, 0xf0,		/* add rax, rsi */
		0x48, 0x01, 0xd0,		/* add rax, rdx */
		0x5d,					/* pop rbp */
		0xc3					/* ret */
	};
	int32_t		disp;

	if (!check(page != NULL, "bytes: executable page near g_array"))
		return;
	disp = (int32_t) ((intptr_t) &g_array[1] - (intptr_t) (page + 11));
	memcpy(code + 7, &disp, 4);
	memcpy(page, code, sizeof(code));
	mprotect(page, sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC);
	detour_case("bytes (push rbp; mov rbp,rsp; mov rax,[rip+X])", (fn3) (void *) page,
				(const char *) page + sizeof(code), 1, 2, 3, 1006, 0, 11);
	munmap(page, sysconf(_SC_PAGESIZE));
}

/* Write len bytes into mapped text (made writable for the write) */
static void
poke(uintptr_t addr, const unsigned char *bytes, int len)
{
	long		ps = sysconf(_SC_PAGESIZE);
	uintptr_t	page = addr & ~(uintptr_t) (ps - 1);
	size_t		span = ((addr + len - 1) & ~(uintptr_t) (ps - 1)) - page + ps;

	mprotect((void *) page, span, PROT_READ | PROT_WRITE);
	memcpy((void *) addr, bytes, len);
	mprotect((void *) page, span, PROT_READ | PROT_EXEC);
}

/* How many lines of /proc/self/maps the range [addr, addr + len) touches */
static int
mappings_touched(uintptr_t addr, size_t len)
{
	FILE	   *f = fopen("/proc/self/maps", "r");
	char		line[512];
	int			n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
	{
		unsigned long s;
		unsigned long e;

		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < addr + len && e > addr)
			n++;
	}
	fclose(f);
	return n;
}

/*
 * Functions crossing a page boundary of a file mapping, like 17.12's
 * _bt_compare: the detour needs the whole body to be executable code of
 * one contiguous piece of one file, and a page written earlier (by another
 * detour) is a mapping of its own.  The file holds the function across
 * its first page boundary, and a copy of its second page as its third
 * page.
 */
static char cross_path[600];

/* a + b + c, 39 bytes, placed at CROSS_AT: 32 bytes on the first page */
static const unsigned char cross_code[] = {
	0x55,						/* push rbp */
	0x48, 0x89, 0xe5,			/* mov rbp, rsp */
	0x48, 0x89, 0xf8,			/* mov rax, rdi */
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x48, 0x01, 0xf0,			/* add rax, rsi (crosses the boundary) */
	0x48, 0x01, 0xd0,			/* add rax, rdx */
	0x5d,						/* pop rbp */
	0xc3						/* ret */
};

#define CROSS_AT(ps)	((ps) - 32)

/* Write the three-page file; false if it cannot be written */
static bool
cross_file(long ps)
{
	unsigned char *buf = calloc(3, ps);
	int			fd;
	bool		ok;

	if (buf == NULL)
		return false;
	memset(buf, 0xcc, 3 * ps);
	memcpy(buf + CROSS_AT(ps), cross_code, sizeof(cross_code));
	memcpy(buf + 2 * ps, buf + ps, ps);
	snprintf(cross_path, sizeof(cross_path), "%s/cross_page.bin", test_dir);
	fd = open(cross_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ok = fd >= 0 && write(fd, buf, 3 * ps) == 3 * ps;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ok;
}

/*
 * Map two pages at one place: the file's page at off1, then the one at
 * off2 (MAP_FIXED into a reservation, so they are adjacent).  prot2 is the
 * second page's protection; off2 < 0 maps an anonymous page holding the
 * same bytes instead.
 */
static unsigned char *
cross_map(long ps, off_t off1, off_t off2, int prot2)
{
	int			fd = open(cross_path, O_RDONLY);
	unsigned char *base;
	bool		ok;

	if (fd < 0)
		return NULL;
	base = mmap(NULL, 2 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = base != MAP_FAILED &&
		mmap(base, ps, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, off1) == base;
	if (ok && off2 >= 0)
		ok = mmap(base + ps, ps, prot2, MAP_PRIVATE | MAP_FIXED, fd, off2) == base + ps;
	else if (ok)
	{
		ok = mmap(base + ps, ps, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == base + ps;
		if (ok)
		{
			memcpy(base + ps, cross_code + 32, sizeof(cross_code) - 32);
			ok = mprotect(base + ps, ps, prot2) == 0;
		}
	}
	close(fd);
	if (!ok && base != MAP_FAILED)
	{
		munmap(base, 2 * ps);
		return NULL;
	}
	return base;
}

static void
cross_page_tests(void)
{
	long		ps = sysconf(_SC_PAGESIZE);
	unsigned char *base;
	fn3			fn;
	const char *end;
	BtjitDetour d;
	char		why[512];
	bool		ok;

	printf("# detour of a function crossing a page boundary\n");
	if (!check(cross_file(ps), "cross-page: file %s written", cross_path))
		return;

	/* one file mapping, its second page written (split off): accepted */
	base = cross_map(ps, 0, ps, PROT_READ | PROT_EXEC);
	if (check(base != NULL, "cross-page: file mapped at consecutive offsets"))
	{
		fn = (fn3) (void *) (base + CROSS_AT(ps));
		end = (const char *) fn + sizeof(cross_code);
		poke((uintptr_t) base + ps, base + ps, 1);	/* as an earlier detour would */
		check(mappings_touched((uintptr_t) fn, sizeof(cross_code)) == 2,
			  "cross-page: the function spans 2 mappings of the file (%d)",
			  mappings_touched((uintptr_t) fn, sizeof(cross_code)));
		detour_case("cross-page, consecutive offsets", fn, end, 1, 20, 300, 321, 0, 7);
		munmap(base, 2 * ps);
	}

	/* the same bytes, but the second page from elsewhere in the file */
	base = cross_map(ps, 0, 2 * ps, PROT_READ | PROT_EXEC);
	if (check(base != NULL, "cross-page: file mapped at non-consecutive offsets"))
	{
		fn = (fn3) (void *) (base + CROSS_AT(ps));
		end = (const char *) fn + sizeof(cross_code);
		refuse_case("cross-page, non-consecutive offsets", fn, end, 1, 20, 300, 321,
					"is not within executable mappings");
		munmap(base, 2 * ps);
	}

	/* the second page anonymous, holding the same bytes */
	base = cross_map(ps, 0, -1, PROT_READ | PROT_EXEC);
	if (check(base != NULL, "cross-page: second page anonymous"))
	{
		fn = (fn3) (void *) (base + CROSS_AT(ps));
		end = (const char *) fn + sizeof(cross_code);
		refuse_case("cross-page, second page anonymous", fn, end, 1, 20, 300, 321,
					"is not within executable mappings");
		munmap(base, 2 * ps);
	}

	/* the second page not executable (not called: it would fault) */
	base = cross_map(ps, 0, ps, PROT_READ);
	if (check(base != NULL, "cross-page: second page not executable"))
	{
		unsigned char before[sizeof(cross_code)];

		fn = (fn3) (void *) (base + CROSS_AT(ps));
		memcpy(before, (void *) fn, sizeof(before));
		ok = btjit_detour_install((void *) fn, sizeof(cross_code), (void *) replacement,
								  &d, why, sizeof(why));
		check(!ok && strstr(why, "is not within executable mappings") != NULL,
			  "cross-page, second page not executable: refused: %s", ok ? "(installed!)" : why);
		if (ok)
			btjit_detour_remove(&d, why, sizeof(why));
		else
			check(memcmp(before, (void *) fn, sizeof(before)) == 0,
				  "cross-page, second page not executable: bytes unchanged");
		munmap(base, 2 * ps);
	}
	unlink(cross_path);
}

static void
detour_tests(void)
{
	BtjitDetour d;
	char		why[512];
	bool		ok;

	printf("# detour on synthetic functions\n");
	detour_case("frame pointer", t_fp, t_fp_end, 10, 20, 30, 80, 0, 6);
	detour_case("endbr64", t_endbr, t_endbr_end, 10, 20, 5, 45, 4, 5);
	detour_case("no frame pointer", t_nofp, t_nofp_end, 12, 10, 5, (12 ^ 10) + 5, 0, 7);
	detour_case("rip-relative load", t_riprel, t_riprel_end, 3, 4, 5, 30, 0, 7);
	detour_case("rip-relative lea", t_leafirst, t_leafirst_end, 2, 4, 5, 309, 0, 7);
	detour_case("call in first bytes", t_callfirst, t_callfirst_end, 1, 2, 3, 6, 0, 9);
	detour_case("jmp rel32 first", t_jmpfirst, t_jmpfirst_end, 7, 8, 2, 13, 0, 5);
	bytes_case();
	cross_page_tests();

	/* the relocated RIP-relative load must still see the variable */
	ok = btjit_detour_install((void *) t_riprel, (size_t) (t_riprel_end - (const char *) t_riprel),
							  (void *) replacement, &d, why, sizeof(why));
	if (check(ok, "rip-relative load: installed again"))
	{
		long		r;

		cur_detour = &d;
		g_scale = 11;
		r = t_riprel(3, 4, 5);
		check(r == 42, "rip-relative load: trampoline reads the live variable (%ld)", r);
		g_scale = 7;
		btjit_detour_remove(&d, why, sizeof(why));
	}

	/* compiled C code calling the detoured function directly */
	ok = btjit_detour_install((void *) t_fp, (size_t) (t_fp_end - (const char *) t_fp),
							  (void *) replacement, &d, why, sizeof(why));
	if (check(ok, "direct calls from C: installed"))
	{
		long		r;

		cur_detour = &d;
		nrepl = 0;
		r = call_t_fp_twice(1, 2, 3);
		check(r == (3 + 2 + 3) + (6 + 1 + 3) && nrepl == 2,
			  "direct calls from C: both calls reach the replacement (%ld, %d)", r, nrepl);
		btjit_detour_remove(&d, why, sizeof(why));
	}

	printf("# detour refusals\n");
	refuse_case("loop into first bytes", t_loop, t_loop_end, 3, 4, 5, 17, "inside the");
	refuse_case("loop to the entry", t_entryloop, t_entryloop_end, 3, 4, 5, 8, "inside the");
	refuse_case("jcc in first bytes", t_jccfirst, t_jccfirst_end, 3, 4, 5, 7, "cannot be moved");
	refuse_case("too short", t_tiny, t_tiny_end, 3, 4, 5, 3, "too short");
	refuse_case("size below 5", t_tiny, (const char *) t_tiny + 3, 3, 4, 5, 3, "out of range");
}

/* ----------------------------------------------------------------
 *		Mapping binaries, and their symbol tables
 * ----------------------------------------------------------------
 */

typedef struct Mapped
{
	uintptr_t	base;
	size_t		span;
} Mapped;

/* Map a PIE's PT_LOAD segments the way the loader would (no relocation). */
static bool
map_binary(const char *path, Mapped *m)
{
	int			fd = open(path, O_RDONLY);
	Elf64_Ehdr	eh;
	Elf64_Phdr	ph[64];
	uint64_t	hi = 0;
	long		ps = sysconf(_SC_PAGESIZE);
	char	   *base;
	int			i;

	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_type != ET_DYN ||
		eh.e_phnum > 64 ||
		pread(fd, ph, sizeof(Elf64_Phdr) * eh.e_phnum, eh.e_phoff) !=
		(ssize_t) (sizeof(Elf64_Phdr) * eh.e_phnum))
	{
		close(fd);
		return false;
	}
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	m->span = (hi + ps - 1) & ~(uint64_t) (ps - 1);
	base = mmap(NULL, m->span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
	{
		close(fd);
		return false;
	}
	for (i = 0; i < eh.e_phnum; i++)
	{
		uint64_t	a;
		uint64_t	o;
		int			prot = PROT_READ;

		if (ph[i].p_type != PT_LOAD || ph[i].p_filesz == 0)
			continue;
		a = ph[i].p_vaddr & ~(uint64_t) (ps - 1);
		o = ph[i].p_offset & ~(uint64_t) (ps - 1);
		if (ph[i].p_flags & PF_X)
			prot |= PROT_EXEC;	/* never run: needed to test the detour */
		if (mmap(base + a, ph[i].p_vaddr + ph[i].p_filesz - a, prot,
				 MAP_PRIVATE | MAP_FIXED, fd, (off_t) o) == MAP_FAILED)
		{
			munmap(base, m->span);
			close(fd);
			return false;
		}
	}
	close(fd);
	m->base = (uintptr_t) base;
	return true;
}

/*
 * The value of a function symbol in the symbol table of type sh_type
 * (SHT_SYMTAB: local ones too; SHT_DYNSYM: the exported ones), 0 if absent
 */
static uint64_t
sym_value(const char *path, const char *name, uint32_t sh_type)
{
	int			fd = open(path, O_RDONLY);
	Elf64_Ehdr	eh;
	Elf64_Shdr *sh = NULL;
	uint64_t	value = 0;
	int			i;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_shnum == 0)
		goto out;
	sh = malloc(sizeof(Elf64_Shdr) * eh.e_shnum);
	if (pread(fd, sh, sizeof(Elf64_Shdr) * eh.e_shnum, eh.e_shoff) !=
		(ssize_t) (sizeof(Elf64_Shdr) * eh.e_shnum))
		goto out;
	for (i = 0; i < eh.e_shnum && value == 0; i++)
	{
		Elf64_Sym  *syms;
		char	   *str;
		size_t		n;
		size_t		k;

		if (sh[i].sh_type != sh_type)
			continue;
		syms = malloc(sh[i].sh_size);
		str = malloc(sh[sh[i].sh_link].sh_size);
		n = sh[i].sh_size / sizeof(Elf64_Sym);
		if (pread(fd, syms, sh[i].sh_size, sh[i].sh_offset) == (ssize_t) sh[i].sh_size &&
			pread(fd, str, sh[sh[i].sh_link].sh_size, sh[sh[i].sh_link].sh_offset) ==
			(ssize_t) sh[sh[i].sh_link].sh_size)
		{
			for (k = 0; k < n; k++)
				if (syms[k].st_name < sh[sh[i].sh_link].sh_size &&
					strcmp(str + syms[k].st_name, name) == 0 &&
					ELF64_ST_TYPE(syms[k].st_info) == STT_FUNC)
					value = syms[k].st_value;
		}
		free(syms);
		free(str);
	}
out:
	free(sh);
	close(fd);
	return value;
}

/* The value of a (local) symbol in .symtab, 0 if absent */
static uint64_t
symtab_value(const char *path, const char *name)
{
	return sym_value(path, name, SHT_SYMTAB);
}

/* ----------------------------------------------------------------
 *		The locator on miniature servers
 * ----------------------------------------------------------------
 */

static void
fake_good(const char *fake, size_t want_patch_offset)
{
	char		path[600];
	char		cmd[700];
	char		line[1024];
	Mapped		m;
	BtjitLocation loc;
	char		why[1024];
	uint64_t	truth;
	bool		ok;
	FILE	   *p;

	snprintf(path, sizeof(path), "%s/%s", test_dir, fake);
	truth = symtab_value(path, "_bt_binsrch");
	if (!check(truth != 0, "%s: true _bt_binsrch from .symtab: %#lx", fake, (unsigned long) truth))
		return;
	if (!check(map_binary(path, &m), "%s: mapped", fake))
		return;
	ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	check(ok && loc.binsrch - loc.load_bias == truth,
		  "%s: located at +%#lx: %s", fake, ok ? (unsigned long) (loc.binsrch - loc.load_bias) : 0UL,
		  ok ? loc.evidence : why);
	munmap((void *) m.base, m.span);

	/* the same, in its own process, through /proc/self/exe, plus detour */
	snprintf(cmd, sizeof(cmd), "'%s' --self 2>&1", path);
	p = popen(cmd, "r");
	line[0] = '\0';
	if (p)
	{
		if (fgets(line, sizeof(line), p) == NULL)
			line[0] = '\0';
		pclose(p);
	}
	line[strcspn(line, "\n")] = '\0';
	{
		unsigned long off = 0;
		int			calls = 0;
		size_t		patch_offset = 99;
		size_t		displaced = 0;

		ok = sscanf(line, "SELF ok offset=%lx calls=%d patch_offset=%zu displaced=%zu",
					&off, &calls, &patch_offset, &displaced) == 4;
		check(ok && off == truth && calls > 0 && patch_offset == want_patch_offset &&
			  displaced >= 5,
			  "%s --self: %s", fake, line);
	}
}

static void
fake_bad(const char *fake, const char *reason)
{
	char		path[600];
	char		cmd[700];
	char		line[1024];
	Mapped		m;
	BtjitLocation loc;
	char		why[1024];
	bool		ok;
	FILE	   *p;

	snprintf(path, sizeof(path), "%s/%s", test_dir, fake);
	if (!check(map_binary(path, &m), "%s: mapped", fake))
		return;
	ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	check(!ok && strstr(why, reason) != NULL, "%s: refused: %s", fake, ok ? loc.evidence : why);
	munmap((void *) m.base, m.span);

	snprintf(cmd, sizeof(cmd), "'%s' --self 2>&1", path);
	p = popen(cmd, "r");
	line[0] = '\0';
	if (p)
	{
		if (fgets(line, sizeof(line), p) == NULL)
			line[0] = '\0';
		pclose(p);
	}
	line[strcspn(line, "\n")] = '\0';
	check(strncmp(line, "SELF fail locate:", 17) == 0 && strstr(line, reason) != NULL,
		  "%s --self: %s", fake, line);
}

static void
fake_tests(void)
{
	printf("# locator on miniature servers\n");
	fake_good("fake_fp", 0);
	fake_good("fake_nofp_cet", 0);
	fake_good("fake_endbr", 4);
	fake_bad("fake_swapped", "rdi is not shown to be the entry rdi");
	fake_bad("fake_addr_taken", "is taken");
	fake_bad("fake_extra_caller", "also reached by a call");
	fake_bad("fake_ipa_ra", "reaches no indirect call");
}

/* ----------------------------------------------------------------
 *		The locator on real server binaries
 * ----------------------------------------------------------------
 */

/*
 * A single-instruction change to a known build's code, as mapped here,
 * which must make the locator refuse for the stated reason.  The new bytes
 * are repl; or, when retarget is set, the original instruction with its
 * rel32 or RIP displacement (its last 4 bytes) pointed at retarget, an
 * address in the same build.
 */
typedef struct Mutation
{
	char	   *what;
	uint64_t	vaddr;
	int			len;
	unsigned char orig[8];
	unsigned char repl[8];
	uint64_t	retarget;
	char	   *reason;
} Mutation;

/*
 * A server build examined by hand (objdump -d, nm -D, readelf -n): where
 * the locator must find things, what the detours must displace, and the
 * mutations it must refuse.  A zero field was not examined.  They are read
 * from known_builds.tsv (read_known_builds), which says what each means.
 */
typedef struct KnownBuild
{
	char	   *name;			/* Debian package version */
	char	   *build_id;
	uint64_t	binsrch;
	size_t		binsrch_size;
	uint64_t	callsite[2];	/* in _bt_search (or its .part), _bt_first */
	uint64_t	compare;
	size_t		compare_size;
	size_t		binsrch_patch[2];	/* patch offset, bytes displaced */
	size_t		compare_patch[2];
	int			compare_maps;	/* mappings _bt_compare spans once the
								 * _bt_binsrch detour has written its page */
	uint64_t	insert;			/* exported _bt_binsrch_insert */
	size_t		insert_patch[2];
	uint64_t	checkkeys;		/* exported _bt_checkkeys */
	size_t		checkkeys_patch[2];
	Mutation   *mutations;
	int			nmutations;
	uint64_t	readpage;		/* _bt_readpage (readpage.c) */
	size_t		readpage_size;
	int			readpage_calls;
	Mutation   *readpage_mutations; /* ... which its own calling convention
									 * proof must refuse */
	int			nreadpage_mutations;
	uint64_t	search_part;	/* the part gcc split off _bt_search */
	size_t		search_part_size;
	int			search_part_calls;
} KnownBuild;

static KnownBuild *known_builds;
static int	nknown_builds;

/*
 * The facts a build row may give, KEY=VALUE with VALUE nvalues numbers
 * separated by commas, and where they go.  Every number must be non-zero
 * (zero means "not examined": leave the fact out instead) except the
 * offset of a patch, which is 0 where a function has no endbr64.
 */
typedef enum FactSlot
{
	SLOT_U64,
	SLOT_SIZE,
	SLOT_INT
} FactSlot;

typedef struct BuildFact
{
	const char *key;
	int			nvalues;
	bool		first_may_be_zero;
	struct
	{
		size_t		offset;
		FactSlot	slot;
	}			values[3];
} BuildFact;

#define FACT_U64(field) {offsetof(KnownBuild, field), SLOT_U64}
#define FACT_SIZE(field) {offsetof(KnownBuild, field), SLOT_SIZE}
#define FACT_INT(field) {offsetof(KnownBuild, field), SLOT_INT}

static const BuildFact build_facts[] = {
	{"binsrch", 2, false, {FACT_U64(binsrch), FACT_SIZE(binsrch_size)}},
	{"callsites", 2, false, {FACT_U64(callsite[0]), FACT_U64(callsite[1])}},
	{"compare", 2, false, {FACT_U64(compare), FACT_SIZE(compare_size)}},
	{"compare_maps", 1, false, {FACT_INT(compare_maps)}},
	{"insert", 1, false, {FACT_U64(insert)}},
	{"checkkeys", 1, false, {FACT_U64(checkkeys)}},
	{"readpage", 3, false, {FACT_U64(readpage), FACT_SIZE(readpage_size), FACT_INT(readpage_calls)}},
	{"search_part", 3, false, {FACT_U64(search_part), FACT_SIZE(search_part_size), FACT_INT(search_part_calls)}},
	{"binsrch_patch", 2, true, {FACT_SIZE(binsrch_patch[0]), FACT_SIZE(binsrch_patch[1])}},
	{"compare_patch", 2, true, {FACT_SIZE(compare_patch[0]), FACT_SIZE(compare_patch[1])}},
	{"insert_patch", 2, true, {FACT_SIZE(insert_patch[0]), FACT_SIZE(insert_patch[1])}},
	{"checkkeys_patch", 2, true, {FACT_SIZE(checkkeys_patch[0]), FACT_SIZE(checkkeys_patch[1])}},
};

#undef FACT_U64
#undef FACT_SIZE
#undef FACT_INT

#define LENGTHOF(a) ((int) (sizeof(a) / sizeof((a)[0])))

/* A C number (0x1b7cd0, 6) making up all of s */
static bool
parse_number(const char *s, uint64_t *out)
{
	char	   *end;

	if (*s < '0' || *s > '9')
		return false;
	*out = strtoull(s, &end, 0);
	return *end == '\0';
}

/*
 * Bytes in hex separated by single spaces ("4c 89 ee"), 1 to 8 of them.
 * Returns how many, 0 if s is not that.
 */
static int
parse_bytes(const char *s, unsigned char *out)
{
	int			n = 0;

	for (;;)
	{
		if (n == 8 || !isxdigit((unsigned char) s[0]) || !isxdigit((unsigned char) s[1]))
			return 0;
		out[n++] = (unsigned char) strtoul((char[3]) {s[0], s[1], '\0'}, NULL, 16);
		s += 2;
		if (*s == '\0')
			return n;
		if (*s++ != ' ')
			return 0;
	}
}

/* One KEY=VALUE fact of a build row into kb; false (and why) if malformed */
static bool
parse_build_fact(char *fact, KnownBuild *kb, unsigned int *seen,
				 char *why, size_t whylen)
{
	char	   *eq = strchr(fact, '=');
	char	   *value;
	int			i;
	int			j;

	if (eq == NULL)
	{
		snprintf(why, whylen, "\"%s\" is not KEY=VALUE", fact);
		return false;
	}
	*eq = '\0';
	for (i = 0; i < LENGTHOF(build_facts); i++)
		if (strcmp(build_facts[i].key, fact) == 0)
			break;
	if (i == LENGTHOF(build_facts))
	{
		snprintf(why, whylen, "unknown fact \"%s\"", fact);
		return false;
	}
	if (*seen & (1u << i))
	{
		snprintf(why, whylen, "fact \"%s\" given twice", fact);
		return false;
	}
	*seen |= 1u << i;

	value = eq + 1;
	for (j = 0; j < build_facts[i].nvalues; j++)
	{
		char	   *num = strsep(&value, ",");
		uint64_t	v;
		char	   *field = (char *) kb + build_facts[i].values[j].offset;

		if (num == NULL || !parse_number(num, &v) ||
			(v == 0 && !(j == 0 && build_facts[i].first_may_be_zero)))
		{
			snprintf(why, whylen,
					 "%s wants %d non-zero number(s) separated by commas%s",
					 fact, build_facts[i].nvalues,
					 build_facts[i].first_may_be_zero ? " (the first may be 0)" : "");
			return false;
		}
		switch (build_facts[i].values[j].slot)
		{
			case SLOT_U64:
				*(uint64_t *) field = v;
				break;
			case SLOT_SIZE:
				*(size_t *) field = (size_t) v;
				break;
			case SLOT_INT:
				*(int *) field = (int) v;
				break;
		}
	}
	if (value != NULL)
	{
		snprintf(why, whylen, "%s wants %d number(s), got more", fact,
				 build_facts[i].nvalues);
		return false;
	}
	return true;
}

/* A build row: NAME, BUILD-ID, FACT... (the fields after "build") */
static bool
parse_build_row(char **fields, int nfields, char *why, size_t whylen)
{
	KnownBuild	kb;
	unsigned int seen = 0;
	const char *c;
	int			i;

	if (nfields < 3)
	{
		snprintf(why, whylen, "a build row wants NAME, BUILD-ID and its facts");
		return false;
	}
	memset(&kb, 0, sizeof(kb));
	for (c = fields[1]; *c; c++)
		if (!isdigit((unsigned char) *c) && (*c < 'a' || *c > 'f'))
			break;
	if (*c != '\0' || (c - fields[1]) % 2 != 0 || c - fields[1] < 16)
	{
		snprintf(why, whylen, "build-id \"%s\" is not lower-case hex bytes", fields[1]);
		return false;
	}
	for (i = 0; i < nknown_builds; i++)
		if (strcmp(known_builds[i].name, fields[0]) == 0 ||
			strcmp(known_builds[i].build_id, fields[1]) == 0)
		{
			snprintf(why, whylen, "build %s or build-id %s listed twice",
					 fields[0], fields[1]);
			return false;
		}
	for (i = 2; i < nfields; i++)
		if (!parse_build_fact(fields[i], &kb, &seen, why, whylen))
			return false;
	if (kb.binsrch == 0)
	{
		snprintf(why, whylen, "build %s has no binsrch=ADDR,SIZE", fields[0]);
		return false;
	}
	kb.name = strdup(fields[0]);
	kb.build_id = strdup(fields[1]);
	known_builds = realloc(known_builds, (nknown_builds + 1) * sizeof(KnownBuild));
	if (kb.name == NULL || kb.build_id == NULL || known_builds == NULL)
	{
		snprintf(why, whylen, "out of memory");
		return false;
	}
	known_builds[nknown_builds++] = kb;
	return true;
}

/*
 * A mutation row: BUILD, PROOF, ADDR, ORIG, NEW, WHAT, REASON (the fields
 * after "mutation"), appended to its build's mutations of that proof.
 */
static bool
parse_mutation_row(char **fields, int nfields, char *why, size_t whylen)
{
	KnownBuild *kb = NULL;
	Mutation	mu;
	Mutation  **list;
	int		   *n;
	int			i;

	if (nfields != 7)
	{
		snprintf(why, whylen, "a mutation row wants 7 fields after \"mutation\", not %d",
				 nfields);
		return false;
	}
	for (i = 0; i < nknown_builds; i++)
		if (strcmp(known_builds[i].name, fields[0]) == 0)
			kb = &known_builds[i];
	if (kb == NULL)
	{
		snprintf(why, whylen, "no build row named %s above", fields[0]);
		return false;
	}
	if (strcmp(fields[1], "_bt_binsrch") == 0)
	{
		list = &kb->mutations;
		n = &kb->nmutations;
	}
	else if (strcmp(fields[1], "_bt_readpage") == 0)
	{
		list = &kb->readpage_mutations;
		n = &kb->nreadpage_mutations;
	}
	else
	{
		snprintf(why, whylen, "proof \"%s\" is neither _bt_binsrch nor _bt_readpage",
				 fields[1]);
		return false;
	}

	memset(&mu, 0, sizeof(mu));
	if (!parse_number(fields[2], &mu.vaddr) || mu.vaddr == 0)
	{
		snprintf(why, whylen, "address \"%s\" is not a non-zero number", fields[2]);
		return false;
	}
	mu.len = parse_bytes(fields[3], mu.orig);
	if (mu.len == 0)
	{
		snprintf(why, whylen, "original bytes \"%s\" are not 1 to 8 hex bytes", fields[3]);
		return false;
	}
	if (strncmp(fields[4], "retarget ", 9) == 0)
	{
		if (!parse_number(fields[4] + 9, &mu.retarget) || mu.retarget == 0)
		{
			snprintf(why, whylen, "\"%s\" is not \"retarget ADDR\"", fields[4]);
			return false;
		}
		if (mu.len < 5)
		{
			snprintf(why, whylen, "retarget wants an instruction of 5 bytes or more");
			return false;
		}
	}
	else if (parse_bytes(fields[4], mu.repl) != mu.len)
	{
		snprintf(why, whylen, "new bytes \"%s\" are not %d hex bytes nor \"retarget ADDR\"",
				 fields[4], mu.len);
		return false;
	}
	if (fields[5][0] == '\0' || fields[6][0] == '\0')
	{
		snprintf(why, whylen, "empty WHAT or REASON");
		return false;
	}
	mu.what = strdup(fields[5]);
	mu.reason = strdup(fields[6]);
	*list = realloc(*list, (*n + 1) * sizeof(Mutation));
	if (mu.what == NULL || mu.reason == NULL || *list == NULL)
	{
		snprintf(why, whylen, "out of memory");
		return false;
	}
	(*list)[(*n)++] = mu;
	return true;
}

/*
 * Read the known builds from path (see the file's header comment for its
 * form).  On any error returns false with why saying where; the builds
 * read so far are then dropped.
 */
static bool
read_known_builds(const char *path, char *why, size_t whylen)
{
	FILE	   *f = fopen(path, "r");
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		len;
	int			lineno = 0;
	bool		ok = true;

	if (f == NULL)
	{
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		return false;
	}
	while (ok && (len = getline(&line, &cap, f)) >= 0)
	{
		char	   *fields[32];
		int			nfields = 0;
		char	   *rest = line;
		char		rowwhy[512];

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		do
			fields[nfields++] = strsep(&rest, "\t");
		while (rest != NULL && nfields < LENGTHOF(fields));
		ok = false;
		if (rest != NULL)
			snprintf(rowwhy, sizeof(rowwhy), "more than %d fields", LENGTHOF(fields));
		else if (strcmp(fields[0], "build") == 0)
			ok = parse_build_row(fields + 1, nfields - 1, rowwhy, sizeof(rowwhy));
		else if (strcmp(fields[0], "mutation") == 0)
			ok = parse_mutation_row(fields + 1, nfields - 1, rowwhy, sizeof(rowwhy));
		else
			snprintf(rowwhy, sizeof(rowwhy), "a row is \"build\" or \"mutation\", not \"%s\"",
					 fields[0]);
		if (!ok)
			snprintf(why, whylen, "%s line %d: %s", path, lineno, rowwhy);
	}
	if (ok && ferror(f))
	{
		snprintf(why, whylen, "reading %s failed", path);
		ok = false;
	}
	else if (ok && nknown_builds == 0)
	{
		snprintf(why, whylen, "%s lists no build", path);
		ok = false;
	}
	free(line);
	fclose(f);
	if (!ok)
		nknown_builds = 0;
	return ok;
}

static const KnownBuild *
known_build(const char *build_id)
{
	int			i;

	for (i = 0; i < nknown_builds; i++)
		if (strcmp(known_builds[i].build_id, build_id) == 0)
			return &known_builds[i];
	return NULL;
}

/* The new bytes of mutation mu */
static void
mutation_bytes(const Mutation *mu, unsigned char *out)
{
	memcpy(out, mu->repl, sizeof(mu->repl));
	if (mu->retarget != 0)
	{
		int32_t		rel = (int32_t) (int64_t) (mu->retarget - (mu->vaddr + mu->len));

		memcpy(out, mu->orig, mu->len);
		memcpy(out + mu->len - 4, &rel, 4);
	}
}

/*
 * Whether the len bytes at addr are in executable mappings: a mutation's
 * address from known_builds.tsv is checked before its bytes are read.
 */
static bool
in_code(uintptr_t addr, int len)
{
	char		first[8];
	char		last[8];

	perms_of((void *) addr, first);
	perms_of((void *) (addr + len - 1), last);
	return first[2] == 'x' && last[2] == 'x';
}

/* Run a known build's mutations on the mapped binary */
static void
mutation_tests(const char *path, const Mapped *m, const KnownBuild *kb)
{
	BtjitLocation loc;
	char		why[1024];
	bool		ok;
	int			i;

	for (i = 0; i < kb->nmutations; i++)
	{
		const Mutation *mu = &kb->mutations[i];
		uintptr_t	at = m->base + mu->vaddr;
		unsigned char repl[8];

		if (!check(in_code(at, mu->len) && memcmp((void *) at, mu->orig, mu->len) == 0,
				   "%s mutation \"%s\": original bytes as expected", kb->name, mu->what))
			continue;
		mutation_bytes(mu, repl);
		poke(at, repl, mu->len);
		ok = btjit_locate_binsrch_at(path, m->base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
		poke(at, mu->orig, mu->len);
		check(!ok && strstr(why, mu->reason) != NULL,
			  "%s mutation \"%s\" refused: %s", kb->name, mu->what, ok ? "(located!)" : why);
	}
	ok = btjit_locate_binsrch_at(path, m->base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	check(ok, "%s: located again after the mutations were undone", kb->name);

	for (i = 0; i < kb->nreadpage_mutations; i++)
	{
		const Mutation *mu = &kb->readpage_mutations[i];
		uintptr_t	at = m->base + mu->vaddr;
		unsigned char repl[8];
		BtjitReadpageLocation rp;

		if (!check(in_code(at, mu->len) && memcmp((void *) at, mu->orig, mu->len) == 0,
				   "%s _bt_readpage mutation \"%s\": original bytes as expected",
				   kb->name, mu->what))
			continue;
		mutation_bytes(mu, repl);
		poke(at, repl, mu->len);
		ok = btjit_locate_readpage_at(path, m->base, &readpage_signature, &rp,
									  why, sizeof(why));
		poke(at, mu->orig, mu->len);
		check(!ok && strstr(why, mu->reason) != NULL,
			  "%s _bt_readpage mutation \"%s\" refused: %s", kb->name, mu->what,
			  ok ? "(located!)" : why);
	}
}

static void
dummy_replacement(void)
{
}

/*
 * Check an installed detour on real (never run) code: the entry jumps to
 * the thunk, the thunk to the replacement, the trampoline replays the
 * original bytes and jumps back.
 */
static void
check_detour_shape(const char *label, const char *fname, const BtjitDetour *d,
				   uintptr_t target, const unsigned char *before)
{
	const unsigned char *stub = d->stub_page;
	const unsigned char *tramp = d->stock;
	size_t		n = d->patch_offset + d->displaced_len;
	int32_t		rel;

	memcpy(&rel, (void *) (target + d->patch_offset + 1), 4);
	check(((unsigned char *) target)[d->patch_offset] == 0xe9 &&
		  target + d->patch_offset + 5 + rel == (uintptr_t) stub,
		  "%s: %s entry jumps to the thunk", label, fname);
	check(memcmp((void *) target, before, d->patch_offset) == 0,
		  "%s: %s bytes before the jump (endbr64) untouched", label, fname);
	check(stub[0] == 0xff && stub[1] == 0x25 &&
		  memcmp(stub + 6, &(uintptr_t) {(uintptr_t) dummy_replacement}, 8) == 0,
		  "%s: %s thunk jumps to the replacement", label, fname);
	memcpy(&rel, tramp + 4 + d->displaced_len + 1, 4);
	check(memcmp(tramp, "\xf3\x0f\x1e\xfa", 4) == 0 &&
		  memcmp(tramp + 4, before + d->patch_offset, d->displaced_len) == 0 &&
		  tramp[4 + d->displaced_len] == 0xe9 &&
		  (uintptr_t) (tramp + 4 + d->displaced_len + 5) + rel == target + n,
		  "%s: %s trampoline replays %zu original bytes and jumps back to +%zu",
		  label, fname, d->displaced_len, n);
}

/*
 * The detour on a real exported function the module redirects by its
 * symbol (_bt_binsrch_insert, _bt_checkkeys), with _bt_binsrch's in place
 * (installed and removed, never run): found with its extent at the known
 * address, patched where and as much as expected, and restored.
 */
static void
real_exported_detour_test(const char *label, const Mapped *m,
						  const KnownBuild *kb, const char *fname,
						  uintptr_t addr, size_t size, uint64_t known_addr,
						  const size_t *known_patch)
{
	BtjitDetour di;
	unsigned char before[32];
	char		why[1024];
	bool		ok;

	if (!check(addr != 0 && size > 16,
			   "%s: exported %s with its extent: +%#lx, %#zx bytes", label,
			   fname, (unsigned long) (addr - m->base), size))
		return;
	if (kb && known_addr != 0)
		check(addr - m->base == known_addr,
			  "%s: %s at +%#lx (expected +%#lx)", kb->name, fname,
			  (unsigned long) (addr - m->base), (unsigned long) known_addr);
	memcpy(before, (void *) addr, sizeof(before));
	ok = btjit_detour_install((void *) addr, size,
							  (void *) dummy_replacement, &di, why, sizeof(why));
	if (!check(ok, "%s: detour on the real %s, _bt_binsrch's kept: %s",
			   label, fname, ok ? di.description : why))
		return;
	check_detour_shape(label, fname, &di, addr, before);
	if (kb && known_patch[1] != 0)
		check(di.patch_offset == known_patch[0] &&
			  di.displaced_len == known_patch[1],
			  "%s: %s patched at +%zu, %zu bytes displaced (expected +%zu, %zu)",
			  kb->name, fname, di.patch_offset, di.displaced_len,
			  known_patch[0], known_patch[1]);
	else
		printf("# %s: %s patched at +%zu, %zu bytes displaced\n", label, fname,
			   di.patch_offset, di.displaced_len);
	ok = btjit_detour_remove(&di, why, sizeof(why));
	check(ok && memcmp(before, (void *) addr, sizeof(before)) == 0,
		  "%s: %s detour removed, bytes restored", label, fname);
}

/*
 * The detours on the real bytes, in the order the module installs them:
 * _bt_binsrch, then, with that one in place, _bt_compare (installed and
 * removed, never run).  On 17.12 _bt_compare crosses into the page the
 * first detour writes, which the kernel then maps on its own.
 */
static void
real_detour_tests(const char *label, const Mapped *m, const BtjitLocation *loc,
				  const KnownBuild *kb)
{
	BtjitDetour d;
	BtjitDetour dc;
	unsigned char before[32];
	unsigned char cbefore[32];
	char		why[1024];
	bool		ok;
	int			nmaps;

	memcpy(before, (void *) loc->binsrch, sizeof(before));
	ok = btjit_detour_install((void *) loc->binsrch, loc->binsrch_size,
							  (void *) dummy_replacement, &d, why, sizeof(why));
	if (!check(ok, "%s: detour on the real _bt_binsrch: %s", label, ok ? d.description : why))
		return;
	check_detour_shape(label, "_bt_binsrch", &d, loc->binsrch, before);
	if (kb && kb->binsrch_patch[1] != 0)
		check(d.patch_offset == kb->binsrch_patch[0] && d.displaced_len == kb->binsrch_patch[1],
			  "%s: _bt_binsrch patched at +%zu, %zu bytes displaced (expected +%zu, %zu)",
			  kb->name, d.patch_offset, d.displaced_len, kb->binsrch_patch[0], kb->binsrch_patch[1]);

	if (check(exp_addr(loc, "_bt_compare") != 0 && exp_size(loc, "_bt_compare") > 16,
			  "%s: exported _bt_compare with its extent: +%#lx, %#zx bytes", label,
			  (unsigned long) (exp_addr(loc, "_bt_compare") - m->base), exp_size(loc, "_bt_compare")))
	{
		nmaps = mappings_touched(exp_addr(loc, "_bt_compare"), exp_size(loc, "_bt_compare"));
		if (kb && kb->compare_maps != 0)
			check(nmaps == kb->compare_maps,
				  "%s: with the _bt_binsrch detour in place, _bt_compare spans %d mapping(s) (expected %d)",
				  kb->name, nmaps, kb->compare_maps);
		else
			printf("# with the _bt_binsrch detour in place, _bt_compare spans %d mapping(s)\n", nmaps);
		memcpy(cbefore, (void *) exp_addr(loc, "_bt_compare"), sizeof(cbefore));
		ok = btjit_detour_install((void *) exp_addr(loc, "_bt_compare"), exp_size(loc, "_bt_compare"),
								  (void *) dummy_replacement, &dc, why, sizeof(why));
		if (check(ok, "%s: detour on the real _bt_compare, _bt_binsrch's kept: %s",
				  label, ok ? dc.description : why))
		{
			check_detour_shape(label, "_bt_compare", &dc, exp_addr(loc, "_bt_compare"), cbefore);
			if (kb && kb->compare_patch[1] != 0)
				check(dc.patch_offset == kb->compare_patch[0] &&
					  dc.displaced_len == kb->compare_patch[1],
					  "%s: _bt_compare patched at +%zu, %zu bytes displaced (expected +%zu, %zu)",
					  kb->name, dc.patch_offset, dc.displaced_len,
					  kb->compare_patch[0], kb->compare_patch[1]);
			ok = btjit_detour_remove(&dc, why, sizeof(why));
			check(ok && memcmp(cbefore, (void *) exp_addr(loc, "_bt_compare"), sizeof(cbefore)) == 0,
				  "%s: _bt_compare detour removed, bytes restored", label);
		}
	}
	real_exported_detour_test(label, m, kb, "_bt_binsrch_insert",
							  exp_addr(loc, "_bt_binsrch_insert"), exp_size(loc, "_bt_binsrch_insert"),
							  kb ? kb->insert : 0,
							  kb ? kb->insert_patch : (const size_t[2]) {0, 0});
	if (DEFAULT_MAJOR >= 19 && (kb == NULL || kb->checkkeys == 0))
	{
		/*
		 * 19 made _bt_checkkeys static (nbtreadpage.c, called only from the
		 * now exported _bt_readpage): the locator must not report an extent
		 * for it, and the binary must say why.
		 */
		check(exp_addr(loc, "_bt_checkkeys") == 0 && exp_size(loc, "_bt_checkkeys") == 0 &&
			  sym_value(loc->binary_path, "_bt_checkkeys", SHT_DYNSYM) == 0 &&
			  sym_value(loc->binary_path, "_bt_readpage", SHT_DYNSYM) != 0,
			  "%s: _bt_checkkeys not exported (static in 19), _bt_readpage exported: no _bt_checkkeys extent reported",
			  label);
	}
	else
		real_exported_detour_test(label, m, kb, "_bt_checkkeys",
								  exp_addr(loc, "_bt_checkkeys"), exp_size(loc, "_bt_checkkeys"),
								  kb ? kb->checkkeys : 0,
								  kb ? kb->checkkeys_patch : (const size_t[2]) {0, 0});
	ok = btjit_detour_remove(&d, why, sizeof(why));
	check(ok && memcmp(before, (void *) loc->binsrch, sizeof(before)) == 0,
		  "%s: _bt_binsrch detour removed, bytes restored", label);
}

/*
 * All checks of one server binary.  Returns whether it is a known build
 * (the build-specific checks ran).
 */
static bool
server_tests(const char *path, const char *label, bool is_primary)
{
	Mapped		m;
	BtjitLocation loc;
	const KnownBuild *kb;
	char		why[1024];
	bool		ok;
	double		best = 1e9;
	int			i;

	printf("# locator on %s (%s)\n", path, label);
	if (access(path, R_OK) != 0)
	{
		if (is_primary)
			check(false, "%s: %s is readable", label, path);
		else
			printf("# skipped: %s is absent%s\n", path, OTHER_HINT);
		return false;
	}
	ok = map_binary(path, &m);
	if (!check(ok, "%s: mapped at %#lx", label, ok ? (unsigned long) m.base : 0UL))
		return false;

	for (i = 0; i < 3; i++)
	{
		double		t0 = now_ms();

		ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
		if (now_ms() - t0 < best)
			best = now_ms() - t0;
		if (!ok)
			break;
	}
	if (!check(ok, "%s: located: %s", label, ok ? loc.evidence : why))
	{
		munmap((void *) m.base, m.span);
		return false;
	}
	printf("# evidence: %s\n", loc.evidence);
	check(best < 100.0, "%s: locate takes %.1f ms (best of 3; must be well under 100)", label, best);
	check(loc.binsrch > m.base && loc.binsrch < m.base + m.span && loc.load_bias == m.base &&
		  loc.ncallsites >= 2 && loc.binsrch_size > 16,
		  "%s: result in the mapping, %d call sites, %zu bytes", label, loc.ncallsites, loc.binsrch_size);
	/* _bt_readpage: found, its references and callers checked */
	{
		BtjitReadpageLocation rp;
		char		rwhy[512];
		const KnownBuild *rkb = known_build(loc.build_id);
		bool		rok = btjit_locate_readpage_at(path, m.base, &readpage_signature,
												   &rp, rwhy, sizeof(rwhy));

		if (check(rok, "%s: _bt_readpage located: %s", label, rok ? rp.evidence : rwhy))
			printf("# readpage evidence: %s\n", rp.evidence);
		if (rok && rkb != NULL && rkb->readpage != 0)
			check(rp.readpage - m.base == rkb->readpage &&
				  rp.readpage_size == rkb->readpage_size &&
				  rp.ncallsites == rkb->readpage_calls,
				  "%s: _bt_readpage is postgres+%#lx, %#zx bytes, %d call sites (found +%#lx, %#zx, %d)",
				  rkb->name, (unsigned long) rkb->readpage, rkb->readpage_size,
				  rkb->readpage_calls, (unsigned long) (rp.readpage - m.base),
				  rp.readpage_size, rp.ncallsites);
	}

	/*
	 * The part gcc split off _bt_search, where it did: found and proven,
	 * where the build is known exactly there; refused with a signature
	 * that does not describe the head.
	 */
	if (DEFAULT_MAJOR <= 18)
	{
		BtjitSplitLocation sl;
		BtjitSplitSignature wrong = search_split_signature;
		char		swhy[512];
		const KnownBuild *skb = known_build(loc.build_id);
		BtjitSplitOutcome so = btjit_locate_split_at(path, m.base, &search_split_signature,
													 &sl, swhy, sizeof(swhy));

		check(so != BTJIT_SPLIT_REFUSED, "%s: _bt_search whole, or its split part proven: %s",
			  label, so == BTJIT_SPLIT_FOUND ? sl.evidence :
			  so == BTJIT_SPLIT_NONE ? "whole" : swhy);
		if (skb != NULL)
			check(skb->search_part != 0 ?
				  (so == BTJIT_SPLIT_FOUND && sl.part - m.base == skb->search_part &&
				   sl.part_size == skb->search_part_size &&
				   sl.ncallsites == skb->search_part_calls) :
				  so == BTJIT_SPLIT_NONE,
				  "%s: _bt_search's split part is postgres+%#lx, %#zx bytes, %d references (found %s +%#lx, %#zx, %d)",
				  skb->name, (unsigned long) skb->search_part, skb->search_part_size,
				  skb->search_part_calls,
				  so == BTJIT_SPLIT_FOUND ? "part" : so == BTJIT_SPLIT_NONE ? "no part" : "a refusal",
				  so == BTJIT_SPLIT_FOUND ? (unsigned long) (sl.part - m.base) : 0UL,
				  so == BTJIT_SPLIT_FOUND ? sl.part_size : 0, so == BTJIT_SPLIT_FOUND ? sl.ncallsites : 0);
		if (so == BTJIT_SPLIT_FOUND)
		{
			/* the result stored through another argument: not this head */
			wrong.result_arg = 1;
			so = btjit_locate_split_at(path, m.base, &wrong, &sl, swhy, sizeof(swhy));
			check(so == BTJIT_SPLIT_REFUSED && strstr(swhy, "does more than its first statement") != NULL,
				  "%s: a head that stores elsewhere is refused: %s", label,
				  so == BTJIT_SPLIT_REFUSED ? swhy : "(found)");
			/* the leading call given another argument */
			wrong = search_split_signature;
			wrong.leading_args[1] = 1;
			so = btjit_locate_split_at(path, m.base, &wrong, &sl, swhy, sizeof(swhy));
			check(so == BTJIT_SPLIT_REFUSED && strstr(swhy, "without its argument") != NULL,
				  "%s: a head whose call takes other arguments is refused: %s", label,
				  so == BTJIT_SPLIT_REFUSED ? swhy : "(found)");
			/* a signature without the fifth argument the part reads */
			wrong = search_split_signature;
			wrong.nargs = 4;
			so = btjit_locate_split_at(path, m.base, &wrong, &sl, swhy, sizeof(swhy));
			check(so == BTJIT_SPLIT_REFUSED,
				  "%s: a signature with fewer arguments than the part reads is refused: %s", label,
				  so == BTJIT_SPLIT_REFUSED ? swhy : "(found)");
		}
	}

	/* step 6, on the callers' side: each function reaches an indirect call */
	check(strstr(loc.evidence, "; callers: it reaches an indirect call via ") != NULL,
		  "%s: no caller of _bt_binsrch may expect less of it than the ABI", label);
	check(exp_addr(&loc, "_bt_compare") != 0 && exp_refusal(&loc, "_bt_compare")[0] == '\0' &&
		  strstr(loc.evidence, "; _bt_compare reaches an indirect call") != NULL,
		  "%s: nor of _bt_compare: %s", label,
		  exp_refusal(&loc, "_bt_compare")[0] ? exp_refusal(&loc, "_bt_compare") : "shown");
	check(exp_addr(&loc, "_bt_binsrch_insert") != 0 && exp_refusal(&loc, "_bt_binsrch_insert")[0] == '\0' &&
		  strstr(loc.evidence, "; _bt_binsrch_insert reaches an indirect call") != NULL,
		  "%s: nor of _bt_binsrch_insert: %s", label,
		  exp_refusal(&loc, "_bt_binsrch_insert")[0] ? exp_refusal(&loc, "_bt_binsrch_insert") : "shown");
	check((exp_addr(&loc, "_bt_checkkeys") != 0 && exp_refusal(&loc, "_bt_checkkeys")[0] == '\0' &&
		   strstr(loc.evidence, "; _bt_checkkeys reaches an indirect call") != NULL) ||
		  (exp_addr(&loc, "_bt_checkkeys") == 0 && sym_value(path, "_bt_checkkeys", SHT_DYNSYM) == 0 &&
		   strstr(exp_refusal(&loc, "_bt_checkkeys"), "is not exported") != NULL),
		  "%s: nor of _bt_checkkeys, where it is exported: %s", label,
		  exp_refusal(&loc, "_bt_checkkeys")[0] ? exp_refusal(&loc, "_bt_checkkeys") : "shown");

	kb = known_build(loc.build_id);
	if (kb != NULL)
	{
		printf("# build-id %s is %s: build-specific checks run\n", loc.build_id, kb->name);
		check(loc.binsrch - m.base == kb->binsrch && loc.binsrch_size == kb->binsrch_size,
			  "%s: _bt_binsrch is postgres+%#lx, %#zx bytes (found +%#lx, %#zx)", kb->name,
			  (unsigned long) kb->binsrch, kb->binsrch_size,
			  (unsigned long) (loc.binsrch - m.base), loc.binsrch_size);
		if (kb->callsite[0] != 0)
			check(loc.ncallsites == 2 &&
				  ((loc.callsites[0] - m.base == kb->callsite[0] &&
					loc.callsites[1] - m.base == kb->callsite[1]) ||
				   (loc.callsites[1] - m.base == kb->callsite[0] &&
					loc.callsites[0] - m.base == kb->callsite[1])),
				  "%s: call sites postgres+%#lx and postgres+%#lx", kb->name,
				  (unsigned long) kb->callsite[0], (unsigned long) kb->callsite[1]);
		if (kb->compare != 0)
			check(exp_addr(&loc, "_bt_compare") - m.base == kb->compare && exp_size(&loc, "_bt_compare") == kb->compare_size,
				  "%s: _bt_compare is postgres+%#lx, %#zx bytes", kb->name,
				  (unsigned long) kb->compare, kb->compare_size);
	}
	else
		printf("# build-id %s is not one we examined by hand: only the generic checks run "
			   "(exact addresses, call sites, mutations and detour lengths not checked)\n",
			   loc.build_id);

	/* fault hooks */
	ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_FAULT_WRONG_CALLER), &loc, why, sizeof(why));
	check(!ok && strstr(why, "WRONG_CALLER") && strstr(why, "_bt_binsrch_insert"),
		  "%s: fault WRONG_CALLER fails: %s", label, why);
	ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_FAULT_TRUNCATED), &loc, why, sizeof(why));
	check(!ok && strstr(why, "TRUNCATED") && strstr(why, "decoded only partly"),
		  "%s: fault TRUNCATED fails: %s", label, why);
	ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_FAULT_NO_CALLCONV), &loc, why, sizeof(why));
	check(!ok && strstr(why, "NO_CALLCONV") && strstr(why, "calling-convention proof"),
		  "%s: fault NO_CALLCONV fails: %s", label, why);

	/* a wrong load bias must be noticed, not decoded as garbage */
	ok = btjit_locate_binsrch_at(path, m.base + 0x1000, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	check(!ok && strstr(why, "bias"), "%s: wrong load bias refused: %s", label, why);

	/* mutations of a known build */
	if (kb != NULL && kb->nmutations > 0)
		mutation_tests(path, &m, kb);

	ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	if (check(ok, "%s: located for the detour tests", label))
		real_detour_tests(label, &m, &loc, kb);
	munmap((void *) m.base, m.span);
	return kb != NULL;
}

/* Write len bytes to a new file; false on any error */
static bool
write_file(const char *path, const void *data, size_t len)
{
	int			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	bool		ok;

	if (fd < 0)
		return false;
	ok = write(fd, data, len) == (ssize_t) len;
	return close(fd) == 0 && ok;
}

/* A bare ELF header, 64 bytes, of the given class, byte order and machine */
static bool
write_bare_header(const char *path, int class, int data, uint16_t machine)
{
	Elf64_Ehdr	eh;

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = class;
	eh.e_ident[EI_DATA] = data;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	return write_file(path, &eh, sizeof(eh));
}

/*
 * A server for another architecture is refused by its ELF header, with a
 * reason naming the machine: bare headers, and a copy of the real server
 * that is located as is and refused once only its e_machine says aarch64.
 */
static void
machine_tests(const char *server)
{
	char		path[600];
	BtjitLocation loc;
	char		why[1024];
	bool		ok;
	FILE	   *f;
	char	   *buf = NULL;
	long		size = 0;
	Mapped		m;
	uint16_t	aarch64 = 183;	/* EM_AARCH64 */

	printf("# locator: servers for other architectures\n");
	snprintf(path, sizeof(path), "%s/elf_machine.bin", test_dir);

	if (check(write_bare_header(path, ELFCLASS64, ELFDATA2LSB, aarch64),
			  "bare aarch64 ELF header written"))
	{
		ok = btjit_locate_binsrch_at(path, 0, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
		check(!ok && strstr(why, "aarch64") && strstr(why, "e_machine 183") &&
			  strstr(why, "not x86-64"), "bare aarch64 header refused: %s", ok ? "(located!)" : why);
	}
	if (check(write_bare_header(path, ELFCLASS32, ELFDATA2LSB, 3),
			  "bare i386 ELF header written"))
	{
		ok = btjit_locate_binsrch_at(path, 0, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
		check(!ok && strstr(why, "i386") && strstr(why, "not x86-64"),
			  "bare i386 header refused: %s", ok ? "(located!)" : why);
	}
	if (check(write_bare_header(path, ELFCLASS64, ELFDATA2MSB, 0x1500),
			  "bare big-endian (ppc64) ELF header written"))
	{
		ok = btjit_locate_binsrch_at(path, 0, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
		check(!ok && strstr(why, "big-endian"), "bare big-endian header refused: %s",
			  ok ? "(located!)" : why);
	}

	/* the real server, copied: located; then only e_machine changed */
	f = fopen(server, "rb");
	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 64 &&
		fseek(f, 0, SEEK_SET) == 0 && (buf = malloc(size)) != NULL &&
		fread(buf, 1, size, f) != (size_t) size)
	{
		free(buf);
		buf = NULL;
	}
	if (f != NULL)
		fclose(f);
	if (!check(buf != NULL && write_file(path, buf, size) && map_binary(path, &m),
			   "copy of %s written and mapped", server))
	{
		free(buf);
		unlink(path);
		return;
	}
	ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	check(ok, "copy of the server located: %s", ok ? "yes" : why);
	/* in place: the copy stays mapped, so it must not be truncated */
	{
		int			fd = open(path, O_WRONLY);

		ok = fd >= 0 &&
			pwrite(fd, &aarch64, sizeof(aarch64), offsetof(Elf64_Ehdr, e_machine)) ==
			(ssize_t) sizeof(aarch64);
		if (fd >= 0 && close(fd) != 0)
			ok = false;
	}
	if (check(ok, "copy's e_machine set to EM_AARCH64, nothing else changed"))
	{
		ok = btjit_locate_binsrch_at(path, m.base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
		check(!ok && strstr(why, "aarch64") && strstr(why, "not x86-64"),
			  "the same server marked aarch64 refused: %s", ok ? "(located!)" : why);
	}
	munmap((void *) m.base, m.span);
	free(buf);
	unlink(path);
}

/*
 * A build nobody examined: a copy of the server under test whose build-id
 * differs in one byte.  Only the generic checks can run on it, and the
 * output must say so; they must all pass.
 */
static void
unknown_build_tests(const char *server)
{
	char		path[600];
	Mapped		m;
	BtjitLocation loc;
	char		why[1024];
	unsigned char id[32];
	size_t		idlen = 0;
	FILE	   *f;
	char	   *buf = NULL;
	long		size = 0;
	char	   *at = NULL;
	int			before = nfailed;
	bool		known;

	printf("# locator on a build it has no table for\n");
	if (!map_binary(server, &m))
		return;					/* server_tests reported it */
	if (btjit_locate_binsrch_at(server, m.base, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why)))
		for (; idlen < sizeof(id) && sscanf(loc.build_id + 2 * idlen, "%2hhx", &id[idlen]) == 1; idlen++)
			;
	munmap((void *) m.base, m.span);
	if (!check(idlen >= 8, "build-id of %s read (%zu bytes)", server, idlen))
		return;

	f = fopen(server, "rb");
	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 64 &&
		fseek(f, 0, SEEK_SET) == 0 && (buf = malloc(size)) != NULL &&
		fread(buf, 1, size, f) == (size_t) size)
		at = memmem(buf, size, id, idlen);
	if (f != NULL)
		fclose(f);
	snprintf(path, sizeof(path), "%s/unknown_build.bin", test_dir);
	if (check(at != NULL && memmem(at + 1, size - (at + 1 - buf), id, idlen) == NULL,
			  "the build-id occurs once in the file"))
	{
		at[idlen - 1] ^= 0x5a;
		if (check(write_file(path, buf, size), "copy with another build-id written"))
		{
			known = server_tests(path, "copy with another build-id", true);
			check(!known && nfailed == before,
				  "copy with another build-id: not a known build, all generic checks passed");
		}
	}
	free(buf);
	unlink(path);
}

static void
locator_misc_tests(void)
{
	BtjitLocation loc;
	char		why[1024];
	bool		ok;

	printf("# locator: refusals outside a server\n");
	ok = btjit_locate_binsrch(req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	check(!ok && strstr(why, "_bt_search"), "this test program (via /proc/self/exe) is not a server: %s", why);
	ok = btjit_locate_binsrch_at("/nonexistent/postgres", 0, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	check(!ok && strstr(why, "cannot open"), "missing file refused: %s", why);
	ok = btjit_locate_binsrch_at("/proc/self/maps", 0, req(BTJIT_LOCATE_NORMAL), &loc, why, sizeof(why));
	check(!ok && why[0] != '\0', "non-ELF file refused: %s", why);
}

int
main(int argc, char **argv)
{
	const char *server = getenv("BTJIT_TEST_SERVER");
	const char *other = getenv("BTJIT_TEST_OTHER_SERVER");
	const char *builds = getenv("BTJIT_TEST_KNOWN_BUILDS");
	char		builds_path[600];
	char		why[2048];
	ssize_t		n;
	char	   *slash;

	(void) argc;
	(void) argv;
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* the miniature servers live next to this program */
	n = readlink("/proc/self/exe", test_dir, sizeof(test_dir) - 1);
	test_dir[n > 0 ? n : 0] = '\0';
	slash = strrchr(test_dir, '/');
	if (slash)
		*slash = '\0';

	/* and so do the builds examined by hand, unless told otherwise */
	if (builds == NULL)
	{
		snprintf(builds_path, sizeof(builds_path), "%s/known_builds.tsv", test_dir);
		builds = builds_path;
	}
	if (read_known_builds(builds, why, sizeof(why)))
		printf("# %d builds examined by hand, from %s\n", nknown_builds, builds);
	else
		check(false, "builds examined by hand read: %s", why);

	detour_tests();
	locator_misc_tests();
	fake_tests();
	server_tests(server ? server : DEFAULT_SERVER, "installed server", true);
	machine_tests(server ? server : DEFAULT_SERVER);
	unknown_build_tests(server ? server : DEFAULT_SERVER);
	if (other == NULL)
		other = DEFAULT_OTHER;
	if (other != NULL)
		server_tests(other, "other minor release", false);

	printf("%d passed, %d failed\n", npassed, nfailed);
	return nfailed == 0 ? 0 : 1;
}
