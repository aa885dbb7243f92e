/*-------------------------------------------------------------------------
 *
 * split.c
 *	  Finding the part of an exported function that gcc split off its body
 *	  (ipa-split: "_bt_search.part.0"), and proving that it is the rest of
 *	  the function after a known first statement, with the function's own
 *	  calling convention.
 *
 * gcc may split a function whose first statement can return early into a
 * small head (that statement and the early return) and the part holding
 * the rest, and then inline the head into the callers in its own
 * translation unit, which call the part directly.  Debian's PostgreSQL 15
 * does this to _bt_search: its head is
 *
 *		*bufP = _bt_getroot(rel, access);
 *		if (!BufferIsValid(*bufP))
 *			return NULL;
 *
 * and _bt_first calls the part, so a redirect of the exported function
 * alone never sees a scan's descent.  The part is found and proven in
 * five steps:
 *	1. The exported function's body (its FDE) jumps to exactly one address
 *	   outside itself that starts an FDE and is not exported; with no such
 *	   jump the function is whole (BTJIT_SPLIT_NONE).
 *	2. The head, followed from the entry along the path that reaches that
 *	   jump, does nothing but save and restore registers, call the leading
 *	   callee once with the signature's arguments, store its result
 *	   through the signature's argument, test the result and branch away
 *	   when it is zero; at the jump every argument register holds the
 *	   entry's argument, every callee-saved register the caller's value,
 *	   and the stack pointer its entry value.  So the part is entered as
 *	   the function is, after that statement, with the result valid.
 *	3. Only direct calls and jumps refer to the part, no relocation takes
 *	   its address.
 *	4. Its callers expect of it no more than the ABI (clobbers.c).
 *	5. It reads every argument register of the prototype before writing
 *	   it and no other, and passes its first argument whole to the
 *	   witness (callconv.c's CC_FRAME_WITNESS proof): gcc gave it all the
 *	   function's arguments, in the prototype's registers, which is the
 *	   one convention every caller of it uses.
 * Any doubt is a refusal (BTJIT_SPLIT_REFUSED): the exported function is
 * redirected regardless, the callers of the part keep the server's code.
 *
 * Plain C over Zydis, no PostgreSQL headers (see locate.h).
 *
 * src/locate/split.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binpatch/analysis.h"
#include "locate.h"

#define HEAD_MAX_INSNS	64		/* a head is a few dozen instructions */
#define HEAD_MAX_SLOTS	16		/* registers pushed by a head */

/* What a register or pushed slot of the head holds */
typedef enum HeadKind
{
	HV_UNKNOWN = 0,
	HV_ARG,						/* entry argument n */
	HV_ENTRY,					/* the caller's value of register n */
	HV_RESULT,					/* the leading callee's return value */
	HV_FRAME					/* entry rsp + n (the frame pointer) */
} HeadKind;

typedef struct HeadVal
{
	HeadKind	kind;
	int			n;
	bool		low32;			/* only its low 32 bits are the value */
} HeadVal;

typedef struct HeadState
{
	HeadVal		reg[16];
	int			rsp;			/* entry rsp + rsp */
	int			nslots;
	int			slot_off[HEAD_MAX_SLOTS];
	HeadVal		slot[HEAD_MAX_SLOTS];
	bool		called;
	bool		stored;
	bool		tested;
} HeadState;

static const int arg_gpr[] = {R_RDI, R_RSI, R_RDX, R_RCX, R_R8, R_R9};
static const int callee_saved[] = {R_RBX, R_RBP, R_R12, R_R13, R_R14, R_R15};

static bool
head_is(HeadVal v, HeadKind kind, int n)
{
	return v.kind == kind && v.n == n;
}

/* The instruction as text, for a refusal */
static const char *
head_insn_text(LocCtx *cx, const ZydisDecodedInstruction *zi,
			   const ZydisDecodedOperand *op, uint64_t addr, char *buf,
			   size_t len)
{
	if (!x86_format(&cx->fmt, zi, op, cx->img.bias + addr, buf, len))
		snprintf(buf, len, "(undecodable)");
	return buf;
}

/* At the function's entry: its arguments, the caller's callee-saved values */
static void
head_entry_state(HeadState *st, const BtjitSplitSignature *sig)
{
	int			i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < 16; i++)
		st->reg[i] = (HeadVal) {HV_UNKNOWN, 0, false};
	for (i = 0; i < (int) (sizeof(callee_saved) / sizeof(callee_saved[0])); i++)
		st->reg[callee_saved[i]] = (HeadVal) {HV_ENTRY, callee_saved[i], false};
	for (i = 0; i < sig->nargs; i++)
		st->reg[arg_gpr[i]] = (HeadVal) {HV_ARG, i, false};
}

/*
 * A mov of the head: a register copy (not to rsp), or the store of the
 * leading call's result through the signature's argument.  False for
 * anything else.
 */
static bool
head_mov(HeadState *st, const BtjitSplitSignature *sig,
		 const ZydisDecodedOperand *op, int d, int s)
{
	int			base;

	if (d >= 0 && s >= 0 && op[0].size == op[1].size &&
		(op[0].size == 64 || op[0].size == 32))
	{
		HeadVal		v = st->reg[s];

		if (d == R_RSP)
			return false;
		if (s == R_RSP)
			v = (HeadVal) {HV_FRAME, st->rsp, false};
		if (op[0].size == 32)
			v.low32 = true;
		st->reg[d] = v;
		return true;
	}
	if (op[0].type != ZYDIS_OPERAND_TYPE_MEMORY || s < 0 ||
		(base = x86_gpr_index(op[0].mem.base)) < 0 ||
		op[0].mem.index != ZYDIS_REGISTER_NONE ||
		op[0].mem.disp.value != 0 || op[1].size != 32)
		return false;
	if (!head_is(st->reg[base], HV_ARG, sig->result_arg) ||
		st->reg[base].low32 || st->reg[s].kind != HV_RESULT || !st->called)
		return false;
	st->stored = true;
	return true;
}

/* The head's one call: the leading callee, given the signature's arguments */
static bool
head_call(LocCtx *cx, HeadState *st, const BtjitSplitSignature *sig)
{
	int			i;

	for (i = 0; i < sig->nleading; i++)
	{
		HeadVal		v = st->reg[arg_gpr[i]];
		int			a = sig->leading_args[i];

		if (!head_is(v, HV_ARG, a) ||
			(v.low32 && !(sig->int_args & (1 << a))))
			return loc_fail(cx, "the head of %s calls %s without its argument %d as argument %d",
							sig->function, sig->leading_callee, a + 1, i + 1);
	}
	/* the call-clobbered registers are the callee's; eax its result */
	for (i = 0; i < 16; i++)
		if (i == R_RAX || i == R_RCX || i == R_RDX || i == R_RSI ||
			i == R_RDI || (i >= R_R8 && i <= R_R11))
			st->reg[i] = (HeadVal) {HV_UNKNOWN, 0, false};
	st->reg[R_RAX] = (HeadVal) {HV_RESULT, 0, true};
	st->called = true;
	return true;
}

/*
 * The head's jump to the part: after the first statement, with every
 * argument where the function received it, every callee-saved register
 * and the stack pointer as at entry (the part returns to our caller).
 */
static bool
head_enters_part(LocCtx *cx, const HeadState *st,
				 const BtjitSplitSignature *sig, uint64_t part)
{
	int			i;
	char		nb[64];

	if (!st->called || !st->stored || !st->tested)
		return loc_fail(cx, "the head of %s jumps to %s before it has called %s, stored and tested its result",
						sig->function, addr_name(cx, part, nb, sizeof(nb)),
						sig->leading_callee);
	if (st->rsp != 0 || st->nslots != 0)
		return loc_fail(cx, "the head of %s jumps to %s with the stack pointer not at its entry value",
						sig->function, addr_name(cx, part, nb, sizeof(nb)));
	for (i = 0; i < sig->nargs; i++)
	{
		HeadVal		v = st->reg[arg_gpr[i]];

		if (!head_is(v, HV_ARG, i) ||
			(v.low32 && !(sig->int_args & (1 << i))))
			return loc_fail(cx, "the head of %s jumps to %s without its argument %d in the same register",
							sig->function, addr_name(cx, part, nb, sizeof(nb)),
							i + 1);
	}
	for (i = 0; i < (int) (sizeof(callee_saved) / sizeof(callee_saved[0])); i++)
		if (!head_is(st->reg[callee_saved[i]], HV_ENTRY, callee_saved[i]))
			return loc_fail(cx, "the head of %s jumps to %s with a callee-saved register not restored",
							sig->function, addr_name(cx, part, nb, sizeof(nb)));
	return true;
}

/*
 * Step 2: follow the head from fn's entry to the jump to part.  True if it
 * is the signature's first statement and hands the part the function's
 * own arguments; else a refusal in cx.
 */
static bool
head_proven(LocCtx *cx, const Fde *fn, uint64_t part,
			const BtjitSplitSignature *sig, uint64_t leading)
{
	HeadState	st;
	uint64_t	addr = fn->start;
	int			steps;
	char		text[128];
	char		nb[64];

	head_entry_state(&st, sig);

	for (steps = 0; steps < HEAD_MAX_INSNS; steps++)
	{
		ZydisDecodedInstruction zi;
		ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
		const uint8_t *code = code_at(&cx->img, addr, fn->end - addr);
		uint64_t	target = 0;
		bool		has_target;
		int			d = -1;
		int			s = -1;

		if (code == NULL || addr >= fn->end ||
			!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&cx->dec, code, fn->end - addr,
												 &zi, op)))
			return loc_fail(cx, "cannot follow the head of %s at %s",
							sig->function, addr_name(cx, addr, nb, sizeof(nb)));
		has_target = x86_rel_target(&zi, addr, &target);
		if (zi.operand_count_visible >= 1 && op[0].type == ZYDIS_OPERAND_TYPE_REGISTER)
			d = x86_gpr_index(op[0].reg.value);
		if (zi.operand_count_visible >= 2 && op[1].type == ZYDIS_OPERAND_TYPE_REGISTER)
			s = x86_gpr_index(op[1].reg.value);

		switch (zi.mnemonic)
		{
			case ZYDIS_MNEMONIC_ENDBR64:
			case ZYDIS_MNEMONIC_NOP:
				break;
			case ZYDIS_MNEMONIC_PUSH:
				if (d < 0 || op[0].size != 64 || st.nslots >= HEAD_MAX_SLOTS)
					goto refuse;
				st.rsp -= 8;
				st.slot_off[st.nslots] = st.rsp;
				st.slot[st.nslots++] = st.reg[d];
				break;
			case ZYDIS_MNEMONIC_POP:
				if (d < 0 || op[0].size != 64 || st.nslots == 0 ||
					st.slot_off[st.nslots - 1] != st.rsp)
					goto refuse;
				st.reg[d] = st.slot[--st.nslots];
				st.rsp += 8;
				break;
			case ZYDIS_MNEMONIC_SUB:
			case ZYDIS_MNEMONIC_ADD:
				if (d != R_RSP || op[0].size != 64 ||
					op[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
					op[1].imm.value.s % 8 != 0 || op[1].imm.value.s < 0 ||
					op[1].imm.value.s > 256)
					goto refuse;
				st.rsp += (zi.mnemonic == ZYDIS_MNEMONIC_ADD ? 1 : -1) *
					(int) op[1].imm.value.s;
				/* no slot may lie below the stack pointer */
				if (st.nslots > 0 && st.slot_off[st.nslots - 1] < st.rsp)
					goto refuse;
				break;
			case ZYDIS_MNEMONIC_MOV:
				if (!head_mov(&st, sig, op, d, s))
					goto refuse;
				break;
			case ZYDIS_MNEMONIC_TEST:
				if (d >= 0 && d == s && op[0].size == 32 &&
					st.reg[d].kind == HV_RESULT)
				{
					st.tested = true;
					break;
				}
				goto refuse;
			case ZYDIS_MNEMONIC_JZ:
				/* the early return when the result is zero: not followed */
				if (!st.tested || !has_target ||
					target < fn->start || target >= fn->end)
					goto refuse;
				break;
			case ZYDIS_MNEMONIC_CALL:
				if (st.called || !has_target || target != leading)
					goto refuse;
				if (!head_call(cx, &st, sig))
					return false;
				break;
			case ZYDIS_MNEMONIC_JMP:
				if (!has_target)
					goto refuse;
				if (target >= fn->start && target < fn->end)
				{
					addr = target;
					continue;
				}
				if (target != part)
					goto refuse;
				return head_enters_part(cx, &st, sig, part);
			default:
				goto refuse;
		}
		addr += zi.length;
		continue;

refuse:
		return loc_fail(cx, "the head of %s does more than its first statement: %s at %s",
						sig->function,
						head_insn_text(cx, &zi, op, addr, text, sizeof(text)),
						addr_name(cx, addr, nb, sizeof(nb)));
	}
	return loc_fail(cx, "the head of %s is longer than %d instructions",
					sig->function, HEAD_MAX_INSNS);
}

/*
 * Step 1: the one jump out of fn's body to the start of a function that is
 * not exported, or 0 if there is none.  False on a second such target.
 */
static bool
split_target(LocCtx *cx, const Fde *fn, const char *function, uint64_t *part)
{
	const uint8_t *code = code_at(&cx->img, fn->start, fn->end - fn->start);
	uint64_t	addr;
	char		nb[64];
	char		nb2[64];

	*part = 0;
	for (addr = fn->start; code != NULL && addr < fn->end;)
	{
		ZydisDecodedInstruction zi;
		uint64_t	t;

		if (!x86_decode(&cx->dec, code + (addr - fn->start), fn->end - addr, &zi))
			return loc_fail(cx, "cannot decode %s at %s", function,
							addr_name(cx, addr, nb, sizeof(nb)));
		if (zi.mnemonic == ZYDIS_MNEMONIC_JMP &&
			x86_rel_target(&zi, addr, &t) &&
			(t < fn->start || t >= fn->end) &&
			fde_starting_at(&cx->img, t) != NULL &&
			exported_at(&cx->img, t) == NULL)
		{
			if (*part != 0 && *part != t)
				return loc_fail(cx, "%s jumps to two functions of its own (%s, %s)",
								function, addr_name(cx, *part, nb, sizeof(nb)),
								addr_name(cx, t, nb2, sizeof(nb2)));
			*part = t;
		}
		addr += zi.length;
	}
	return true;
}

/* Step 3: only direct calls and jumps refer to the part */
static bool
split_references(LocCtx *cx, uint64_t part, BtjitSplitLocation *sl)
{
	Ref			refs[MAX_REFS];
	int			nrefs;
	int			i;
	char		nb[64];
	char		nb2[64];

	if (!direct_refs(cx, part, refs, &nrefs, BTJIT_MAX_CALLSITES))
		return false;
	for (i = 0; i < nrefs; i++)
	{
		if (refs[i].kind != REF_CALL && refs[i].kind != REF_JUMP)
			return loc_fail(cx, "%s is referred to at %s other than by a direct call or jump",
							addr_name(cx, part, nb, sizeof(nb)),
							addr_name(cx, refs[i].site, nb2, sizeof(nb2)));
		sl->callsites[i] = cx->img.bias + refs[i].site;
	}
	sl->ncallsites = nrefs;
	return true;
}

/* Find the split part of sig->function in a mapped binary (locate.h) */
BtjitSplitOutcome
btjit_locate_split_at(const char *path, uintptr_t load_bias,
					  const BtjitSplitSignature *sig, BtjitSplitLocation *sl,
					  char *why, size_t whylen)
{
	LocCtx		cx;
	const Elf64_Sym *sym;
	const Fde  *fn;
	const Fde  *pf;
	uint64_t	leading;
	uint64_t	witness;
	uint64_t	part;
	char		chain[256];
	char		conv[384];
	BtjitSplitOutcome outcome = BTJIT_SPLIT_REFUSED;

	memset(sl, 0, sizeof(*sl));
	if (!loc_open_image(&cx, path, load_bias, why, whylen))
		goto done;

	sym = dynsym_lookup(&cx.img, sig->function, NULL);
	if (sym == NULL || ELF64_ST_TYPE(sym->st_info) != STT_FUNC ||
		(fn = fde_starting_at(&cx.img, sym->st_value)) == NULL)
	{
		loc_fail(&cx, "%s is not an exported function with unwind information",
				 sig->function);
		goto done;
	}
	sym = dynsym_lookup(&cx.img, sig->leading_callee, NULL);
	leading = (sym != NULL && ELF64_ST_TYPE(sym->st_info) == STT_FUNC) ? sym->st_value : 0;
	sym = dynsym_lookup(&cx.img, sig->witness, NULL);
	witness = (sym != NULL && ELF64_ST_TYPE(sym->st_info) == STT_FUNC) ? sym->st_value : 0;
	if (leading == 0 || witness == 0)
	{
		loc_fail(&cx, "%s or %s is not exported", sig->leading_callee,
				 sig->witness);
		goto done;
	}

	/* step 1 */
	if (!split_target(&cx, fn, sig->function, &part))
		goto done;
	if (part == 0)
	{
		outcome = BTJIT_SPLIT_NONE;
		goto done;
	}
	pf = fde_starting_at(&cx.img, part);

	/* steps 2 to 5 */
	if (!head_proven(&cx, fn, part, sig, leading) ||
		!split_references(&cx, part, sl) ||
		!prove_clobbers_all(&cx, part, chain, sizeof(chain)))
		goto done;
	{
		CallconvClaim proto = {
			.shape = CC_FRAME_WITNESS,
			.subject = sig->function,
			.witness_name = sig->witness,
			.arg_types = {"Relation", "the second argument"},
			.frame_arg = -1,
		};

		proto.nargs = sig->nargs;
		proto.witness = witness;
		if (!prove_callconv(&cx, pf->start, pf->end, &proto, conv, sizeof(conv)))
			goto done;
	}

	sl->part = cx.img.bias + part;
	sl->part_size = pf->end - pf->start;
	snprintf(sl->evidence, sizeof(sl->evidence),
			 "%s's split part at %s+%#llx size %#zx: entered from its head (%s, result stored and tested) with its arguments and callee-saved registers as at entry; %d direct reference(s); callers: it ",
			 sig->function, cx.img.name, (unsigned long long) part,
			 sl->part_size, sig->leading_callee, sl->ncallsites);
	loc_append(sl->evidence, sizeof(sl->evidence), "%s", chain);
	loc_append(sl->evidence, sizeof(sl->evidence), "; its own calling convention: ");
	loc_append(sl->evidence, sizeof(sl->evidence), "%s", conv);
	outcome = BTJIT_SPLIT_FOUND;

done:
	image_close(&cx.img);
	return outcome;
}
