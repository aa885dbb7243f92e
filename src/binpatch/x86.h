/*-------------------------------------------------------------------------
 *
 * x86.h
 *	  Private x86-64 helpers shared by the analysis (and the locator above
 *	  it, src/locate/) and the redirector (redirect.c): Zydis set-up, branch and RIP-relative
 *	  target decoding, and the encoding of a jmp rel32.
 *
 * Plain C over Zydis, no PostgreSQL headers (see binpatch.h).  Not part of
 * the module's interface: only src/ files that read or write machine code
 * include it.
 *
 * src/x86.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_X86_H
#define BTREE_JIT_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <Zydis/Zydis.h>

/*
 * Internal functions of the binary-analysis code are not exported from the
 * module: the server exports all of its functions, and a call from here
 * must never bind to a server function of the same name.
 */
#ifdef __GNUC__
#define BTJIT_HIDDEN __attribute__((visibility("hidden")))
#else
#define BTJIT_HIDDEN
#endif

#define X86_JMP_REL32_LEN	5	/* e9 + rel32 */

/* The general registers by their encoding (Zydis's order from RAX) */
enum
{
	R_RAX, R_RCX, R_RDX, R_RBX, R_RSP, R_RBP, R_RSI, R_RDI,
	R_R8, R_R9, R_R10, R_R11, R_R12, R_R13, R_R14, R_R15
};

extern BTJIT_HIDDEN int x86_gpr_index(ZydisRegister r);
extern BTJIT_HIDDEN bool x86_decoder_init(ZydisDecoder *dec, ZydisFormatter *fmt);
extern BTJIT_HIDDEN bool x86_decode(const ZydisDecoder *dec, const uint8_t *code, size_t len,
									ZydisDecodedInstruction *zi);
extern BTJIT_HIDDEN bool x86_format(const ZydisFormatter *fmt,
									const ZydisDecodedInstruction *zi,
									const ZydisDecodedOperand *op,
									uint64_t addr, char *buf, size_t len);
extern BTJIT_HIDDEN bool x86_rel_imm(const ZydisDecodedInstruction *zi, int *k);
extern BTJIT_HIDDEN bool x86_rel_target(const ZydisDecodedInstruction *zi,
										uint64_t addr, uint64_t *target);
extern BTJIT_HIDDEN bool x86_is_riprel(const ZydisDecodedInstruction *zi);
extern BTJIT_HIDDEN bool x86_riprel_target(const ZydisDecodedInstruction *zi,
										   uint64_t addr, uint64_t *target);
extern BTJIT_HIDDEN bool x86_is_uncond_end(const ZydisDecodedInstruction *zi);
extern BTJIT_HIDDEN bool x86_fits_rel32(int64_t v);
extern BTJIT_HIDDEN bool x86_emit_jmp_rel32(uint8_t *buf, uint64_t from, uint64_t dest);

#endif							/* BTREE_JIT_X86_H */
