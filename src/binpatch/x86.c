/*-------------------------------------------------------------------------
 *
 * x86.c
 *	  x86-64 instruction helpers shared by the locator and the redirector:
 *	  Zydis decoder and formatter set-up, the targets of relative branches
 *	  and RIP-relative operands (read from the raw encoding, so that they
 *	  are exact whatever Zydis makes of the operand), and the one encoder
 *	  of a "jmp rel32" that redirect.c writes.
 *
 * Plain C over Zydis, no PostgreSQL headers (see binpatch.h).
 *
 * src/x86.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "x86.h"

/* Index (R_RAX..R_R15) of the 64-bit register enclosing r, or -1 */
int
x86_gpr_index(ZydisRegister r)
{
	ZydisRegister big;

	if (r == ZYDIS_REGISTER_NONE)
		return -1;
	big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	if (big >= ZYDIS_REGISTER_RAX && big <= ZYDIS_REGISTER_R15)
		return (int) (big - ZYDIS_REGISTER_RAX);
	return -1;
}

/*
 * Set up a 64-bit decoder and an Intel-syntax formatter (for messages).
 * Returns false if Zydis refuses either.
 */
bool
x86_decoder_init(ZydisDecoder *dec, ZydisFormatter *fmt)
{
	if (ZYAN_FAILED(ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return false;
	if (ZYAN_FAILED(ZydisFormatterInit(fmt, ZYDIS_FORMATTER_STYLE_INTEL)))
		return false;
	return true;
}

/*
 * Decode the instruction at code (at most len bytes), without operands:
 * enough for its length, mnemonic and raw fields.  False if undecodable.
 */
bool
x86_decode(const ZydisDecoder *dec, const uint8_t *code, size_t len,
		   ZydisDecodedInstruction *zi)
{
	return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, NULL, code, len, zi));
}

/*
 * Format a decoded instruction at runtime address addr as text, for
 * messages and the status row.  Returns false if Zydis cannot.
 */
bool
x86_format(const ZydisFormatter *fmt, const ZydisDecodedInstruction *zi,
		   const ZydisDecodedOperand *op, uint64_t addr, char *buf, size_t len)
{
	return ZYAN_SUCCESS(ZydisFormatterFormatInstruction(fmt, zi, op,
														zi->operand_count_visible,
														buf, len, addr, NULL));
}

/* Index (0 or 1) of the relative immediate of a direct branch or call */
bool
x86_rel_imm(const ZydisDecodedInstruction *zi, int *k)
{
	int			i;

	for (i = 0; i < 2; i++)
	{
		if (zi->raw.imm[i].size != 0 && zi->raw.imm[i].is_relative)
		{
			*k = i;
			return true;
		}
	}
	return false;
}

/*
 * Target of a direct (relative) branch or call at addr, from the raw
 * immediate.  Returns false if the instruction has no relative immediate.
 */
bool
x86_rel_target(const ZydisDecodedInstruction *zi, uint64_t addr, uint64_t *target)
{
	int			k;

	if (!x86_rel_imm(zi, &k))
		return false;
	*target = addr + zi->length + (uint64_t) zi->raw.imm[k].value.s;
	return true;
}

/* Does the instruction have a RIP-relative (or EIP-relative) memory operand? */
bool
x86_is_riprel(const ZydisDecodedInstruction *zi)
{
	return (zi->attributes & ZYDIS_ATTRIB_HAS_MODRM) &&
		zi->raw.modrm.mod == 0 && zi->raw.modrm.rm == 5;
}

/* Target of a RIP-relative memory operand, from the raw ModRM/displacement */
bool
x86_riprel_target(const ZydisDecodedInstruction *zi, uint64_t addr, uint64_t *target)
{
	if (!x86_is_riprel(zi) || zi->raw.disp.size != 32)
		return false;
	*target = addr + zi->length + (uint64_t) zi->raw.disp.value;
	return true;
}

/* Does control never fall through to the next instruction? */
bool
x86_is_uncond_end(const ZydisDecodedInstruction *zi)
{
	switch (zi->mnemonic)
	{
		case ZYDIS_MNEMONIC_RET:
		case ZYDIS_MNEMONIC_JMP:
		case ZYDIS_MNEMONIC_UD2:
		case ZYDIS_MNEMONIC_HLT:
		case ZYDIS_MNEMONIC_INT3:
			return true;
		default:
			return false;
	}
}

/* Does a displacement fit a signed 32-bit field? */
bool
x86_fits_rel32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * Encode "jmp rel32" into buf (X86_JMP_REL32_LEN bytes) for a jump that will
 * sit at address from and go to dest.  Returns false, writing nothing, if
 * dest is out of reach.
 */
bool
x86_emit_jmp_rel32(uint8_t *buf, uint64_t from, uint64_t dest)
{
	int64_t		rel = (int64_t) (dest - (from + X86_JMP_REL32_LEN));
	int32_t		r32;

	if (!x86_fits_rel32(rel))
		return false;
	r32 = (int32_t) rel;
	buf[0] = 0xe9;
	memcpy(buf + 1, &r32, 4);
	return true;
}
