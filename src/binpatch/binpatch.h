/*-------------------------------------------------------------------------
 *
 * binpatch.h
 *	  Redirecting a function of the running server: the entry detour and
 *	  its trampoline (redirect.c), and the test hooks of the binary
 *	  analysis.
 *
 * The bottom layer of the module.  It knows ELF images, x86-64 code and
 * how to patch them, and nothing of nbtree: which server function is which
 * is the locator's policy (src/locate/), which uses this layer's analysis
 * toolkit (analysis.h: ELF extents, reference sweeps, calling-convention
 * and clobber proofs).  Nothing here depends on PostgreSQL headers, so
 * that test/patcher can exercise it outside a server.  Failures are
 * reported as text in a caller-supplied buffer; the caller
 * (src/runtime/redirects.c) turns that into a LOG line and the status
 * row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_BINPATCH_H
#define BTREE_JIT_BINPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Test hooks of the analysis: the locator is fed wrong input on purpose,
 * to show that it refuses.
 */
typedef enum BtjitLocateFault
{
	BTJIT_LOCATE_NORMAL = 0,
	BTJIT_LOCATE_FAULT_WRONG_CALLER,	/* analyse the wrong second caller */
	BTJIT_LOCATE_FAULT_TRUNCATED,	/* decode only the first bytes of each
									 * caller */
	BTJIT_LOCATE_FAULT_NO_CALLCONV	/* pretend the calling-convention proof
									 * failed */
} BtjitLocateFault;

/* An installed entry detour. */
typedef struct BtjitDetour
{
	uintptr_t	target;			/* patched function entry */
	size_t		patch_offset;	/* bytes skipped before the jump (endbr64) */
	size_t		displaced_len;	/* instruction bytes moved to the trampoline */
	unsigned char saved[32];	/* original bytes at target + patch_offset */
	void	   *stub_page;		/* near page holding thunk + trampoline */
	size_t		stub_page_size;
	void	   *stock;			/* trampoline: runs the original code */
	char		description[256];	/* what was done, for the status row */
} BtjitDetour;

/*
 * Redirect every call of target (whose body is target_size bytes long) to
 * replacement.  On success d->stock is a function pointer with target's
 * original behaviour.  Text is writable only during the write.  On failure
 * nothing is changed and why[] says what failed.
 */
extern bool btjit_detour_install(void *target, size_t target_size,
								 void *replacement, BtjitDetour *d,
								 char *why, size_t whylen);

/* Undo btjit_detour_install (used by the unit tests). */
extern bool btjit_detour_remove(BtjitDetour *d, char *why, size_t whylen);

#endif							/* BTREE_JIT_BINPATCH_H */
