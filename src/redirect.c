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

#include <Zydis/Zydis.h>

#include "binpatch.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define JMP_REL32_LEN		5
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

static const MapEntry *
maps_find(const MapList *ml, uintptr_t addr)
{
	int			i;

	for (i = 0; i < ml->n; i++)
		if (addr >= ml->e[i].start && addr < ml->e[i].end)
			return &ml->e[i];
	return NULL;
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

static bool
is_riprel(const ZydisDecodedInstruction *zi)
{
	return (zi->attributes & ZYDIS_ATTRIB_HAS_MODRM) &&
		zi->raw.modrm.mod == 0 && zi->raw.modrm.rm == 5;
}

static bool
rel_imm(const ZydisDecodedInstruction *zi, int *k)
{
	int			i;

	for (i = 0; i < 2; i++)
		if (zi->raw.imm[i].size != 0 && zi->raw.imm[i].is_relative)
		{
			*k = i;
			return true;
		}
	return false;
}

static bool
fits_rel32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

bool
btjit_detour_install(void *target, size_t target_size, void *replacement,
					 BtjitDetour *d, char *why, size_t whylen)
{
	ZydisDecoder dec;
	ZydisFormatter fmt;
	const uint8_t *t = target;
	uintptr_t	ta = (uintptr_t) target;
	Displaced	dis[MAX_DISPLACED];
	int			ndis = 0;
	size_t		patch_offset = 0;
	size_t		disp_len = 0;
	size_t		off;
	MapList		ml = {NULL, 0};
	const MapEntry *tm;
	size_t		ps = (size_t) sysconf(_SC_PAGESIZE);
	uintptr_t	anchor_lo;
	uintptr_t	anchor_hi;
	uintptr_t	lo;
	uintptr_t	hi;
	uint8_t    *stub = NULL;
	size_t		pos;
	uint8_t		patch[JMP_REL32_LEN];
	int64_t		rel;
	bool		ok = false;
	char		where[96];
	char		text[400];
	int			i;

	memset(d, 0, sizeof(*d));
	if (why && whylen)
		why[0] = '\0';
	if (target == NULL || replacement == NULL)
		return rd_fail(why, whylen, "no target or no replacement");
	if (target_size < JMP_REL32_LEN || target_size > MAX_TARGET_SIZE)
		return rd_fail(why, whylen, "target size %zu is out of range", target_size);
	if (ZYAN_FAILED(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
		ZYAN_FAILED(ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_INTEL)))
		return rd_fail(why, whylen, "cannot initialise the Zydis decoder");
	if (!maps_read(&ml))
		return rd_fail(why, whylen, "cannot read /proc/self/maps");
	name_addr(&ml, ta, where, sizeof(where));

	tm = maps_find(&ml, ta);
	if (tm == NULL || !(tm->prot & PROT_EXEC) || ta + target_size > tm->end)
	{
		rd_fail(why, whylen, "%s .. +%zu is not within one executable mapping", where, target_size);
		goto done;
	}

	/*
	 * The instructions to displace.  An endbr64 stays where it is: indirect
	 * calls land on it under CET, and it needs no relocation.
	 */
	off = 0;
	while (disp_len < JMP_REL32_LEN)
	{
		Displaced  *x;
		int			k;

		if (ndis == MAX_DISPLACED)
		{
			rd_fail(why, whylen, "%s: too many instructions in the first bytes", where);
			goto done;
		}
		x = &dis[ndis];
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, t + off, target_size - off, &x->zi, x->op)))
		{
			rd_fail(why, whylen, "%s: cannot decode the instruction at +%#zx", where, off);
			goto done;
		}
		x->off = off;
		if (off == 0 && x->zi.mnemonic == ZYDIS_MNEMONIC_ENDBR64)
		{
			patch_offset = x->zi.length;
			off += x->zi.length;
			continue;
		}
		if (is_riprel(&x->zi) && x->zi.address_width != 64)
		{
			rd_fail(why, whylen, "%s: EIP-relative operand at +%#zx", where, off);
			goto done;
		}
		if (rel_imm(&x->zi, &k))
		{
			bool		movable = (x->zi.mnemonic == ZYDIS_MNEMONIC_CALL && x->zi.raw.imm[k].size == 32) ||
				(x->zi.mnemonic == ZYDIS_MNEMONIC_JMP &&
				 (x->zi.raw.imm[k].size == 32 || x->zi.raw.imm[k].size == 8));

			if (!movable)
			{
				ZydisFormatterFormatInstruction(&fmt, &x->zi, x->op, x->zi.operand_count_visible,
												text, sizeof(text), ta + off, NULL);
				rd_fail(why, whylen, "%s: relative branch \"%s\" at +%#zx cannot be moved",
						where, text, off);
				goto done;
			}
		}
		off += x->zi.length;
		disp_len += x->zi.length;
		ndis++;
		if (disp_len < JMP_REL32_LEN &&
			(x->zi.mnemonic == ZYDIS_MNEMONIC_RET || x->zi.mnemonic == ZYDIS_MNEMONIC_JMP ||
			 x->zi.mnemonic == ZYDIS_MNEMONIC_UD2 || x->zi.mnemonic == ZYDIS_MNEMONIC_INT3 ||
			 x->zi.mnemonic == ZYDIS_MNEMONIC_HLT))
		{
			rd_fail(why, whylen, "%s: the function's code ends %zu bytes in, too short for a %d-byte jump",
					where, off, JMP_REL32_LEN);
			goto done;
		}
	}
	if (patch_offset + disp_len > target_size || disp_len > sizeof(d->saved))
	{
		rd_fail(why, whylen, "%s: the patch would extend past the function's %zu bytes",
				where, target_size);
		goto done;
	}

	/*
	 * Nothing in the body may branch into the displaced bytes: it would
	 * execute half of our jump.  A jump (not a call) to the entry itself
	 * would be a loop re-entering through the replacement: refuse that too.
	 */
	for (off = 0; off < target_size;)
	{
		ZydisDecodedInstruction zi;
		int			k;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, t + off, target_size - off, &zi)))
		{
			rd_fail(why, whylen, "%s: cannot decode the body at +%#zx", where, off);
			goto done;
		}
		if (rel_imm(&zi, &k))
		{
			uintptr_t	dest = ta + off + zi.length + (uintptr_t) zi.raw.imm[k].value.s;
			uintptr_t	pend = ta + patch_offset + disp_len;
			bool		bad;

			if (zi.mnemonic == ZYDIS_MNEMONIC_CALL)
				bad = dest > ta && dest < pend && dest != ta + patch_offset;
			else
				bad = dest >= ta && dest < pend;
			if (bad)
			{
				rd_fail(why, whylen, "%s: the branch at +%#zx goes to +%#lx, inside the %zu bytes the patch replaces",
						where, off, (unsigned long) (dest - ta), patch_offset + disp_len);
				goto done;
			}
		}
		off += zi.length;
	}

	/*
	 * Where the stub page may go: every rel32 we write must reach.  Anchors
	 * are the target and whatever the displaced instructions refer to.
	 */
	anchor_lo = anchor_hi = ta;
	for (i = 0; i < ndis; i++)
	{
		uintptr_t	a = ta + dis[i].off + dis[i].zi.length;
		int			k;

		if (is_riprel(&dis[i].zi))
			a += (uintptr_t) dis[i].zi.raw.disp.value;
		else if (rel_imm(&dis[i].zi, &k))
			a += (uintptr_t) dis[i].zi.raw.imm[k].value.s;
		else
			continue;
		if (a < anchor_lo)
			anchor_lo = a;
		if (a > anchor_hi)
			anchor_hi = a;
	}
	if (anchor_hi - anchor_lo > (uintptr_t) REL32_REACH)
	{
		rd_fail(why, whylen, "%s: the displaced instructions refer too far away to be relocated", where);
		goto done;
	}
	lo = anchor_hi > (uintptr_t) REL32_REACH ? anchor_hi - (uintptr_t) REL32_REACH : 0;
	hi = anchor_lo + (uintptr_t) REL32_REACH;
	stub = alloc_near(&ml, ta, lo, hi, ps);
	if (stub == NULL)
	{
		rd_fail(why, whylen, "%s: no free page within 2 GiB for the trampoline", where);
		goto done;
	}

	/* thunk: jmp [rip+0]; .quad replacement */
	memset(stub, 0xcc, ps);
	stub[0] = 0xff;
	stub[1] = 0x25;
	memset(stub + 2, 0, 4);
	{
		uint64_t	r = (uint64_t) (uintptr_t) replacement;

		memcpy(stub + 6, &r, 8);
	}

	/* trampoline: endbr64, the displaced instructions, jmp back */
	pos = TRAMPOLINE_OFFSET;
	stub[pos++] = 0xf3;
	stub[pos++] = 0x0f;
	stub[pos++] = 0x1e;
	stub[pos++] = 0xfa;
	text[0] = '\0';
	for (i = 0; i < ndis; i++)
	{
		const Displaced *x = &dis[i];
		uintptr_t	orig = ta + x->off;
		uintptr_t	now = (uintptr_t) (stub + pos);
		size_t		len = x->zi.length;
		int			k;
		char		one[96];

		if (ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&fmt, &x->zi, x->op,
														 x->zi.operand_count_visible,
														 one, sizeof(one), orig, NULL)))
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s",
					 i ? "; " : "", one);

		if (x->zi.mnemonic == ZYDIS_MNEMONIC_JMP && rel_imm(&x->zi, &k) &&
			x->zi.raw.imm[k].size == 8)
		{
			/* jmp rel8 grows into jmp rel32 */
			uintptr_t	dest = orig + len + (uintptr_t) x->zi.raw.imm[k].value.s;
			int32_t		r32;

			rel = (int64_t) (dest - (now + 5));
			if (!fits_rel32(rel))
				goto unreachable;
			r32 = (int32_t) rel;
			stub[pos] = 0xe9;
			memcpy(stub + pos + 1, &r32, 4);
			pos += 5;
			continue;
		}
		memcpy(stub + pos, t + x->off, len);
		if (is_riprel(&x->zi))
		{
			uintptr_t	dest = orig + len + (uintptr_t) x->zi.raw.disp.value;
			int32_t		r32;

			rel = (int64_t) (dest - (now + len));
			if (!fits_rel32(rel) || x->zi.raw.disp.size != 32)
				goto unreachable;
			r32 = (int32_t) rel;
			memcpy(stub + pos + x->zi.raw.disp.offset, &r32, 4);
		}
		if (rel_imm(&x->zi, &k))
		{
			uintptr_t	dest = orig + len + (uintptr_t) x->zi.raw.imm[k].value.s;
			int32_t		r32;

			rel = (int64_t) (dest - (now + len));
			if (!fits_rel32(rel))
				goto unreachable;
			r32 = (int32_t) rel;
			memcpy(stub + pos + x->zi.raw.imm[k].offset, &r32, 4);
		}
		pos += len;
	}
	rel = (int64_t) ((ta + patch_offset + disp_len) - ((uintptr_t) (stub + pos) + 5));
	if (!fits_rel32(rel))
		goto unreachable;
	{
		int32_t		r32 = (int32_t) rel;

		stub[pos] = 0xe9;
		memcpy(stub + pos + 1, &r32, 4);
		pos += 5;
	}
	if (mprotect(stub, ps, PROT_READ | PROT_EXEC) != 0)
	{
		rd_fail(why, whylen, "cannot make the trampoline page executable: %s", strerror(errno));
		goto done;
	}

	/* the entry jump */
	rel = (int64_t) ((uintptr_t) stub - (ta + patch_offset + JMP_REL32_LEN));
	if (!fits_rel32(rel))
		goto unreachable;
	{
		int32_t		r32 = (int32_t) rel;

		patch[0] = 0xe9;
		memcpy(patch + 1, &r32, 4);
	}
	memcpy(d->saved, t + patch_offset, disp_len);
	if (!text_write(&ml, ta + patch_offset, patch, JMP_REL32_LEN, why, whylen))
		goto done;

	d->target = ta;
	d->patch_offset = patch_offset;
	d->displaced_len = disp_len;
	d->stub_page = stub;
	d->stub_page_size = ps;
	d->stock = stub + TRAMPOLINE_OFFSET;
	snprintf(d->description, sizeof(d->description),
			 "entry detour at %.60s%s: jmp to a stub %+ld KiB away; trampoline replays %zu bytes (%.80s)",
			 where, patch_offset ? " after endbr64" : "",
			 (long) (((intptr_t) stub - (intptr_t) ta) / 1024), disp_len, text);
	ok = true;
	goto done;

unreachable:
	rd_fail(why, whylen, "%s: a relocated reference does not reach from the trampoline page", where);

done:
	if (!ok && stub != NULL)
		munmap(stub, ps);
	if (!ok)
		memset(d, 0, sizeof(*d));
	free(ml.e);
	return ok;
}

bool
btjit_detour_remove(BtjitDetour *d, char *why, size_t whylen)
{
	MapList		ml;
	uint8_t		expect[JMP_REL32_LEN];
	uintptr_t	at;
	int32_t		r32;
	bool		ok;

	if (why && whylen)
		why[0] = '\0';
	if (d == NULL || d->stub_page == NULL)
		return rd_fail(why, whylen, "no detour installed");
	at = d->target + d->patch_offset;
	r32 = (int32_t) ((intptr_t) d->stub_page - (intptr_t) (at + JMP_REL32_LEN));
	expect[0] = 0xe9;
	memcpy(expect + 1, &r32, 4);
	if (memcmp((const void *) at, expect, JMP_REL32_LEN) != 0)
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
