/*-------------------------------------------------------------------------
 *
 * binpatch.h
 *	  Finding _bt_binsrch in the running, stripped server binary and
 *	  redirecting it to the dispatcher.
 *
 * The bottom layer of the module, and the only public header of
 * src/binpatch/.  Nothing here depends on PostgreSQL headers: the locator
 * (locate.c, callconv.c, clobbers.c, refsweep.c, elf_image.c, messages.c;
 * header binpatch_int.h) and redirect.c, with their shared x86.c, are plain
 * C over ELF and Zydis, so that test/patcher can exercise them outside a
 * server.  Failures are reported as text in a caller-supplied buffer; the
 * caller (src/runtime/redirects.c) turns that into a LOG line and the
 * status row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_BINPATCH_H
#define BTREE_JIT_BINPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BTJIT_MAX_CALLSITES 8

/* Test hooks for the locator: feed it wrong input on purpose. */
typedef enum BtjitLocateFault
{
	BTJIT_LOCATE_NORMAL = 0,
	BTJIT_LOCATE_FAULT_WRONG_CALLER,	/* analyse _bt_binsrch_insert in place
										 * of _bt_first */
	BTJIT_LOCATE_FAULT_TRUNCATED,	/* decode only the first bytes of each
									 * caller */
	BTJIT_LOCATE_FAULT_NO_CALLCONV	/* pretend the calling-convention proof
									 * failed */
} BtjitLocateFault;

typedef struct BtjitLocation
{
	uintptr_t	binsrch;		/* runtime address of _bt_binsrch */
	size_t		binsrch_size;	/* length, from its .eh_frame FDE */
	int			ncallsites;		/* direct calls/jumps to it found in .text */
	uintptr_t	callsites[BTJIT_MAX_CALLSITES]; /* runtime addresses */
	uintptr_t	load_bias;		/* where the binary is mapped */

	/*
	 * The exported functions the caller may redirect too: each one's
	 * address and length (from its FDE), or 0 and 0 with the reason in its
	 * refusal[] when it is not exported as a function or its callers are
	 * not shown to expect only the ABI of it (clobbers.c).
	 */
	uintptr_t	compare;		/* exported _bt_compare */
	size_t		compare_size;
	char		compare_refusal[256];
	uintptr_t	binsrch_insert; /* exported _bt_binsrch_insert */
	size_t		binsrch_insert_size;
	char		binsrch_insert_refusal[256];
	uintptr_t	checkkeys;		/* exported _bt_checkkeys (up to 18) */
	size_t		checkkeys_size;
	char		checkkeys_refusal[256];
	char		binary_path[256];	/* what /proc/self/exe pointed to */
	char		build_id[64];	/* GNU build-id, hex, or "" if none */
	char		evidence[2048]; /* human-readable summary of the proof */
} BtjitLocation;

/*
 * Find _bt_binsrch in the running binary and prove its calling convention,
 * on its side (callconv.c) and its callers' (clobbers.c); the same callers'
 * proof for the exported functions.  Returns false, with the reason in
 * why[], on any doubt about _bt_binsrch.
 */
extern bool btjit_locate_binsrch(BtjitLocateFault fault, BtjitLocation *loc,
								 char *why, size_t whylen);

/*
 * The same analysis for a binary that is not the running program (used by
 * test/patcher): path names the ELF file, whose PT_LOAD segments the caller
 * has mapped readable at load_bias + p_vaddr.  Addresses in loc are in that
 * mapping.
 */
extern bool btjit_locate_binsrch_at(const char *path, uintptr_t load_bias,
									BtjitLocateFault fault, BtjitLocation *loc,
									char *why, size_t whylen);

/*
 * What the server headers say of _bt_readpage and _bt_checkkeys, for the
 * proof that the binary's _bt_readpage takes the same arguments: the
 * caller knows them (it was built against those headers), this layer
 * does not.
 */
typedef struct BtjitReadpageSignature
{
	int			nargs;			/* 3: (scan, dir, offnum) on 15; 4: with
								 * firstPage, 17 on */
	int			checkkeys_frame_arg;	/* the argument of _bt_checkkeys that
										 * points at the reader's own object:
										 * 4 (bool *continuescan, 15), 1
										 * (BTReadPageState *, 17 on) */
	size_t		checkkeys_frame_size;	/* the size of that object */
} BtjitReadpageSignature;

/*
 * Where _bt_readpage is (readpage.c): identified, its references checked,
 * its callers shown to expect only the ABI of it, and its own calling
 * convention shown to be the signature's (from 19 on it is exported, and
 * its prototype is its convention).
 */
typedef struct BtjitReadpageLocation
{
	uintptr_t	readpage;		/* runtime address */
	size_t		readpage_size;	/* from its FDE */
	bool		exported;		/* 19 on */
	int			ncallsites;
	uintptr_t	callsites[BTJIT_MAX_CALLSITES];
	char		evidence[1024];
} BtjitReadpageLocation;

/* Find _bt_readpage in a binary the caller has mapped (as _at above) */
extern bool btjit_locate_readpage_at(const char *path, uintptr_t load_bias,
									 const BtjitReadpageSignature *sig,
									 BtjitReadpageLocation *rp,
									 char *why, size_t whylen);

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
