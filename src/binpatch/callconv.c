/*-------------------------------------------------------------------------
 *
 * callconv.c
 *	  The calling-convention proofs: show, by a forward data-flow analysis
 *	  over a candidate's decoded body, that it takes its arguments as the
 *	  prototype says.
 *
 The caller (the locator, src/locate/) names the function, the exported
 * "witness" whose calls show its arguments, and one of two shapes
 * (CallconvClaim, analysis.h):
 *
 * CC_PAGE_SEARCH, (pointer, pointer, Buffer): at each call to the witness,
 * rdi and rsi must still hold the values they had on entry, and rdx must
 * be a page address derived from the 32-bit entry edx through BufferBlocks
 * or LocalBufferBlockPointers (the BufferGetPage expansion).
 *
 * CC_FRAME_WITNESS, (pointer, integers...): at each call to the witness
 * rdi must still be the entry rdi, every argument register of the
 * signature must be read before it is written and no other one may be
 * (src/README, "Finding the leaf read").
 *
 * gcc may clone static functions with changed arguments (.isra,
 * .constprop); a clone fails these proofs.  The analysis runs in four
 * steps: decode the body, find its basic blocks, iterate to a fixpoint,
 * then check the obligations on the final states.  Frame addresses are
 * followed to where they escape (src/README, "What the data flow assumes
 * of the stack").
 *
 * Plain C over Zydis, no PostgreSQL headers (see binpatch.h).
 *
 * src/binpatch/callconv.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

/* ----------------------------------------------------------------
 *		Calling-convention proof: data flow over the candidate
 * ----------------------------------------------------------------
 *
 * An abstract value says where a register or stack slot's content came
 * from.  Kinds track identity (still exactly the entry rdi, a known stack
 * address, ...); taint bits track derivation ("computed from the entry
 * edx").  The analysis is a forward fixpoint over the basic blocks;
 * merges keep a kind only if both sides agree, intersect the "must"
 * taint bits and unite the "may" bits.
 */

typedef enum AbsKind
{
	AV_OTHER = 0,				/* anything; see taint */
	AV_ARG0,					/* entry rdi, unchanged */
	AV_ARG1,					/* entry rsi, unchanged */
	AV_ARG2,					/* entry rdx (Buffer in edx) */
	AV_ARG3,					/* entry rcx, where it is an argument */
	AV_ARG4,					/* entry r8, where it is an argument */
	AV_NOARG,					/* entry rcx/r8/r9: not an argument */
	AV_ENTRY,					/* caller's value of a register (rax, callee-saved) */
	AV_STACK					/* entry rsp + off */
} AbsKind;

#define T_BUF		0x01		/* must: derived from the entry edx */
#define T_PAGEBASE	0x02		/* must: derived from BufferBlocks or
								 * LocalBufferBlockPointers */
#define T_BB		0x04		/* may: from BufferBlocks */
#define T_LBP		0x08		/* may: from LocalBufferBlockPointers */
#define T_FRAME		0x10		/* may: a frame address, on some path */
#define T_MUST		(T_BUF | T_PAGEBASE)

#define DEF_MIXED	UINT64_MAX	/* defined by different instructions */

typedef struct AbsVal
{
	uint8_t		kind;
	uint8_t		taint;
	int32_t		off;			/* AV_STACK */
	uint64_t	def;			/* instruction that last set it, 0 = entry */
} AbsVal;

typedef struct Slot
{
	int32_t		off;			/* relative to entry rsp */
	uint8_t		size;
	AbsVal		v;
} Slot;

typedef struct FlowState
{
	bool		reached;
	bool		escaped;		/* a stack address left rsp/rbp */
	AbsVal		reg[16];
	int			nslots;
	Slot		slot[MAX_SLOTS];
} FlowState;

typedef struct DecInsn
{
	uint64_t	addr;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	uint64_t	target;			/* direct branch/call target */
	bool		has_target;
} DecInsn;

/* A call to the witness function */
typedef struct CompareCall
{
	uint64_t	site;
	bool		checked;
	AbsVal		rdi;
	AbsVal		rsi;
	AbsVal		rdx;
} CompareCall;

typedef struct Proof
{
	LocCtx	   *cx;
	const CallconvClaim *claim; /* names, for messages */
	CallconvShape shape;
	int			nargs;			/* integer argument registers on entry */
	uint64_t	witness;		/* the function whose calls are checked */
	uint64_t	frame_callee;	/* given the same frame object, or 0 */
	int			frame_arg;		/* their argument that may point into our frame */
	int32_t		frame_size;		/* ... and the bytes they may write there */
	bool		arg_read[6];	/* entry argument register read before written */
	uint64_t	start;
	uint64_t	end;
	DecInsn    *insn;
	int			ninsn;
	int		   *idx_of;			/* byte offset -> instruction index or -1 */
	int			ncompare;
	CompareCall compare[MAX_COMPARE_CALLS];
	int			nbb;			/* RIP-relative references to BufferBlocks */
	int			nlbp;			/* ... to LocalBufferBlockPointers */
	int			nret;
	uint64_t	edx_first;		/* first instruction touching rdx */
	char		violation[256];
} Proof;

/* An abstract value of the given kind and taint, defined at def */
static AbsVal
av_make(uint8_t kind, uint8_t taint, uint64_t def)
{
	AbsVal		v;

	v.kind = kind;
	v.taint = taint;
	v.off = 0;
	v.def = def;
	return v;
}

/*
 * Merge of two abstract values where paths meet: the kind survives only if
 * both agree ("not an argument" and "caller's value" win), "must" taint
 * bits are intersected and "may" bits united.
 */
static AbsVal
av_join(AbsVal a, AbsVal b)
{
	AbsVal		r;

	r.taint = (uint8_t) ((a.taint & b.taint & T_MUST) | ((a.taint | b.taint) & ~T_MUST));
	r.off = 0;
	/* "maybe not an argument" and "maybe the caller's value" are sticky */
	if (a.kind == AV_NOARG || b.kind == AV_NOARG)
		r.kind = AV_NOARG;
	else if (a.kind == AV_ENTRY || b.kind == AV_ENTRY)
		r.kind = AV_ENTRY;
	else if (a.kind == b.kind && (a.kind != AV_STACK || a.off == b.off))
	{
		r.kind = a.kind;
		r.off = a.off;
	}
	else
		r.kind = AV_OTHER;
	/* a frame address on one path only: the result may be one */
	if (r.kind != AV_STACK && (a.kind == AV_STACK || b.kind == AV_STACK))
		r.taint |= T_FRAME;
	r.def = (a.def == b.def) ? a.def : DEF_MIXED;
	return r;
}

/* Might v be an address in our frame? */
static bool
may_be_frame(AbsVal v)
{
	return v.kind == AV_STACK || (v.taint & T_FRAME) != 0;
}

/* Are two abstract values the same (for the fixpoint test)? */
static bool
av_equal(AbsVal a, AbsVal b)
{
	return a.kind == b.kind && a.taint == b.taint && a.off == b.off && a.def == b.def;
}

/*
 * The state at the candidate's entry: rdi, rsi, rdx (and rcx where the
 * prototype has four) are the arguments, the rest of rcx/r8/r9 are not,
 * rsp is the entry stack pointer, everything else holds the caller's
 * values.
 */
static void
flow_entry_state(const Proof *pf, FlowState *st)
{
	int			i;

	memset(st, 0, sizeof(*st));
	st->reached = true;
	for (i = 0; i < 16; i++)
		st->reg[i] = av_make(AV_ENTRY, 0, 0);
	st->reg[R_RDI] = av_make(AV_ARG0, 0, 0);
	st->reg[R_RSI] = av_make(AV_ARG1, 0, 0);
	st->reg[R_RDX] = av_make(AV_ARG2, pf->shape == CC_PAGE_SEARCH ? T_BUF : 0, 0);
	st->reg[R_RCX] = av_make(pf->nargs > 3 ? AV_ARG3 : AV_NOARG, 0, 0);
	st->reg[R_R8] = av_make(pf->nargs > 4 ? AV_ARG4 : AV_NOARG, 0, 0);
	st->reg[R_R9] = av_make(AV_NOARG, 0, 0);
	st->reg[R_RSP] = av_make(AV_STACK, 0, 0);
}

/*
 * Frame addresses are tracked wherever they go (registers, our own stack
 * slots); where paths meet with a frame address on one side only, the
 * value is marked T_FRAME ("may be one") and still followed.  Where the
 * analysis forgets a slot that may hold one, any unknown value may be
 * that address: writes through unknown pointers and calls may then hit
 * the frame, which "escaped" records.
 */
static void
lose_value(FlowState *st, AbsVal v)
{
	if (may_be_frame(v))
		st->escaped = true;
}

/* Merge src into dst; true if dst changed */
static bool
flow_join(FlowState *dst, const FlowState *src)
{
	bool		changed = false;
	bool		escaped_before = dst->escaped;
	int			i;
	int			j;

	if (!dst->reached)
	{
		*dst = *src;
		return true;
	}
	if (src->escaped)
		dst->escaped = true;
	for (i = 0; i < 16; i++)
	{
		AbsVal		v = av_join(dst->reg[i], src->reg[i]);

		if (!av_equal(v, dst->reg[i]))
		{
			dst->reg[i] = v;
			changed = true;
		}
	}
	/* slots known on one side only are forgotten */
	for (j = 0; j < src->nslots; j++)
	{
		for (i = 0; i < dst->nslots; i++)
			if (src->slot[j].off == dst->slot[i].off &&
				src->slot[j].size == dst->slot[i].size)
				break;
		if (i == dst->nslots)
			lose_value(dst, src->slot[j].v);
	}
	for (i = 0; i < dst->nslots;)
	{
		for (j = 0; j < src->nslots; j++)
			if (src->slot[j].off == dst->slot[i].off &&
				src->slot[j].size == dst->slot[i].size)
				break;
		if (j == src->nslots)
		{
			lose_value(dst, dst->slot[i].v);
			dst->slot[i] = dst->slot[--dst->nslots];
			changed = true;
			continue;
		}
		{
			AbsVal		v = av_join(dst->slot[i].v, src->slot[j].v);

			if (!av_equal(v, dst->slot[i].v))
			{
				dst->slot[i].v = v;
				changed = true;
			}
		}
		i++;
	}
	if (dst->escaped && !escaped_before)
		changed = true;
	return changed;
}

/*
 * Store v into the stack slot at frame offset off: overlapping slots are
 * forgotten; a partial-width store keeps only taint, not identity.
 */
static void
slot_write(FlowState *st, int32_t off, int size, AbsVal v)
{
	int			i;

	for (i = 0; i < st->nslots;)
	{
		Slot	   *s = &st->slot[i];

		if (s->off < off + size && off < s->off + s->size)
		{
			/* a frame address partly overwritten is no longer followed */
			if (s->off < off || s->off + s->size > off + size)
				lose_value(st, s->v);
			*s = st->slot[--st->nslots];
		}
		else
			i++;
	}
	if (size != 8)
		v = av_make(AV_OTHER, v.taint, v.def);
	if (st->nslots == MAX_SLOTS)
	{
		lose_value(st, v);		/* forgetting a slot is safe, if noted */
		return;
	}
	st->slot[st->nslots].off = off;
	st->slot[st->nslots].size = (uint8_t) size;
	st->slot[st->nslots].v = v;
	st->nslots++;
}

/*
 * Load from the stack slot at frame offset off: an exact 8-byte slot gives
 * back its value; otherwise an unknown value carrying the taint of every
 * slot it overlaps.
 */
static AbsVal
slot_read(const FlowState *st, int32_t off, int size, uint64_t def)
{
	uint8_t		taint = 0;
	int			i;

	for (i = 0; i < st->nslots; i++)
	{
		const Slot *s = &st->slot[i];

		if (s->off == off && s->size == size && size == 8)
			return s->v;
		if (s->off < off + size && off < s->off + s->size)
			taint |= s->v.taint;
	}
	return av_make(AV_OTHER, taint, def);
}

/* Forget every stack slot (a store we cannot place may hit any) */
static void
drop_slots(FlowState *st)
{
	int			i;

	for (i = 0; i < st->nslots; i++)
		lose_value(st, st->slot[i].v);
	st->nslots = 0;
}

/* Forget the slots overlapping [lo, hi): something may have written them */
static void
drop_slot_range(FlowState *st, int32_t lo, int32_t hi)
{
	int			i;

	for (i = 0; i < st->nslots;)
	{
		Slot	   *s = &st->slot[i];

		if (s->off < hi && lo < s->off + s->size)
		{
			lose_value(st, s->v);
			*s = st->slot[--st->nslots];
		}
		else
			i++;
	}
}

/* Frame offset addressed by a memory operand, if it is a known slot */
static bool
mem_stack_off(const FlowState *st, const ZydisDecodedOperand *o, int32_t *off)
{
	int			b;

	if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || o->mem.index != ZYDIS_REGISTER_NONE)
		return false;
	if (o->mem.segment == ZYDIS_REGISTER_FS || o->mem.segment == ZYDIS_REGISTER_GS)
		return false;
	b = x86_gpr_index(o->mem.base);
	if (b < 0 || st->reg[b].kind != AV_STACK)
		return false;
	*off = st->reg[b].off + (int32_t) o->mem.disp.value;
	return true;
}

/* Might a memory operand address our frame in a way we cannot resolve? */
static bool
mem_maybe_stack(const FlowState *st, const ZydisDecodedOperand *o)
{
	int			b = x86_gpr_index(o->mem.base);
	int			x = x86_gpr_index(o->mem.index);

	if (o->mem.segment == ZYDIS_REGISTER_FS || o->mem.segment == ZYDIS_REGISTER_GS)
		return false;
	if (b == R_RSP || b == R_RBP || x == R_RSP || x == R_RBP)
		return true;
	if ((b >= 0 && may_be_frame(st->reg[b])) ||
		(x >= 0 && may_be_frame(st->reg[x])))
		return true;
	return st->escaped && b >= 0;
}

/* Record the first reason the proof fails, naming the instruction */
static void
proof_violation(Proof *pf, const DecInsn *di, const char *what)
{
	char		text[96];
	char		nb[64];

	if (pf->violation[0] != '\0')
		return;
	if (!x86_format(&pf->cx->fmt, &di->zi, di->op, di->addr, text, sizeof(text)))
		strcpy(text, "?");
	snprintf(pf->violation, sizeof(pf->violation), "%s at %s (%s)", what,
			 addr_name(pf->cx, di->addr, nb, sizeof(nb)), text);
}

/* Taint a RIP-relative reference carries, by what it points at */
static uint8_t
rip_taint(Proof *pf, uint64_t target)
{
	int			i;

	for (i = 0; i < pf->cx->nbb_refs; i++)
		if (pf->cx->bb_refs[i] == target)
			return T_BB | T_PAGEBASE;
	for (i = 0; i < pf->cx->nlbp_refs; i++)
		if (pf->cx->lbp_refs[i] == target)
			return T_LBP | T_PAGEBASE;
	return 0;
}

/*
 * Taint of reading general register g.  With check, reading a register that
 * is not an argument (r8, r9 and, for three arguments, rcx on entry) is a
 * violation, and reading an argument is noted (an argument never read may
 * have been removed by gcc).
 */
static uint8_t
read_reg_taint(Proof *pf, FlowState *st, int g, const DecInsn *di, bool check)
{
	uint8_t		kind = st->reg[g].kind;

	if (check && kind == AV_NOARG)
		proof_violation(pf, di, pf->nargs > 4 ?
						"reads a register that is not one of the five arguments" :
						pf->nargs > 3 ?
						"reads a register that is not one of the four arguments" :
						"reads a register that is not one of the three arguments");
	if (check && kind >= AV_ARG0 && kind <= AV_ARG4)
		pf->arg_read[kind - AV_ARG0] = true;
	return st->reg[g].taint;
}

/* Taint of a memory operand's address computation (and RIP target) */
static uint8_t
mem_addr_taint(Proof *pf, FlowState *st, const DecInsn *di, const ZydisDecodedOperand *o,
			   bool check)
{
	uint8_t		t = 0;
	int			b = x86_gpr_index(o->mem.base);
	int			x = x86_gpr_index(o->mem.index);

	if (o->mem.base == ZYDIS_REGISTER_RIP)
		t |= rip_taint(pf, di->addr + di->zi.length + (uint64_t) o->mem.disp.value);
	if (b >= 0)
		t |= read_reg_taint(pf, st, b, di, check);
	if (x >= 0)
		t |= read_reg_taint(pf, st, x, di, check);
	return t;
}

/*
 * Write register g.  A frame address in a register is followed like any
 * value: it escapes when passed to a call, stored outside the frame or
 * lost sight of (lose_value), not by being in a register.
 */
static void
set_reg(FlowState *st, int g, AbsVal v)
{
	st->reg[g] = v;
}

/* Effect of a pop of size bytes: read the slot at rsp, then move rsp */
static void
flow_pop(FlowState *st, const DecInsn *di, int size, AbsVal *out)
{
	AbsVal	   *rsp = &st->reg[R_RSP];

	if (rsp->kind == AV_STACK)
	{
		*out = slot_read(st, rsp->off, size, di->addr);
		rsp->off += size;
	}
	else
		*out = av_make(AV_OTHER, 0, di->addr);
	out->def = di->addr;
}

/* Abstract effect of one instruction.  check: record proof obligations. */
static void
flow_step(Proof *pf, FlowState *st, const DecInsn *di, bool check)
{
	const ZydisDecodedInstruction *zi = &di->zi;
	const ZydisDecodedOperand *op = di->op;
	int			nvis = zi->operand_count_visible;
	int			d0 = nvis >= 1 ? (op[0].type == ZYDIS_OPERAND_TYPE_REGISTER ? x86_gpr_index(op[0].reg.value) : -1) : -1;
	int			s1 = nvis >= 2 ? (op[1].type == ZYDIS_OPERAND_TYPE_REGISTER ? x86_gpr_index(op[1].reg.value) : -1) : -1;
	uint8_t		rtaint = 0;
	int			i;
	int32_t		off;

	switch (zi->mnemonic)
	{
		case ZYDIS_MNEMONIC_NOP:
		case ZYDIS_MNEMONIC_ENDBR64:
			return;

		case ZYDIS_MNEMONIC_PUSH:
			{
				AbsVal		v;
				int			size = zi->operand_width / 8;

				if (d0 >= 0)
					v = st->reg[d0];	/* pushing is not a use: no NOARG check */
				else if (op[0].type == ZYDIS_OPERAND_TYPE_MEMORY)
				{
					v = av_make(AV_OTHER, mem_addr_taint(pf, st, di, &op[0], check), di->addr);
					if (mem_stack_off(st, &op[0], &off))
						v.taint |= slot_read(st, off, size, di->addr).taint;
				}
				else
					v = av_make(AV_OTHER, 0, di->addr);
				if (st->reg[R_RSP].kind == AV_STACK)
				{
					st->reg[R_RSP].off -= size;
					slot_write(st, st->reg[R_RSP].off, size, v);
				}
				else
					drop_slots(st);
				return;
			}

		case ZYDIS_MNEMONIC_POP:
			{
				AbsVal		v;
				int			size = zi->operand_width / 8;

				flow_pop(st, di, size, &v);
				if (d0 >= 0)
					set_reg(st, d0, v);
				else if (op[0].type == ZYDIS_OPERAND_TYPE_MEMORY)
				{
					if (mem_stack_off(st, &op[0], &off))
						slot_write(st, off, size, v);
					else if (mem_maybe_stack(st, &op[0]))
						drop_slots(st);
				}
				return;
			}

		case ZYDIS_MNEMONIC_LEAVE:
			{
				AbsVal		v;

				st->reg[R_RSP] = st->reg[R_RBP];
				flow_pop(st, di, 8, &v);
				st->reg[R_RBP] = v;
				return;
			}

		case ZYDIS_MNEMONIC_CALL:
		case ZYDIS_MNEMONIC_JMP:
			/* the callee's frame overwrites anything below rsp (red zone) */
			if (zi->mnemonic == ZYDIS_MNEMONIC_CALL && st->reg[R_RSP].kind == AV_STACK)
			{
				for (i = 0; i < st->nslots;)
				{
					if (st->slot[i].off < st->reg[R_RSP].off)
						st->slot[i] = st->slot[--st->nslots];
					else
						i++;
				}
			}
			if (zi->mnemonic == ZYDIS_MNEMONIC_CALL)
			{
				static const int argregs[] = {R_RDI, R_RSI, R_RDX, R_RCX,
				R_R8, R_R9};
				bool		witness = di->has_target && di->target == pf->witness;
				bool		bounded = witness ||
					(di->has_target && pf->frame_callee != 0 &&
					 di->target == pf->frame_callee);

				/*
				 * A frame address passed in an argument register escapes,
				 * unless it is the argument by which the witness (or its
				 * companion) receives an object of ours (the witness's
				 * continuescan or pstate): they write only that object.
				 */
				for (i = 0; i < 6; i++)
				{
					AbsVal		a = st->reg[argregs[i]];

					if (!may_be_frame(a))
						continue;
					if (a.kind == AV_STACK && bounded && i == pf->frame_arg && pf->frame_size > 0)
						drop_slot_range(st, a.off, a.off + pf->frame_size);
					else
						st->escaped = true;
				}
				if (witness && check)
				{
					int			k;

					for (k = 0; k < pf->ncompare; k++)
						if (pf->compare[k].site == di->addr)
							break;
					if (k < pf->ncompare)
					{
						pf->compare[k].checked = true;
						pf->compare[k].rdi = st->reg[R_RDI];
						pf->compare[k].rsi = st->reg[R_RSI];
						pf->compare[k].rdx = st->reg[R_RDX];
					}
				}

				/*
				 * Any callee may write anything once a frame address
				 * escaped.  Otherwise a callee writes no slot of ours
				 * but its own stack arguments, and a caller never reads
				 * those back after the call: C does not let it see what
				 * the callee did to its parameters.
				 */
				if (st->escaped || st->reg[R_RSP].kind != AV_STACK)
					drop_slots(st);
			}
			if (zi->mnemonic == ZYDIS_MNEMONIC_CALL)
			{
				static const int clobbered[] = {R_RAX, R_RCX, R_RDX, R_RSI, R_RDI,
				R_R8, R_R9, R_R10, R_R11};

				for (i = 0; i < (int) (sizeof(clobbered) / sizeof(clobbered[0])); i++)
					st->reg[clobbered[i]] = av_make(AV_OTHER, 0, di->addr);
			}
			return;

		case ZYDIS_MNEMONIC_RET:
			if (check)
			{
				pf->nret++;
				if (st->reg[R_RSP].kind != AV_STACK || st->reg[R_RSP].off != 0)
					proof_violation(pf, di, "returns with a stack pointer we cannot account for");
				else if (st->reg[R_RAX].kind == AV_ENTRY)
					proof_violation(pf, di, "may return without setting eax");
			}
			return;

		case ZYDIS_MNEMONIC_MOV:
			if (nvis == 2 && d0 >= 0 && s1 >= 0 && op[0].size == 64 && op[1].size == 64)
			{
				AbsVal		v = st->reg[s1];

				read_reg_taint(pf, st, s1, di, check);
				v.def = di->addr;
				set_reg(st, d0, v);
				return;
			}
			if (nvis == 2 && d0 >= 0 && op[0].size == 64 &&
				op[1].type == ZYDIS_OPERAND_TYPE_MEMORY && op[1].size == 64 &&
				mem_stack_off(st, &op[1], &off))
			{
				AbsVal		v = slot_read(st, off, 8, di->addr);

				if (check && v.kind == AV_NOARG)
					proof_violation(pf, di, "reads a register that is not an argument");
				v.def = di->addr;
				set_reg(st, d0, v);
				return;
			}
			if (nvis == 2 && s1 >= 0 && op[1].size == 64 &&
				op[0].type == ZYDIS_OPERAND_TYPE_MEMORY && op[0].size == 64 &&
				mem_stack_off(st, &op[0], &off))
			{
				AbsVal		v = st->reg[s1];

				read_reg_taint(pf, st, s1, di, check);
				slot_write(st, off, 8, v);
				return;
			}
			break;

		case ZYDIS_MNEMONIC_LEA:
			if (nvis == 2 && d0 >= 0 && op[0].size == 64 &&
				mem_stack_off(st, &op[1], &off))
			{
				AbsVal		v = av_make(AV_STACK, 0, di->addr);

				v.off = off;
				set_reg(st, d0, v);
				return;
			}
			break;

		case ZYDIS_MNEMONIC_ADD:
		case ZYDIS_MNEMONIC_SUB:
			if (nvis == 2 && d0 >= 0 && op[0].size == 64 &&
				st->reg[d0].kind == AV_STACK &&
				op[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			{
				int64_t		imm = op[1].imm.value.s;

				if (zi->mnemonic == ZYDIS_MNEMONIC_SUB)
					imm = -imm;
				st->reg[d0].off += (int32_t) imm;
				st->reg[d0].def = di->addr;
				return;
			}
			/* sub r, r: zeroing idiom */
			if (zi->mnemonic == ZYDIS_MNEMONIC_SUB && nvis == 2 && d0 >= 0 &&
				s1 >= 0 && op[0].reg.value == op[1].reg.value)
			{
				set_reg(st, d0, av_make(AV_OTHER, 0, di->addr));
				return;
			}
			break;

		case ZYDIS_MNEMONIC_XOR:
		case ZYDIS_MNEMONIC_SBB:
			/* xor r, r / sbb r, r: a constant or the carry flag only */
			if (nvis == 2 && d0 >= 0 && s1 >= 0 && op[0].reg.value == op[1].reg.value)
			{
				set_reg(st, d0, av_make(AV_OTHER, 0, di->addr));
				return;
			}
			break;

		default:
			break;
	}

	/*
	 * Generic instruction: everything written derives from everything read.
	 * A frame address that flows anywhere but rsp/rbp may be used to write
	 * the frame behind our back: note that it escaped.
	 */
	for (i = 0; i < zi->operand_count; i++)
	{
		const ZydisDecodedOperand *o = &op[i];

		if (o->type == ZYDIS_OPERAND_TYPE_REGISTER)
		{
			int			g = x86_gpr_index(o->reg.value);

			if (g >= 0 && (o->actions & ZYDIS_OPERAND_ACTION_MASK_READ))
			{
				rtaint |= read_reg_taint(pf, st, g, di, check);
				if (may_be_frame(st->reg[g]))
				{
					int			k;

					for (k = 0; k < zi->operand_count; k++)
					{
						int			w = op[k].type == ZYDIS_OPERAND_TYPE_REGISTER ?
							x86_gpr_index(op[k].reg.value) : -1;

						if ((op[k].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
							(op[k].type == ZYDIS_OPERAND_TYPE_MEMORY ||
							 (w >= 0 && w != R_RSP && w != R_RBP)))
							st->escaped = true;
					}
				}
			}
		}
		else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY)
		{
			rtaint |= mem_addr_taint(pf, st, di, o, check);
			if (o->mem.type == ZYDIS_MEMOP_TYPE_MEM &&
				(o->actions & ZYDIS_OPERAND_ACTION_MASK_READ) &&
				mem_stack_off(st, o, &off))
				rtaint |= slot_read(st, off, o->size / 8 ? o->size / 8 : 1, di->addr).taint;
		}
	}
	for (i = 0; i < zi->operand_count; i++)
	{
		const ZydisDecodedOperand *o = &op[i];

		if (!(o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (o->type == ZYDIS_OPERAND_TYPE_REGISTER)
		{
			int			g = x86_gpr_index(o->reg.value);
			uint8_t		t = rtaint;

			if (g < 0)
				continue;
			/* 8/16-bit writes keep the rest of the register */
			if (o->size < 32)
				t |= st->reg[g].taint;
			st->reg[g] = av_make(AV_OTHER, t, di->addr);
		}
		else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.type == ZYDIS_MEMOP_TYPE_MEM)
		{
			/* rep stos/movs write a whole range, not one operand's worth */
			if (zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
								  ZYDIS_ATTRIB_HAS_REPNE))
			{
				if (mem_maybe_stack(st, o) || st->escaped)
					drop_slots(st);
			}
			else if (mem_stack_off(st, o, &off))
				slot_write(st, off, o->size / 8 ? o->size / 8 : 1,
						   av_make(AV_OTHER, rtaint, di->addr));
			else if (mem_maybe_stack(st, o))
				drop_slots(st);
		}
	}
}

/* An instruction of the candidate as text ("entry", "several paths") */
static char *
insn_text(Proof *pf, uint64_t addr, char *buf, size_t len)
{
	int			i;

	if (addr == 0)
		snprintf(buf, len, "entry");
	else if (addr == DEF_MIXED)
		snprintf(buf, len, "several paths");
	else if (addr < pf->start || addr >= pf->end || (i = pf->idx_of[addr - pf->start]) < 0 ||
			 !x86_format(&pf->cx->fmt, &pf->insn[i].zi, pf->insn[i].op, addr, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/*
 * The entry edx must be read, as a 32-bit value, before anything writes
 * rdx: otherwise the third argument is not our 32-bit Buffer (or unused).
 * We look at the straight-line entry code only and refuse otherwise.
 */
static bool
check_edx_first_use(Proof *pf)
{
	int			i;

	for (i = 0; i < pf->ninsn; i++)
	{
		const DecInsn *di = &pf->insn[i];
		int			k;

		/* xor edx, edx and friends read nothing: they are writes */
		if ((di->zi.mnemonic == ZYDIS_MNEMONIC_XOR || di->zi.mnemonic == ZYDIS_MNEMONIC_SUB ||
			 di->zi.mnemonic == ZYDIS_MNEMONIC_SBB) &&
			di->zi.operand_count_visible == 2 &&
			di->op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			di->op[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			di->op[0].reg.value == di->op[1].reg.value &&
			x86_gpr_index(di->op[0].reg.value) == R_RDX)
		{
			pf->edx_first = di->addr;
			proof_violation(pf, di, "clears rdx before reading it: the third argument is unused");
			return false;
		}

		for (k = 0; k < di->zi.operand_count; k++)
		{
			const ZydisDecodedOperand *o = &di->op[k];

			if (o->type == ZYDIS_OPERAND_TYPE_REGISTER && x86_gpr_index(o->reg.value) == R_RDX)
			{
				pf->edx_first = di->addr;
				if (!(o->actions & ZYDIS_OPERAND_ACTION_MASK_READ))
				{
					proof_violation(pf, di, "writes rdx before reading it: the third argument is unused");
					return false;
				}
				if (o->size != 32)
				{
					proof_violation(pf, di, "reads the third argument with a width other than 32 bits");
					return false;
				}
				return true;
			}
			if (o->type == ZYDIS_OPERAND_TYPE_MEMORY &&
				(x86_gpr_index(o->mem.base) == R_RDX || x86_gpr_index(o->mem.index) == R_RDX))
			{
				/* lea r32, [rdx+k]: only the low 32 bits matter */
				pf->edx_first = di->addr;
				if (o->mem.type == ZYDIS_MEMOP_TYPE_AGEN && di->op[0].size <= 32)
					return true;
				proof_violation(pf, di, "uses the third argument as a 64-bit address");
				return false;
			}
		}
		if (x86_is_uncond_end(&di->zi) || di->zi.meta.category == ZYDIS_CATEGORY_COND_BR ||
			di->zi.mnemonic == ZYDIS_MNEMONIC_CALL)
			break;
	}
	if (i < pf->ninsn)
		proof_violation(pf, &pf->insn[i], "does not read edx before its first branch");
	else
		snprintf(pf->violation, sizeof(pf->violation), "never reads edx");
	return false;
}

/* The candidate's control-flow graph: basic blocks over pf->insn */
typedef struct Blocks
{
	int			nblocks;
	int		   *block_of;		/* instruction index -> block */
	int		   *bstart;			/* block -> first instruction; [nblocks] = ninsn */
	FlowState  *in;				/* block -> state on entry */
} Blocks;

/*
 * Step 1: decode the whole body into pf->insn, noting the references to
 * BufferBlocks/LocalBufferBlockPointers and the calls to the witness.
 */
static bool
proof_decode(Proof *pf, const uint8_t *code)
{
	LocCtx	   *cx = pf->cx;
	uint64_t	start = pf->start;
	uint64_t	end = pf->end;
	uint64_t	addr;
	char		nb[64];

	for (addr = start; addr < end;)
	{
		DecInsn    *di = &pf->insn[pf->ninsn];
		int			k;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&cx->dec, code + (addr - start),
												 end - addr, &di->zi, di->op)))
			return loc_fail(cx, "cannot decode candidate %s at %s",
							addr_name(cx, start, nb, sizeof(nb)),
							addr_name(cx, addr, nb, sizeof(nb)));
		di->addr = addr;
		di->has_target = x86_rel_target(&di->zi, addr, &di->target);
		pf->idx_of[addr - start] = pf->ninsn;

		for (k = 0; k < di->zi.operand_count; k++)
		{
			const ZydisDecodedOperand *o = &di->op[k];

			if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.base == ZYDIS_REGISTER_RIP)
			{
				uint8_t		t = rip_taint(pf, addr + di->zi.length + (uint64_t) o->mem.disp.value);

				if (t & T_BB)
					pf->nbb++;
				if (t & T_LBP)
					pf->nlbp++;
			}
		}
		if (di->has_target && di->target == pf->witness &&
			(di->zi.mnemonic == ZYDIS_MNEMONIC_CALL || di->zi.mnemonic == ZYDIS_MNEMONIC_JMP))
		{
			if (pf->ncompare == MAX_COMPARE_CALLS)
				return loc_fail(cx, "candidate calls %s too often",
								pf->claim->witness_name);
			pf->compare[pf->ncompare++].site = addr;
		}
		pf->ninsn++;
		addr += di->zi.length;
	}
	return true;
}

/*
 * Step 2: split the decoded body into basic blocks.  Control flow must be
 * followable: no indirect jump, no branch into the middle of an
 * instruction.  Allocates bl's arrays (freed by the caller).
 */
static bool
proof_blocks(Proof *pf, Blocks *bl)
{
	LocCtx	   *cx = pf->cx;
	uint64_t	start = pf->start;
	uint64_t	end = pf->end;
	bool	   *leader;
	bool		ok = false;
	int			i;
	char		nb[64];

	leader = calloc(pf->ninsn + 1, sizeof(bool));
	if (leader == NULL)
		return loc_fail(cx, "out of memory");
	leader[0] = true;
	for (i = 0; i < pf->ninsn; i++)
	{
		const DecInsn *di = &pf->insn[i];
		bool		branch = di->zi.meta.category == ZYDIS_CATEGORY_COND_BR ||
			di->zi.mnemonic == ZYDIS_MNEMONIC_JMP;

		if (di->zi.mnemonic == ZYDIS_MNEMONIC_JMP && !di->has_target)
		{
			loc_fail(cx, "candidate %s has an indirect jump at %s: control flow cannot be followed",
					 addr_name(cx, start, nb, sizeof(nb)),
					 addr_name(cx, di->addr, nb, sizeof(nb)));
			goto done;
		}
		if (branch && di->target >= start && di->target < end)
		{
			if (pf->idx_of[di->target - start] < 0)
			{
				loc_fail(cx, "candidate has a branch at %s into the middle of an instruction",
						 addr_name(cx, di->addr, nb, sizeof(nb)));
				goto done;
			}
			leader[pf->idx_of[di->target - start]] = true;
		}
		if ((branch || x86_is_uncond_end(&di->zi)) && i + 1 < pf->ninsn)
			leader[i + 1] = true;
	}
	bl->block_of = malloc(sizeof(int) * pf->ninsn);
	bl->bstart = malloc(sizeof(int) * (pf->ninsn + 1));
	if (bl->block_of == NULL || bl->bstart == NULL)
	{
		loc_fail(cx, "out of memory");
		goto done;
	}
	for (i = 0; i < pf->ninsn; i++)
	{
		if (leader[i])
			bl->bstart[bl->nblocks++] = i;
		bl->block_of[i] = bl->nblocks - 1;
	}
	bl->bstart[bl->nblocks] = pf->ninsn;
	ok = true;

done:
	free(leader);
	return ok;
}

/*
 * Step 3: iterate the abstract states at block entries (bl->in) to a
 * fixpoint, from the entry state, with a worklist.
 */
static bool
proof_fixpoint(Proof *pf, Blocks *bl)
{
	FlowState  *in;
	int		   *work;
	bool	   *queued;
	int			nwork = 0;
	int			visits = 0;
	bool		ok = false;

	bl->in = in = calloc(bl->nblocks, sizeof(FlowState));
	work = malloc(sizeof(int) * bl->nblocks);
	queued = calloc(bl->nblocks, sizeof(bool));
	if (in == NULL || work == NULL || queued == NULL)
	{
		loc_fail(pf->cx, "out of memory");
		goto done;
	}

	flow_entry_state(pf, &in[0]);
	work[nwork++] = 0;
	queued[0] = true;
	while (nwork > 0)
	{
		int			b = work[--nwork];
		FlowState	st = in[b];
		int			last = bl->bstart[b + 1] - 1;
		const DecInsn *di;
		int			succ[2];
		int			nsucc = 0;
		int			i;
		int			k;

		queued[b] = false;
		if (++visits > 100 * bl->nblocks + 1000)
		{
			loc_fail(pf->cx, "data-flow analysis of the candidate does not converge");
			goto done;
		}
		for (i = bl->bstart[b]; i <= last; i++)
			flow_step(pf, &st, &pf->insn[i], false);
		di = &pf->insn[last];
		if (di->zi.meta.category == ZYDIS_CATEGORY_COND_BR || di->zi.mnemonic == ZYDIS_MNEMONIC_JMP)
		{
			if (di->target >= pf->start && di->target < pf->end)
				succ[nsucc++] = bl->block_of[pf->idx_of[di->target - pf->start]];
			if (di->zi.mnemonic != ZYDIS_MNEMONIC_JMP && last + 1 < pf->ninsn)
				succ[nsucc++] = bl->block_of[last + 1];
		}
		else if (!x86_is_uncond_end(&di->zi) && last + 1 < pf->ninsn)
			succ[nsucc++] = bl->block_of[last + 1];
		for (k = 0; k < nsucc; k++)
		{
			if (flow_join(&in[succ[k]], &st) && !queued[succ[k]])
			{
				queued[succ[k]] = true;
				work[nwork++] = succ[k];
			}
		}
	}
	ok = true;

done:
	free(work);
	free(queued);
	return ok;
}

/*
 * Step 4: one more pass over the final states, recording the obligations
 * (what each call to the witness receives, violations), then the check of
 * how the entry edx is first used.
 */
static void
proof_obligations(Proof *pf, const Blocks *bl)
{
	int			i;

	for (i = 0; i < bl->nblocks; i++)
	{
		FlowState	st = bl->in[i];
		int			k;

		if (!st.reached)
			continue;
		for (k = bl->bstart[i]; k < bl->bstart[i + 1]; k++)
			flow_step(pf, &st, &pf->insn[k], true);
	}

	if (pf->violation[0] == '\0' && pf->shape == CC_PAGE_SEARCH)
		check_edx_first_use(pf);
}

/*
 * Judge the recorded obligations: any violation, missing Buffer evidence,
 * no return, or a call to the witness whose arguments are not shown to be
 * (entry rdi, entry rsi, page of the entry Buffer) fails the proof.
 */
static bool
proof_verdict(Proof *pf)
{
	LocCtx	   *cx = pf->cx;
	const CallconvClaim *cl = pf->claim;
	uint64_t	start = pf->start;
	int			i;
	char		nb[64];

	if (cx->fault == BTJIT_LOCATE_FAULT_NO_CALLCONV)
		return loc_fail(cx, "calling-convention proof of %s failed on purpose",
						addr_name(cx, start, nb, sizeof(nb)));
	if (pf->violation[0] != '\0')
		return loc_fail(cx, "calling convention of candidate %s not proven: it %s",
						addr_name(cx, start, nb, sizeof(nb)), pf->violation);
	if (pf->nbb == 0 || pf->nlbp == 0)
		return loc_fail(cx, "candidate %s does not reference both BufferBlocks and LocalBufferBlockPointers (%d, %d references): its third argument is not shown to be a Buffer",
						addr_name(cx, start, nb, sizeof(nb)), pf->nbb, pf->nlbp);
	if (pf->nret == 0)
		return loc_fail(cx, "candidate %s never returns", addr_name(cx, start, nb, sizeof(nb)));
	for (i = 0; i < pf->ncompare; i++)
	{
		CompareCall *c = &pf->compare[i];

		if (!c->checked)
			return loc_fail(cx, "the call to %s at %s is not reachable in our analysis",
							cl->witness_name,
							addr_name(cx, c->site, nb, sizeof(nb)));
		if (c->rdi.kind != AV_ARG0)
			return loc_fail(cx, "at the call to %s at %s, rdi is not shown to be the entry rdi (%s)",
							cl->witness_name,
							addr_name(cx, c->site, nb, sizeof(nb)),
							cl->arg_types[0]);
		if (c->rsi.kind != AV_ARG1)
			return loc_fail(cx, "at the call to %s at %s, rsi is not shown to be the entry rsi (%s)",
							cl->witness_name,
							addr_name(cx, c->site, nb, sizeof(nb)),
							cl->arg_types[1]);
		if ((c->rdx.taint & T_MUST) != T_MUST)
			return loc_fail(cx, "at the call to %s at %s, rdx is not shown to be the page of the entry Buffer (on some path it does not derive from %s)",
							cl->witness_name,
							addr_name(cx, c->site, nb, sizeof(nb)),
							!(c->rdx.taint & T_BUF) && !(c->rdx.taint & T_PAGEBASE) ?
							"the entry edx nor from BufferBlocks/LocalBufferBlockPointers" :
							!(c->rdx.taint & T_BUF) ? "the entry edx" :
							"BufferBlocks/LocalBufferBlockPointers");
	}
	if (pf->ncompare == 0)
		return loc_fail(cx, "candidate %s does not call %s",
						addr_name(cx, start, nb, sizeof(nb)), cl->witness_name);
	return true;
}

/* What the proof showed, in one line, for the evidence text */
static void
proof_describe(Proof *pf, char *desc, size_t desclen)
{
	LocCtx	   *cx = pf->cx;
	CompareCall *c = &pf->compare[0];
	char		nb[64];
	char		t1[80];
	char		t2[80];
	char		t3[80];
	char		t4[80];

	snprintf(desc, desclen,
			 "%d call%s to %s (first at %s): rdi=entry rdi [%s], rsi=entry rsi [%s], rdx=page from Buffer edx [first use: %s] via %s%s%s [%s]",
			 pf->ncompare, pf->ncompare > 1 ? "s" : "", pf->claim->witness_name,
			 addr_name(cx, c->site, nb, sizeof(nb)),
			 insn_text(pf, c->rdi.def, t1, sizeof(t1)),
			 insn_text(pf, c->rsi.def, t2, sizeof(t2)),
			 insn_text(pf, pf->edx_first, t3, sizeof(t3)),
			 (c->rdx.taint & T_BB) ? "BufferBlocks" : "",
			 ((c->rdx.taint & T_BB) && (c->rdx.taint & T_LBP)) ? "|" : "",
			 (c->rdx.taint & T_LBP) ? "LocalBufferBlockPointers" : "",
			 insn_text(pf, c->rdx.def, t4, sizeof(t4)));
}

/*
 * Steps 1-4 over the function [start, end) for the shape pf was set up
 * for; the verdict is the caller's.  False (reason in cx->why) only if the
 * analysis itself could not run.  The caller frees pf->insn and pf->idx_of
 * with proof_free.
 */
static bool
proof_run(Proof *pf, Blocks *bl)
{
	LocCtx	   *cx = pf->cx;
	const uint8_t *code;
	size_t		size = pf->end - pf->start;
	int			i;
	char		nb[64];

	if (size == 0 || size > MAX_CAND_BYTES)
		return loc_fail(cx, "candidate %s is %zu bytes long: not plausibly %s",
						addr_name(cx, pf->start, nb, sizeof(nb)), size,
						pf->claim->subject);
	code = code_at(&cx->img, pf->start, size);
	if (code == NULL)
		return loc_fail(cx, "candidate %s is not in an executable segment",
						addr_name(cx, pf->start, nb, sizeof(nb)));

	pf->insn = malloc(sizeof(DecInsn) * size);
	pf->idx_of = malloc(sizeof(int) * size);
	if (pf->insn == NULL || pf->idx_of == NULL)
		return loc_fail(cx, "out of memory");
	for (i = 0; i < (int) size; i++)
		pf->idx_of[i] = -1;

	if (!proof_decode(pf, code) ||
		!proof_blocks(pf, bl) ||
		!proof_fixpoint(pf, bl))
		return false;
	proof_obligations(pf, bl);
	return true;
}

static void
proof_free(Proof *pf, Blocks *bl)
{
	free(pf->insn);
	free(pf->idx_of);
	free(bl->block_of);
	free(bl->bstart);
	free(bl->in);
}

/*
 * Judge a CC_FRAME_WITNESS proof.  gcc changes a static function's
 * signature only by removing arguments (IPA-CP, IPA-SRA's dead arguments)
 * or by replacing a pointer argument with what is read through it
 * (IPA-SRA).  So three facts pin the signature down to the prototype's:
 *	- at every call to the witness the first argument is the entry rdi,
 *	  unchanged: our first argument is the witness's, whole;
 *	- every argument register of the prototype is read before anything
 *	  writes it: none was removed (gcc never reads an argument register
 *	  the function does not take);
 *	- no register past them is read before written: none was added.
 */
static bool
frame_witness_verdict(Proof *pf)
{
	LocCtx	   *cx = pf->cx;
	const CallconvClaim *cl = pf->claim;
	static const char *const argname[] = {"rdi", "rsi", "rdx", "rcx", "r8"};
	int			i;
	char		nb[64];

	if (cx->fault == BTJIT_LOCATE_FAULT_NO_CALLCONV)
		return loc_fail(cx, "calling-convention proof of %s failed on purpose",
						addr_name(cx, pf->start, nb, sizeof(nb)));
	if (pf->violation[0] != '\0')
		return loc_fail(cx, "calling convention of %s candidate %s not proven: it %s",
						cl->subject, addr_name(cx, pf->start, nb, sizeof(nb)),
						pf->violation);
	if (pf->nret == 0)
		return loc_fail(cx, "candidate %s never returns",
						addr_name(cx, pf->start, nb, sizeof(nb)));
	if (pf->ncompare == 0)
		return loc_fail(cx, "candidate %s does not call %s",
						addr_name(cx, pf->start, nb, sizeof(nb)),
						cl->witness_name);
	for (i = 0; i < pf->ncompare; i++)
	{
		CompareCall *c = &pf->compare[i];

		if (!c->checked)
			return loc_fail(cx, "the call to %s at %s is not reachable in our analysis",
							cl->witness_name,
							addr_name(cx, c->site, nb, sizeof(nb)));
		if (c->rdi.kind != AV_ARG0)
			return loc_fail(cx, "at the call to %s at %s, rdi is not shown to be the entry rdi (%s)",
							cl->witness_name,
							addr_name(cx, c->site, nb, sizeof(nb)),
							cl->arg_types[0]);
	}
	for (i = 1; i < pf->nargs; i++)
		if (!pf->arg_read[i])
			return loc_fail(cx, "candidate %s never reads its entry %s: argument %d of %d is not shown to be there",
							addr_name(cx, pf->start, nb, sizeof(nb)),
							argname[i], i + 1, pf->nargs);
	return true;
}

/* What a CC_FRAME_WITNESS proof showed, for the evidence text */
static void
frame_witness_describe(Proof *pf, char *desc, size_t desclen)
{
	char		nb[64];
	char		t1[80];

	snprintf(desc, desclen,
			 "%d call%s to %s (first at %s) with rdi=entry rdi [%s]; reads entry rsi, rdx%s before writing them, never %s",
			 pf->ncompare, pf->ncompare > 1 ? "s" : "",
			 pf->claim->witness_name,
			 addr_name(pf->cx, pf->compare[0].site, nb, sizeof(nb)),
			 insn_text(pf, pf->compare[0].rdi.def, t1, sizeof(t1)),
			 pf->nargs > 4 ? ", rcx, r8" : pf->nargs > 3 ? ", rcx" : "",
			 pf->nargs > 4 ? "r9" : pf->nargs > 3 ? "r8, r9" : "rcx, r8, r9");
}

/*
 * Prove that the function [start, end) has the calling convention the
 * claim describes: decode it, find its basic blocks, run the data flow to
 * a fixpoint, check the obligations.  On success fills a short description
 * of what was shown into desc; on failure the reason is in cx->why.
 */
bool
prove_callconv(LocCtx *cx, uint64_t start, uint64_t end,
			   const CallconvClaim *claim, char *desc, size_t desclen)
{
	Proof		pf;
	Blocks		bl;
	bool		ok;
	bool		page_search = claim->shape == CC_PAGE_SEARCH;

	memset(&pf, 0, sizeof(pf));
	memset(&bl, 0, sizeof(bl));
	pf.cx = cx;
	pf.claim = claim;
	pf.shape = claim->shape;
	pf.nargs = page_search ? 3 : claim->nargs;
	pf.witness = claim->witness;
	pf.frame_callee = page_search ? 0 : claim->frame_callee;
	pf.frame_arg = page_search ? -1 : claim->frame_arg;
	pf.frame_size = page_search ? 0 : claim->frame_size;
	pf.start = start;
	pf.end = end;

	if (!page_search && (claim->nargs < 3 || claim->nargs > 5))
		return loc_fail(cx, "%s is described with %d arguments",
						claim->subject, claim->nargs);
	if (page_search)
		ok = proof_run(&pf, &bl) && proof_verdict(&pf);
	else
		ok = proof_run(&pf, &bl) && frame_witness_verdict(&pf);
	if (ok && page_search)
		proof_describe(&pf, desc, desclen);
	else if (ok)
		frame_witness_describe(&pf, desc, desclen);
	proof_free(&pf, &bl);
	return ok;
}
