/*-------------------------------------------------------------------------
 *
 * redirect.c
 *	  Redirect every call of a function in the server's text to a
 *	  replacement, keeping a way to run the original machine code.
 *
 * We use an entry detour.  The first whole instructions of the target (at
 * least 5 bytes, after an endbr64 if there is one) are replaced by
 * "jmp rel32" to a thunk on a page we allocate within +-2 GiB; the thunk
 * jumps to the replacement through an absolute address.  The displaced
 * instructions are copied, re-pointed where they are RIP-relative, into a
 * trampoline on the same page that then jumps back to the first byte we
 * did not touch.  The trampoline is the "stock" function.
 *
 * Why a detour rather than rewriting the call sites: the entry is the one
 * place every caller must pass through, including calls the locator's
 * sweep could not see (a caller in code without unwind info, a computed
 * call), so nothing can bypass the dispatcher.  The original instructions
 * run unchanged, one copy away, and the rest of the function is the
 * original code itself.  The price is that we must be sure nothing
 * branches into the displaced bytes, which we check by decoding the whole
 * body, and that the displaced instructions can be moved, which we check
 * instruction by instruction; we refuse rather than guess.
 *
 * Text pages are writable only for the instant of the 5-byte write; their
 * original protection, read from /proc/self/maps, is then restored.  The
 * stub page ends up read+execute.  On any failure nothing is changed.
 * The target must be executable code of one contiguous piece of one file:
 * one mapping, or, when an earlier write has split a page off into a
 * mapping of its own (in 17.12 one redirected function crosses into the
 * page of another), adjacent mappings at consecutive file offsets.
 *
 * Only x86-64 code is written; a build for another architecture refuses.
 *
 * Plain C over Zydis, no PostgreSQL headers (see binpatch.h).
 *
 * src/redirect.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "binpatch.h"
#include "x86.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define JMP_REL32_LEN		X86_JMP_REL32_LEN
#define TRAMPOLINE_OFFSET	16	/* thunk first, trampoline after it */
#define MAX_DISPLACED		8	/* instructions */
#define MAX_TARGET_SIZE		(1024 * 1024)
/* how far a rel32 may reach, with room for the stub page itself */
#define REL32_REACH			((int64_t) 0x7fffffff - 65536)
#define MAX_STUB_TRIES		32
#define HEAP_GUARD			((uintptr_t) 1 << 30)	/* keep 1 GiB above [heap] free */

typedef struct MapEntry
{
	uintptr_t	start;
	uintptr_t	end;
	int			prot;
	unsigned long offset;
	char		path[128];
} MapEntry;

typedef struct MapList
{
	MapEntry   *e;
	int			n;
} MapList;

typedef struct Displaced
{
	size_t		off;			/* from target */
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
} Displaced;

/* Put the reason for a failure into why[] and return false */
#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
static bool
rd_fail(char *why, size_t whylen, const char *fmt,...)
{
	va_list		ap;

	if (why == NULL || whylen == 0)
		return false;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return false;
}

/* ----------------------------------------------------------------
 *		/proc/self/maps
 * ----------------------------------------------------------------
 */

/*
 * Read /proc/self/maps into ml (an array the caller frees): each mapping
 * with its protection, file offset and path.  False if unreadable or empty.
 */
static bool
maps_read(MapList *ml)
{
	int			fd;
	char	   *buf = NULL;
	size_t		len = 0;
	size_t		cap = 0;
	char	   *line;
	int			cape = 0;

	ml->e = NULL;
	ml->n = 0;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	for (;;)
	{
		ssize_t		r;

		if (cap - len < 4096)
		{
			char	   *nb = realloc(buf, cap ? cap * 2 : 65536);

			if (nb == NULL)
			{
				free(buf);
				close(fd);
				return false;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
		{
			free(buf);
			close(fd);
			return false;
		}
		if (r == 0)
			break;
		len += (size_t) r;
	}
	close(fd);
	buf[len] = '\0';

	for (line = buf; line && *line;)
	{
		char	   *nl = strchr(line, '\n');
		unsigned long s;
		unsigned long e;
		unsigned long off;
		char		perms[8];
		int			pathpos = 0;

		if (nl)
			*nl = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &s, &e, perms, &off, &pathpos) >= 4)
		{
			MapEntry   *m;

			if (ml->n == cape)
			{
				MapEntry   *ne = realloc(ml->e, sizeof(MapEntry) * (cape ? cape * 2 : 256));

				if (ne == NULL)
				{
					free(buf);
					free(ml->e);
					ml->e = NULL;
					return false;
				}
				ml->e = ne;
				cape = cape ? cape * 2 : 256;
			}
			m = &ml->e[ml->n++];
			m->start = s;
			m->end = e;
			m->offset = off;
			m->prot = (perms[0] == 'r' ? PROT_READ : 0) |
				(perms[1] == 'w' ? PROT_WRITE : 0) |
				(perms[2] == 'x' ? PROT_EXEC : 0);
			snprintf(m->path, sizeof(m->path), "%s", pathpos > 0 ? line + pathpos : "");
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	return ml->n > 0;
}

/* The mapping containing addr, or NULL */
static const MapEntry *
maps_find(const MapList *ml, uintptr_t addr)
{
	int			i;

	for (i = 0; i < ml->n; i++)
		if (addr >= ml->e[i].start && addr < ml->e[i].end)
			return &ml->e[i];
	return NULL;
}

/*
 * Whether [addr, addr + len) is executable text of one file.  Usually that
 * is one mapping; but writing a page of a private file mapping (an earlier
 * detour) makes the kernel split that page off into a mapping of its own,
 * so a function crossing into such a page spans two or three mappings.
 * Accept a chain of adjacent executable mappings of the same file whose
 * file offsets advance exactly as their addresses do, i.e. one contiguous
 * piece of the file.  A range in a single mapping needs no file (the unit
 * tests detour code in anonymous pages).
 */
static bool
maps_exec_range(const MapList *ml, uintptr_t addr, size_t len)
{
	const MapEntry *first = maps_find(ml, addr);
	const MapEntry *m = first;

	if (first == NULL || len == 0 || addr + len < addr)
		return false;
	for (;;)
	{
		if (!(m->prot & PROT_EXEC))
			return false;
		if (m != first &&
			(first->path[0] != '/' || strcmp(m->path, first->path) != 0 ||
			 m->start != (m - 1)->end ||
			 m->offset - first->offset != m->start - first->start))
			return false;
		if (addr + len <= m->end)
			return true;
		/* the next mapping must start exactly where this one ends */
		if (m + 1 >= ml->e + ml->n || (m + 1)->start != m->end)
			return false;
		m++;
	}
}

/* "postgres+0x1b7cd0" for an address in a file mapping, else hex */
static void
name_addr(const MapList *ml, uintptr_t addr, char *buf, size_t len)
{
	const MapEntry *m = maps_find(ml, addr);

	if (m && m->path[0] == '/')
	{
		const char *base = strrchr(m->path, '/') + 1;

		snprintf(buf, len, "%s+%#lx", base, (unsigned long) (addr - m->start + m->offset));
	}
	else
		snprintf(buf, len, "%#lx", (unsigned long) addr);
}

/* ----------------------------------------------------------------
 *		Writing text
 * ----------------------------------------------------------------
 */

/*
 * Write len bytes at addr in a text mapping: make the page(s) writable,
 * write, restore the protection they had.  If the protection cannot be
 * restored, put the old bytes back and report failure.
 */
static bool
text_write(const MapList *ml, uintptr_t addr, const uint8_t *bytes, size_t len,
		   char *why, size_t whylen)
{
	uintptr_t	ps = (uintptr_t) sysconf(_SC_PAGESIZE);
	uintptr_t	page[2];
	int			prot[2];
	int			npages;
	uint8_t		old[32];
	int			i;

	if (len > sizeof(old))
		return rd_fail(why, whylen, "internal error: text write of %zu bytes", len);
	page[0] = addr & ~(ps - 1);
	page[1] = (addr + len - 1) & ~(ps - 1);
	npages = (page[1] != page[0]) ? 2 : 1;
	for (i = 0; i < npages; i++)
	{
		const MapEntry *m = maps_find(ml, page[i]);

		if (m == NULL)
			return rd_fail(why, whylen, "address %#lx is not mapped", (unsigned long) page[i]);
		prot[i] = m->prot;
	}
	memcpy(old, (const void *) addr, len);

	for (i = 0; i < npages; i++)
	{
		if (prot[i] & PROT_WRITE)
			continue;
		if (mprotect((void *) page[i], ps, prot[i] | PROT_WRITE) != 0)
		{
			int			err = errno;
			uintptr_t	self = (uintptr_t) &text_write;

			/*
			 * Some kernels refuse writable+executable text.  Dropping
			 * execute for the instant of the write is fine unless this very
			 * code lives on that page.
			 */
			if ((self < page[i] || self >= page[i] + ps) &&
				mprotect((void *) page[i], ps, PROT_READ | PROT_WRITE) == 0)
				continue;
			while (--i >= 0)
				if (!(prot[i] & PROT_WRITE))
					mprotect((void *) page[i], ps, prot[i]);
			return rd_fail(why, whylen, "cannot make the text page at %#lx writable: %s",
						   (unsigned long) page[0], strerror(err));
		}
	}

	memcpy((void *) addr, bytes, len);
	__builtin___clear_cache((char *) addr, (char *) addr + len);

	for (i = 0; i < npages; i++)
	{
		if (prot[i] & PROT_WRITE)
			continue;
		if (mprotect((void *) page[i], ps, prot[i]) != 0)
		{
			int			err = errno;
			int			k;
			bool		restored = true;

			memcpy((void *) addr, old, len);
			for (k = 0; k < npages; k++)
				if (!(prot[k] & PROT_WRITE) && mprotect((void *) page[k], ps, prot[k]) != 0)
					restored = false;
			return rd_fail(why, whylen,
						   "cannot restore the protection of the text page at %#lx (%s); the write was undone%s",
						   (unsigned long) page[i], strerror(err),
						   restored ? "" : ", but the page may remain writable");
		}
	}
	return true;
}

/* ----------------------------------------------------------------
 *		The stub page
 * ----------------------------------------------------------------
 */

typedef struct StubCand
{
	uintptr_t	addr;
	uint64_t	rank;			/* lower is better */
} StubCand;

/* qsort order of stub page candidates: best rank first */
static int
stubcand_cmp(const void *a, const void *b)
{
	const StubCand *x = a;
	const StubCand *y = b;

	return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * Map one page within [lo, hi] (inclusive page starts), as close to near
 * as possible, preferring free space below near: above a PIE binary lies
 * the brk heap, whose growth we must not block (nor do we go within
 * HEAP_GUARD above it).
 */
static void *
alloc_near(const MapList *ml, uintptr_t near, uintptr_t lo, uintptr_t hi, size_t ps)
{
	StubCand	cand[MAX_STUB_TRIES];
	int			ncand = 0;
	int			i;

	for (i = 0; i <= ml->n && ncand < MAX_STUB_TRIES; i++)
	{
		uintptr_t	gs = (i == 0) ? 0x10000 : ml->e[i - 1].end;
		uintptr_t	ge = (i == ml->n) ? (uintptr_t) 0x7ffffffff000 : ml->e[i].start;
		uintptr_t	a;
		uintptr_t	b;

		/* leave the brk heap room to grow */
		if (i > 0 && strcmp(ml->e[i - 1].path, "[heap]") == 0)
			gs += HEAP_GUARD;
		/* usable page starts in this gap and in range */
		a = gs > lo ? gs : lo;
		a = (a + ps - 1) & ~(ps - 1);
		if (ge < ps)
			continue;
		b = (ge - ps) < hi ? (ge - ps) : hi;
		b &= ~(ps - 1);
		if (a > b)
			continue;
		/* near is inside a mapping, so a gap is wholly below or above it */
		if (b < near)
		{
			cand[ncand].addr = b;
			cand[ncand].rank = near - b;
		}
		else
		{
			cand[ncand].addr = a;
			cand[ncand].rank = ((uint64_t) 1 << 40) + (a - near);
		}
		ncand++;
	}
	qsort(cand, ncand, sizeof(StubCand), stubcand_cmp);
	for (i = 0; i < ncand; i++)
	{
		void	   *p = mmap((void *) cand[i].addr, ps, PROT_READ | PROT_WRITE,
							 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p == (void *) cand[i].addr)
			return p;
		if (p != MAP_FAILED)
			munmap(p, ps);		/* an old kernel took it as a mere hint */
	}
	return NULL;
}

/* ----------------------------------------------------------------
 *		Install and remove
 * ----------------------------------------------------------------
 */

/* One detour being planned: the target and what will be displaced */
typedef struct DetourPlan
{
	ZydisDecoder dec;
	ZydisFormatter fmt;
	const uint8_t *t;			/* the target's code */
	uintptr_t	ta;				/* its address */
	size_t		target_size;
	char		where[96];		/* its name, for messages */
	Displaced	dis[MAX_DISPLACED];
	int			ndis;
	size_t		patch_offset;	/* bytes kept before the jump (endbr64) */
	size_t		disp_len;		/* bytes displaced */
	char	   *why;
	size_t		whylen;
} DetourPlan;

/*
 * Step 1: choose the instructions to displace, whole instructions covering
 * at least JMP_REL32_LEN bytes.  An endbr64 stays where it is: indirect
 * calls land on it under CET, and it needs no relocation.  Each displaced
 * instruction must be movable: no EIP-relative operand, and a relative
 * branch only if it is a call rel32 or a jmp rel32/rel8.
 */
static bool
choose_displaced(DetourPlan *p)
{
	size_t		off = 0;
	char		text[400];

	while (p->disp_len < JMP_REL32_LEN)
	{
		Displaced  *x;
		int			k;

		if (p->ndis == MAX_DISPLACED)
			return rd_fail(p->why, p->whylen, "%s: too many instructions in the first bytes", p->where);
		x = &p->dis[p->ndis];
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&p->dec, p->t + off, p->target_size - off,
												 &x->zi, x->op)))
			return rd_fail(p->why, p->whylen, "%s: cannot decode the instruction at +%#zx",
						   p->where, off);
		x->off = off;
		if (off == 0 && x->zi.mnemonic == ZYDIS_MNEMONIC_ENDBR64)
		{
			p->patch_offset = x->zi.length;
			off += x->zi.length;
			continue;
		}
		if (x86_is_riprel(&x->zi) && x->zi.address_width != 64)
			return rd_fail(p->why, p->whylen, "%s: EIP-relative operand at +%#zx", p->where, off);
		if (x86_rel_imm(&x->zi, &k))
		{
			bool		movable = (x->zi.mnemonic == ZYDIS_MNEMONIC_CALL && x->zi.raw.imm[k].size == 32) ||
				(x->zi.mnemonic == ZYDIS_MNEMONIC_JMP &&
				 (x->zi.raw.imm[k].size == 32 || x->zi.raw.imm[k].size == 8));

			if (!movable)
			{
				x86_format(&p->fmt, &x->zi, x->op, p->ta + off, text, sizeof(text));
				return rd_fail(p->why, p->whylen, "%s: relative branch \"%s\" at +%#zx cannot be moved",
							   p->where, text, off);
			}
		}
		off += x->zi.length;
		p->disp_len += x->zi.length;
		p->ndis++;
		if (p->disp_len < JMP_REL32_LEN && x86_is_uncond_end(&x->zi))
			return rd_fail(p->why, p->whylen, "%s: the function's code ends %zu bytes in, too short for a %d-byte jump",
						   p->where, off, JMP_REL32_LEN);
	}
	if (p->patch_offset + p->disp_len > p->target_size ||
		p->disp_len > sizeof(((BtjitDetour *) NULL)->saved))
		return rd_fail(p->why, p->whylen, "%s: the patch would extend past the function's %zu bytes",
					   p->where, p->target_size);
	return true;
}

/*
 * Step 2: nothing in the body may branch into the displaced bytes: it would
 * execute half of our jump.  A jump (not a call) to the entry itself would
 * be a loop re-entering through the replacement: refuse that too.
 */
static bool
check_no_branch_into_patch(DetourPlan *p)
{
	uintptr_t	ta = p->ta;
	uintptr_t	pend = ta + p->patch_offset + p->disp_len;
	size_t		off;

	for (off = 0; off < p->target_size;)
	{
		ZydisDecodedInstruction zi;
		uint64_t	dest;

		if (!x86_decode(&p->dec, p->t + off, p->target_size - off, &zi))
			return rd_fail(p->why, p->whylen, "%s: cannot decode the body at +%#zx", p->where, off);
		if (x86_rel_target(&zi, ta + off, &dest))
		{
			bool		bad;

			if (zi.mnemonic == ZYDIS_MNEMONIC_CALL)
				bad = dest > ta && dest < pend && dest != ta + p->patch_offset;
			else
				bad = dest >= ta && dest < pend;
			if (bad)
				return rd_fail(p->why, p->whylen, "%s: the branch at +%#zx goes to +%#lx, inside the %zu bytes the patch replaces",
							   p->where, off, (unsigned long) (dest - ta),
							   p->patch_offset + p->disp_len);
		}
		off += zi.length;
	}
	return true;
}

/*
 * Step 3: where the stub page may go: every rel32 we write must reach.
 * Anchors are the target and whatever the displaced instructions refer to;
 * [*lo, *hi] is the window of page addresses in reach of all of them.
 */
static bool
choose_stub_window(DetourPlan *p, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t	anchor_lo = p->ta;
	uintptr_t	anchor_hi = p->ta;
	int			i;

	for (i = 0; i < p->ndis; i++)
	{
		const Displaced *x = &p->dis[i];
		uintptr_t	a = p->ta + x->off + x->zi.length;
		int			k;

		if (x86_is_riprel(&x->zi))
			a += (uintptr_t) x->zi.raw.disp.value;
		else if (x86_rel_imm(&x->zi, &k))
			a += (uintptr_t) x->zi.raw.imm[k].value.s;
		else
			continue;
		if (a < anchor_lo)
			anchor_lo = a;
		if (a > anchor_hi)
			anchor_hi = a;
	}
	if (anchor_hi - anchor_lo > (uintptr_t) REL32_REACH)
		return rd_fail(p->why, p->whylen, "%s: the displaced instructions refer too far away to be relocated",
					   p->where);
	*lo = anchor_hi > (uintptr_t) REL32_REACH ? anchor_hi - (uintptr_t) REL32_REACH : 0;
	*hi = anchor_lo + (uintptr_t) REL32_REACH;
	return true;
}

/* Step 4a: the thunk at the start of the stub page: jmp [rip+0]; .quad replacement */
static void
emit_thunk(uint8_t *stub, size_t ps, void *replacement)
{
	uint64_t	r = (uint64_t) (uintptr_t) replacement;

	memset(stub, 0xcc, ps);
	stub[0] = 0xff;
	stub[1] = 0x25;
	memset(stub + 2, 0, 4);
	memcpy(stub + 6, &r, 8);
}

/*
 * Relocate one displaced instruction x from its place in the target to
 * stub + *pos (runtime address now), advancing *pos.  A jmp rel8 grows into
 * a jmp rel32; RIP-relative operands and rel32 immediates are re-pointed.
 * Returns false if a reference does not reach from the stub page.
 */
static bool
emit_displaced(const DetourPlan *p, const Displaced *x, uint8_t *stub, size_t *pos)
{
	uintptr_t	orig = p->ta + x->off;
	uintptr_t	now = (uintptr_t) (stub + *pos);
	size_t		len = x->zi.length;
	int64_t		rel;
	int32_t		r32;
	int			k;

	if (x->zi.mnemonic == ZYDIS_MNEMONIC_JMP && x86_rel_imm(&x->zi, &k) &&
		x->zi.raw.imm[k].size == 8)
	{
		uintptr_t	dest = orig + len + (uintptr_t) x->zi.raw.imm[k].value.s;

		if (!x86_emit_jmp_rel32(stub + *pos, now, dest))
			return false;
		*pos += JMP_REL32_LEN;
		return true;
	}
	memcpy(stub + *pos, p->t + x->off, len);
	if (x86_is_riprel(&x->zi))
	{
		uintptr_t	dest = orig + len + (uintptr_t) x->zi.raw.disp.value;

		rel = (int64_t) (dest - (now + len));
		if (!x86_fits_rel32(rel) || x->zi.raw.disp.size != 32)
			return false;
		r32 = (int32_t) rel;
		memcpy(stub + *pos + x->zi.raw.disp.offset, &r32, 4);
	}
	if (x86_rel_imm(&x->zi, &k))
	{
		uintptr_t	dest = orig + len + (uintptr_t) x->zi.raw.imm[k].value.s;

		rel = (int64_t) (dest - (now + len));
		if (!x86_fits_rel32(rel))
			return false;
		r32 = (int32_t) rel;
		memcpy(stub + *pos + x->zi.raw.imm[k].offset, &r32, 4);
	}
	*pos += len;
	return true;
}

/*
 * Step 4b: the trampoline, at TRAMPOLINE_OFFSET in the stub page: endbr64,
 * the displaced instructions, and a jmp back to the first byte not
 * displaced.  text receives the displaced instructions as text, for the
 * description.  Returns false if a reference does not reach.
 */
static bool
emit_trampoline(const DetourPlan *p, uint8_t *stub, char *text, size_t textlen)
{
	size_t		pos = TRAMPOLINE_OFFSET;
	int			i;

	stub[pos++] = 0xf3;
	stub[pos++] = 0x0f;
	stub[pos++] = 0x1e;
	stub[pos++] = 0xfa;
	text[0] = '\0';
	for (i = 0; i < p->ndis; i++)
	{
		const Displaced *x = &p->dis[i];
		char		one[96];

		if (x86_format(&p->fmt, &x->zi, x->op, p->ta + x->off, one, sizeof(one)))
			snprintf(text + strlen(text), textlen - strlen(text), "%s%s",
					 i ? "; " : "", one);
		if (!emit_displaced(p, x, stub, &pos))
			return false;
	}
	return x86_emit_jmp_rel32(stub + pos, (uintptr_t) (stub + pos),
							  p->ta + p->patch_offset + p->disp_len);
}

/*
 * Install an entry detour on target (see the file header): choose the
 * displaced instructions, check nothing branches into the patch, choose
 * the stub window and map the page, emit thunk and trampoline, write the
 * jump.  On failure nothing is changed and *d is zeroed.
 */
bool
btjit_detour_install(void *target, size_t target_size, void *replacement,
					 BtjitDetour *d, char *why, size_t whylen)
{
	DetourPlan *p;
	MapList		ml = {NULL, 0};
	size_t		ps = (size_t) sysconf(_SC_PAGESIZE);
	uintptr_t	lo = 0;
	uintptr_t	hi = 0;
	uint8_t    *stub = NULL;
	uint8_t		patch[JMP_REL32_LEN];
	bool		ok = false;
	char		text[400];

	memset(d, 0, sizeof(*d));
	if (why && whylen)
		why[0] = '\0';
#if !defined(__x86_64__)
	/* the jump and the trampoline are x86-64 code */
	return rd_fail(why, whylen, "this build is not for x86-64: only x86-64 code can be redirected");
#endif
	if (target == NULL || replacement == NULL)
		return rd_fail(why, whylen, "no target or no replacement");
	if (target_size < JMP_REL32_LEN || target_size > MAX_TARGET_SIZE)
		return rd_fail(why, whylen, "target size %zu is out of range", target_size);
	p = calloc(1, sizeof(DetourPlan));
	if (p == NULL)
		return rd_fail(why, whylen, "out of memory");
	p->t = target;
	p->ta = (uintptr_t) target;
	p->target_size = target_size;
	p->why = why;
	p->whylen = whylen;
	if (!x86_decoder_init(&p->dec, &p->fmt))
	{
		rd_fail(why, whylen, "cannot initialise the Zydis decoder");
		goto done;
	}
	if (!maps_read(&ml))
	{
		rd_fail(why, whylen, "cannot read /proc/self/maps");
		goto done;
	}
	name_addr(&ml, p->ta, p->where, sizeof(p->where));

	if (!maps_exec_range(&ml, p->ta, target_size))
	{
		rd_fail(why, whylen, "%s .. +%zu is not within executable mappings of one contiguous piece of one file",
				p->where, target_size);
		goto done;
	}

	if (!choose_displaced(p) ||
		!check_no_branch_into_patch(p) ||
		!choose_stub_window(p, &lo, &hi))
		goto done;
	stub = alloc_near(&ml, p->ta, lo, hi, ps);
	if (stub == NULL)
	{
		rd_fail(why, whylen, "%s: no free page within 2 GiB for the trampoline", p->where);
		goto done;
	}

	emit_thunk(stub, ps, replacement);
	if (!emit_trampoline(p, stub, text, sizeof(text)))
		goto unreachable;
	if (mprotect(stub, ps, PROT_READ | PROT_EXEC) != 0)
	{
		rd_fail(why, whylen, "cannot make the trampoline page executable: %s", strerror(errno));
		goto done;
	}

	/* Step 5: the entry jump */
	if (!x86_emit_jmp_rel32(patch, p->ta + p->patch_offset, (uintptr_t) stub))
		goto unreachable;
	memcpy(d->saved, p->t + p->patch_offset, p->disp_len);
	if (!text_write(&ml, p->ta + p->patch_offset, patch, JMP_REL32_LEN, why, whylen))
		goto done;

	d->target = p->ta;
	d->patch_offset = p->patch_offset;
	d->displaced_len = p->disp_len;
	d->stub_page = stub;
	d->stub_page_size = ps;
	d->stock = stub + TRAMPOLINE_OFFSET;
	snprintf(d->description, sizeof(d->description),
			 "entry detour at %.60s%s: jmp to a stub %+ld KiB away; trampoline replays %zu bytes (%.80s)",
			 p->where, p->patch_offset ? " after endbr64" : "",
			 (long) (((intptr_t) stub - (intptr_t) p->ta) / 1024), p->disp_len, text);
	ok = true;
	goto done;

unreachable:
	rd_fail(why, whylen, "%s: a relocated reference does not reach from the trampoline page", p->where);

done:
	if (!ok && stub != NULL)
		munmap(stub, ps);
	if (!ok)
		memset(d, 0, sizeof(*d));
	free(ml.e);
	free(p);
	return ok;
}

/*
 * Undo btjit_detour_install: put the saved bytes back, if the entry still
 * holds our jump, and unmap the stub page.
 */
bool
btjit_detour_remove(BtjitDetour *d, char *why, size_t whylen)
{
	MapList		ml;
	uint8_t		expect[JMP_REL32_LEN];
	uintptr_t	at;
	bool		ok;

	if (why && whylen)
		why[0] = '\0';
	if (d == NULL || d->stub_page == NULL)
		return rd_fail(why, whylen, "no detour installed");
	at = d->target + d->patch_offset;
	if (!x86_emit_jmp_rel32(expect, at, (uintptr_t) d->stub_page) ||
		memcmp((const void *) at, expect, JMP_REL32_LEN) != 0)
		return rd_fail(why, whylen, "the entry at %#lx no longer holds our jump: not touching it",
					   (unsigned long) at);
	if (!maps_read(&ml))
		return rd_fail(why, whylen, "cannot read /proc/self/maps");
	ok = text_write(&ml, at, d->saved, JMP_REL32_LEN, why, whylen);
	free(ml.e);
	if (!ok)
		return false;
	munmap(d->stub_page, d->stub_page_size);
	d->stub_page = NULL;
	d->stock = NULL;
	return true;
}
