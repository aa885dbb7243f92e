/*-------------------------------------------------------------------------
 *
 * locate.h
 *	  The locator: which function of the running, stripped server binary
 *	  is _bt_binsrch, which is _bt_readpage, which is the part gcc split
 *	  off an exported function, and whether the exported functions the
 *	  module redirects may be redirected, each with its proof.
 *
 * This layer holds the nbtree policy of finding code (which callers, which
 * witness, what evidence is enough); the analysis it runs is
 * src/binpatch/'s (analysis.h), which knows no server function by name.
 * Plain C over ELF and Zydis, no PostgreSQL headers, so that test/patcher
 * runs it against any server binary outside a server.
 *
 *	  binsrch.c		_bt_binsrch: the one non-exported callee shared by the
 *					exported callers that calls _bt_compare; and the exported
 *					functions the caller asks for
 *	  readpage.c	_bt_readpage: the one non-exported caller of the exported
 *					_bt_checkkeys (15 to 18), or exported (19)
 *	  split.c		the part of an exported function its head jumps to
 *					(gcc's ipa-split: Debian 15's _bt_search.part.0)
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_LOCATE_H
#define BTREE_JIT_LOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binpatch/binpatch.h"

#define BTJIT_MAX_CALLSITES 8
#define BTJIT_MAX_EXPORTED	16

/*
 * What the caller asks of the locator: the test fault, and the exported
 * functions it may redirect after _bt_binsrch (by their .dynsym names), each
 * to be shown to be called expecting no more than the ABI.
 */
typedef struct BtjitLocateRequest
{
	BtjitLocateFault fault;
	int			nexported;
	const char *exported[BTJIT_MAX_EXPORTED];
} BtjitLocateRequest;

/*
 * An exported function asked for: its address and length (from its FDE),
 * or 0 and 0 with the reason in refusal[] when it is not exported as a
 * function or its callers are not shown to expect only the ABI of it
 * (clobbers.c).
 */
typedef struct BtjitExportedLocation
{
	const char *name;
	uintptr_t	addr;
	size_t		size;
	char		refusal[256];
} BtjitExportedLocation;

typedef struct BtjitLocation
{
	uintptr_t	binsrch;		/* runtime address of _bt_binsrch */
	size_t		binsrch_size;	/* length, from its .eh_frame FDE */
	int			ncallsites;		/* direct calls/jumps to it found in .text */
	uintptr_t	callsites[BTJIT_MAX_CALLSITES]; /* runtime addresses */
	uintptr_t	load_bias;		/* where the binary is mapped */
	int			nexported;		/* as the request */
	BtjitExportedLocation exported[BTJIT_MAX_EXPORTED];
	char		binary_path[256];	/* what /proc/self/exe pointed to */
	char		build_id[64];	/* GNU build-id, hex, or "" if none */
	char		evidence[2048]; /* human-readable summary of the proof */
} BtjitLocation;

/*
 * Find _bt_binsrch in the running binary and prove its calling convention,
 * on its side (callconv.c) and its callers' (clobbers.c); the same callers'
 * proof for the exported functions requested.  Returns false, with the
 * reason in why[], on any doubt about _bt_binsrch.
 */
extern bool btjit_locate_binsrch(const BtjitLocateRequest *request,
								 BtjitLocation *loc, char *why, size_t whylen);

/*
 * The same analysis for a binary that is not the running program (used by
 * test/patcher): path names the ELF file, whose PT_LOAD segments the caller
 * has mapped readable at load_bias + p_vaddr.  Addresses in loc are in that
 * mapping.
 */
extern bool btjit_locate_binsrch_at(const char *path, uintptr_t load_bias,
									const BtjitLocateRequest *request,
									BtjitLocation *loc,
									char *why, size_t whylen);

/* The location of an exported function requested by name, or NULL */
extern const BtjitExportedLocation *btjit_location_exported(const BtjitLocation *loc,
															const char *name);

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

/*
 * What the server headers say of an exported function gcc may have split
 * (split.c): its arguments, the first statement its head keeps (a call of
 * leading_callee whose result is stored through one argument and tested),
 * and an exported function the part hands its first argument to.
 */
typedef struct BtjitSplitSignature
{
	const char *function;		/* the exported function */
	int			nargs;			/* its integer arguments, 3 to 5 */
	unsigned	int_args;		/* bit n: argument n is an int (32 bits) */
	const char *leading_callee; /* the call of its first statement */
	int			nleading;		/* that call's arguments ... */
	int			leading_args[3];	/* ... each the function's argument n */
	int			result_arg;		/* the argument the result is stored
								 * through */
	const char *witness;		/* exported, given the first argument whole */
} BtjitSplitSignature;

/* What the search for a split part found */
typedef enum BtjitSplitOutcome
{
	BTJIT_SPLIT_NONE,			/* the function's body is whole */
	BTJIT_SPLIT_FOUND,			/* the part, proven */
	BTJIT_SPLIT_REFUSED			/* a part not proven (why says why) */
} BtjitSplitOutcome;

typedef struct BtjitSplitLocation
{
	uintptr_t	part;			/* runtime address */
	size_t		part_size;		/* from its FDE */
	int			ncallsites;
	uintptr_t	callsites[BTJIT_MAX_CALLSITES];
	char		evidence[1024];
} BtjitSplitLocation;

/* Find the split part of sig->function in a mapped binary (as _at above) */
extern BtjitSplitOutcome btjit_locate_split_at(const char *path,
											   uintptr_t load_bias,
											   const BtjitSplitSignature *sig,
											   BtjitSplitLocation *sl,
											   char *why, size_t whylen);

#endif							/* BTREE_JIT_LOCATE_H */
