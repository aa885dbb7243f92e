/*-------------------------------------------------------------------------
 *
 * clobbers.c
 *	  The callers' side of the calling convention: show that no caller of
 *	  a function the module redirects can have been compiled to expect
 *	  less of it than the System V ABI allows.
 *
 * The module runs its own code in place of a server function.  Its code
 * keeps the ABI: it may change every call-clobbered register (rax, rcx,
 * rdx, rsi, rdi, r8-r11, the xmm registers) and it needs the stack aligned
 * to 16 bytes at the call.  A caller compiled with the callee's body in
 * view may have been built to expect less: gcc's -fipa-ra (on at -O2)
 * keeps a value in a call-clobbered register across the call of a
 * function it knows does not touch that register, and
 * -fipa-stack-alignment calls a function it knows needs no alignment with
 * the stack unaligned.  Both apply to a static function such as the page
 * search and to an exported one called from its own translation unit (the
 * comparison called from the page search and the move-right step): the
 * server is an executable, so its functions cannot be interposed.
 *
 * The proof: the function reaches, through direct calls and jumps
 * (branches into another body included: gcc's .cold parts), an indirect
 * call (a call through a register or memory, or a jump through a GOT
 * slot, as a PLT entry makes).  No compiler can know what an indirect
 * call runs, so it must assume that the function changes every
 * call-clobbered register and needs the ABI's alignment; then every
 * caller treats a call of it as a call of an unknown function, which is
 * what the module's code is.  The search is breadth first over whole
 * function bodies from their FDEs (a compiler's summary is per function,
 * whatever path is taken), so the shortest such chain is the evidence.
 * Not finding one within the bounds is a refusal: the function might be a
 * leaf whose callers rely on its register use.
 *
 * Plain C over Zydis, no PostgreSQL headers (see binpatch.h).
 *
 * src/binpatch/clobbers.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

#define CLOBBER_MAX_FUNCS	256 /* function bodies looked at */
#define CLOBBER_MAX_DEPTH	4	/* calls between the function and the
								 * indirect call */
#define CLOBBER_STUB_BYTES	32	/* decoded at a target outside every FDE */

/* One function body in the search, and how it was reached */
typedef struct Reached
{
	uint64_t	start;			/* where it was entered */
	uint64_t	fde_start;		/* its extent */
	uint64_t	fde_end;
	bool		stub;			/* no FDE: only its first straight line */
	int			depth;			/* direct calls or jumps from the root */
	int			parent;			/* index in the search, -1 for the root */
} Reached;

typedef struct ClobberSearch
{
	Reached		r[CLOBBER_MAX_FUNCS];
	int			n;
} ClobberSearch;

/*
 * The extent to decode for a call or jump target: the FDE that contains it,
 * or, outside every FDE (a PLT entry without unwind information), a few
 * bytes from the target itself, of which only the instructions up to the
 * first that does not fall through count (*stub): past it may lie another
 * function.  False if the target is not code.
 */
static bool
target_extent(LocCtx *cx, uint64_t t, uint64_t *start, uint64_t *end,
			  bool *stub)
{
	ssize_t		fi = fde_le(&cx->img, t);

	if (fi >= 0 && t < cx->img.fde[fi].end)
	{
		*start = cx->img.fde[fi].start;
		*end = cx->img.fde[fi].end;
		*stub = false;
		return code_at(&cx->img, *start, *end - *start) != NULL;
	}
	*start = t;
	*end = t + CLOBBER_STUB_BYTES;
	*stub = true;
	return code_at(&cx->img, *start, CLOBBER_STUB_BYTES) != NULL;
}

/* Add a body to the search unless it is there already; false when full */
static bool
reach(LocCtx *cx, ClobberSearch *s, uint64_t t, int depth, int parent)
{
	uint64_t	start;
	uint64_t	end;
	bool		stub;
	int			i;

	if (!target_extent(cx, t, &start, &end, &stub))
		return true;			/* not code we can read: no evidence */
	for (i = 0; i < s->n; i++)
		if (s->r[i].fde_start == start)
			return true;
	if (s->n == CLOBBER_MAX_FUNCS)
		return false;
	s->r[s->n].start = t;
	s->r[s->n].fde_start = start;
	s->r[s->n].fde_end = end;
	s->r[s->n].stub = stub;
	s->r[s->n].depth = depth;
	s->r[s->n].parent = parent;
	s->n++;
	return true;
}

/*
 * Is this instruction a transfer to code no compiler can see: an indirect
 * call, or a jump through a RIP-relative slot (a PLT entry or a -fno-plt
 * tail call)?  A jump through a register is a switch, not a call.
 */
static bool
is_unknown_callee(const ZydisDecodedInstruction *zi)
{
	int			k;

	if (x86_rel_imm(zi, &k))
		return false;
	if (zi->mnemonic == ZYDIS_MNEMONIC_CALL)
		return true;
	return zi->mnemonic == ZYDIS_MNEMONIC_JMP && x86_is_riprel(zi);
}

/* "name" for an exported function's start, else "binary+0x..." */
static const char *
func_name(const LocCtx *cx, uint64_t vaddr, char *buf, size_t len)
{
	const char *name = exported_at(&cx->img, vaddr);

	if (name != NULL)
	{
		snprintf(buf, len, "%s", name);
		return buf;
	}
	return addr_name(cx, vaddr, buf, len);
}

/* The evidence: the chain of calls from the root, then the instruction */
static void
describe_chain(LocCtx *cx, const ClobberSearch *s, int last,
			   const ZydisDecodedInstruction *zi, uint64_t at,
			   char *desc, size_t desclen)
{
	int			chain[CLOBBER_MAX_DEPTH + 1];
	int			nchain = 0;
	int			i;
	size_t		used;
	char		nb[64];
	char		text[96];
	ZydisDecodedInstruction full;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	const uint8_t *code = code_at(&cx->img, at, zi->length);

	for (i = last; i > 0 && nchain <= CLOBBER_MAX_DEPTH; i = s->r[i].parent)
		chain[nchain++] = i;
	snprintf(desc, desclen, "reaches an indirect call");
	for (i = nchain - 1; i >= 0; i--)
	{
		used = strlen(desc);
		snprintf(desc + used, desclen - used, "%s%s",
				 i == nchain - 1 ? " via " : " -> ",
				 func_name(cx, s->r[chain[i]].start, nb, sizeof(nb)));
	}
	text[0] = '\0';
	if (code == NULL ||
		ZYAN_FAILED(ZydisDecoderDecodeFull(&cx->dec, code, zi->length, &full, op)) ||
		!x86_format(&cx->fmt, &full, op, at, text, sizeof(text)))
		snprintf(text, sizeof(text), "%s",
				 zi->mnemonic == ZYDIS_MNEMONIC_CALL ? "call" : "jmp");
	used = strlen(desc);
	snprintf(desc + used, desclen - used, " [%s at %s]", text,
			 addr_name(cx, at, nb, sizeof(nb)));
}

/*
 * Show that no caller of the function at fn may expect it to preserve a
 * call-clobbered register or to run on an unaligned stack (see the file
 * header).  On success desc says which indirect call shows it; on failure
 * the reason is in cx's why[] (via loc_fail).
 */
bool
prove_clobbers_all(LocCtx *cx, uint64_t fn, char *desc, size_t desclen)
{
	ClobberSearch *s = calloc(1, sizeof(ClobberSearch));
	int			i;
	char		nb[64];

	if (s == NULL)
		return loc_fail(cx, "out of memory");
	if (!reach(cx, s, fn, 0, -1) || s->n == 0)
	{
		free(s);
		return loc_fail(cx, "cannot read the code of %s", addr_name(cx, fn, nb, sizeof(nb)));
	}
	for (i = 0; i < s->n; i++)
	{
		Reached    *r = &s->r[i];
		const uint8_t *code = code_at(&cx->img, r->start,
									  r->fde_end - r->start);
		uint64_t	addr;

		/*
		 * From where it was entered: the start of a function, or one PLT
		 * entry of the many one FDE covers.
		 */
		for (addr = r->start; code != NULL && addr < r->fde_end;)
		{
			ZydisDecodedInstruction zi;
			uint64_t	t;

			if (!x86_decode(&cx->dec, code + (addr - r->start),
							r->fde_end - addr, &zi))
				break;			/* the rest of this body gives no evidence */
			if (is_unknown_callee(&zi))
			{
				describe_chain(cx, s, i, &zi, addr, desc, desclen);
				free(s);
				return true;
			}
			/* calls, tail jumps, and branches into a .cold part */
			if ((zi.mnemonic == ZYDIS_MNEMONIC_CALL ||
				 zi.mnemonic == ZYDIS_MNEMONIC_JMP ||
				 zi.meta.category == ZYDIS_CATEGORY_COND_BR) &&
				x86_rel_target(&zi, addr, &t) &&
				(t < r->fde_start || t >= r->fde_end) &&
				r->depth < CLOBBER_MAX_DEPTH &&
				!reach(cx, s, t, r->depth + 1, i))
				break;			/* the search is full */
			if (r->stub && x86_is_uncond_end(&zi))
				break;
			addr += zi.length;
		}
	}
	free(s);
	return loc_fail(cx, "%s reaches no indirect call within %d calls: a caller compiled with its body in view (gcc's -fipa-ra) may keep a value in a register it leaves alone, which the module's code would not",
					addr_name(cx, fn, nb, sizeof(nb)), CLOBBER_MAX_DEPTH);
}
