/*-------------------------------------------------------------------------
 *
 * target.h
 *	  The redirected server functions ("targets"), generated from
 *	  targetlist.h: their enum, their descriptions, and the typed access
 *	  to an array of compiled entries indexed by target.
 *
 * Shared by the module, the compiler library and the template's build
 * (through code_abi.h's entry types): an array indexed by BtjitTarget is
 * the one shape in which every per-target thing travels, so a new target
 * is a row of targetlist.h, not a field in six structures.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_TARGET_H
#define BTREE_JIT_TARGET_H

#include "code_abi.h"

/* A target whose work the module does in C, with no compiled entry. */
typedef void (*BtjitNoEntryFn) (void);

/* How start-up finds a target in the server binary. */
typedef enum BtjitLocateRule
{
	/*
	 * static: the one non-exported direct callee of the exported callers
	 * that calls _bt_compare, its calling convention proven (binpatch/
	 * locate.c)
	 */
	BTJIT_LOCATE_CALLEE_GROUP,
	/* exported: its .dynsym symbol; its callers expect only the ABI */
	BTJIT_LOCATE_EXPORTED,
	/*
	 * static: the one non-exported caller of an exported target, its
	 * calling convention proven (binpatch/readpage.c)
	 */
	BTJIT_LOCATE_CALLER_OF_EXPORTED
} BtjitLocateRule;

/*
 * Whether a target may be redirected on a point release of its major that
 * the module was not checked against (src/include/mirrorlist.h).
 */
typedef enum BtjitReleaseRule
{
	/*
	 * It reproduces only the B-tree's order, which is on disk and so fixed
	 * for a major: any point release
	 */
	BTJIT_RELEASES_ANY,
	/*
	 * It reproduces server code a point release may fix: only on the
	 * releases mirrorlist.h lists as checked
	 */
	BTJIT_RELEASES_CHECKED
} BtjitReleaseRule;

typedef enum BtjitTarget
{
	BTJIT_TARGET_NONE = -1,
#define BTJIT_TARGET(id, name, symbol, locate, prereq, tmpl, pfx, sfx, \
					 declined, type, counter, first, last, releases, \
					 consequence) \
	BTJIT_TARGET_##id,
#include "targetlist.h"
#undef BTJIT_TARGET
	BTJIT_NTARGETS
} BtjitTarget;

/* One row of targetlist.h. */
typedef struct BtjitTargetInfo
{
	const char *symbol;			/* the server function */
	BtjitLocateRule locate;
	BtjitTarget prerequisite;		/* redirected first, or BTJIT_TARGET_NONE */
	const char *template_entry; /* NULL: implemented by the module */
	const char *object_prefix;
	const char *object_suffix;
	const char *declined;		/* its declined callback, or NULL */
	const char *counter;		/* stem of jit_* and verified_* */
	int			first_major;
	int			last_major;
	BtjitReleaseRule releases;	/* on an unchecked point release */
	const char *consequence;	/* of not redirecting it */
} BtjitTargetInfo;

static inline const BtjitTargetInfo *
btjit_target_info(BtjitTarget target)
{
	static const BtjitTargetInfo infos[BTJIT_NTARGETS] = {
#define BTJIT_TARGET(id, name, symbol, locate, prereq, tmpl, pfx, sfx, \
					 declined, type, counter, first, last, releases, \
					 consequence) \
		[BTJIT_TARGET_##id] = {symbol, locate, BTJIT_TARGET_##prereq, \
							   tmpl, pfx, sfx, declined, #counter, \
							   first, last, releases, consequence},
#include "targetlist.h"
#undef BTJIT_TARGET
	};

	return &infos[target];
}

/* Does the server of this major have the target in the form replaced? */
static inline bool
btjit_target_in_major(BtjitTarget target, int major)
{
	const BtjitTargetInfo *info = btjit_target_info(target);

	return major >= info->first_major && major <= info->last_major;
}

/*
 * An array of compiled entries, one per target (NULL where none), and the
 * typed read of each: btjit_entry_BINSRCH(entries) and so on, each of its
 * row's entry_type.  An index into a fixed array costs what a named field
 * costs.
 */
typedef void *BtjitEntries[BTJIT_NTARGETS];

#define BTJIT_TARGET(id, name, symbol, locate, prereq, tmpl, pfx, sfx, \
					 declined, type, counter, first, last, releases, \
					 consequence) \
static inline type \
btjit_entry_##id(void *const *entries) \
{ \
	return (type) entries[BTJIT_TARGET_##id]; \
}
#include "targetlist.h"
#undef BTJIT_TARGET

#endif							/* BTREE_JIT_TARGET_H */
