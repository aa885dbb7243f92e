/*-------------------------------------------------------------------------
 *
 * targets.h
 *	  The targets layer: one file per redirected server function
 *	  (targetlist.h names them), each holding its dispatcher, its verify
 *	  routine, its declined path and, where the module implements the
 *	  function itself, that implementation.
 *
 *	  gettuple.c	btgettuple: a scan's step from one saved item to the
 *					next on its page (15, 17, 18, 19); and index_getnext_tid:
 *					the same step where the executor asks for the row
 *					(15, 17, 18)
 *	  deform.c		index_deform_tuple_internal: an index-only scan's row taken out
 *					of a tuple whose columns all have a fixed width (15,
 *					17, 18)
 *	  first.c		_bt_first: the start of a simple scan, on the descent
 *					and the leaf read below (15, 17, 18)
 *	  binsrch.c		_bt_binsrch: the page search of every descent
 *	  compare.c		_bt_compare: high-key checks, unique checks
 *	  insert.c		_bt_binsrch_insert: the leaf search of an insertion
 *	  checkkeys.c	_bt_checkkeys: the scan-key test of each tuple read
 *	  readpage.c	_bt_readpage: the module's leaf read, calling the
 *					compiled check (15, 17, 18, 19)
 *	  build.c		btbuild: compiles a large build's key shape before it
 *					reads the heap
 *	  buildsort.c	tuplesort_begin_index_btree: the build's sort compares
 *					with the compiled build comparator; and, for the same
 *					sorts, tuplesort_performsort: the compiled presort
 *	  keepnatts.c	_bt_keep_natts_fast: key image comparisons (the
 *					build's deduplication, suffix truncation, split points)
 *	  descent.c		_bt_search: the descent on the compiled page search and
 *					compare; _bt_getroot, _bt_getbuf and _bt_relandgetbuf:
 *					the page reads of a descent and of a step to another
 *					page, through the buffer the page was last found in
 *
 * Each file exports one BtjitTargetImpl, named after its row; start-up
 * (src/btree_jit.c) hands the dispatchers to src/runtime/redirects.c and
 * the declined callbacks to the object cache, so that no lower layer
 * refers to this one.  The files depend on src/runtime/ (the slot table,
 * index state, stock entries) and on nothing of each other, but first.c,
 * which calls the descent and the leaf read (declared below).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_TARGETS_H
#define BTREE_JIT_TARGETS_H

#include "runtime/runtime.h"

#pragma GCC visibility push(hidden)

/* What a target's file offers start-up. */
typedef struct BtjitTargetImpl
{
	/* where the redirect sends its calls; NULL: this build's server has no
	 * such function in the form the module replaces */
	void	   *dispatcher;
	/* the callback compiled code hands a declined call to, or NULL */
	void	   *declined;
	/* what a slot holds for an index without compiled code, or NULL */
	void	   *stock_entry;
	/*
	 * Where gcc may have split the function (a head its own file inlines,
	 * calling the rest directly): what the rest's redirect sends its calls
	 * to, and what the locator must know to prove it; or NULL
	 */
	void	   *split_dispatcher;
	const BtjitSplitSignature *split_signature;
} BtjitTargetImpl;

#define BTJIT_TARGET(id, name, symbol, locate, prereq, tmpl, pfx, sfx, \
					 declined, type, counter, first, last, releases, \
					 consequence) \
	extern const BtjitTargetImpl btjit_target_##name;
#include "targetlist.h"
#undef BTJIT_TARGET

static inline const BtjitTargetImpl *
btjit_target_impl(BtjitTarget target)
{
	static const BtjitTargetImpl *const impls[BTJIT_NTARGETS] = {
#define BTJIT_TARGET(id, name, symbol, locate, prereq, tmpl, pfx, sfx, \
					 declined, type, counter, first, last, releases, \
					 consequence) \
		[BTJIT_TARGET_##id] = &btjit_target_##name,
#include "targetlist.h"
#undef BTJIT_TARGET
	};

	return impls[target];
}

/*
 * The descent, for the start of a scan (descent.c, first.c): what a
 * descent of an index calls, read once per descent; false when the index
 * has no compiled code.
 */
typedef struct BtjitDescentCode
{
	BtjitIndex *ix;
	BtjitEntryFn search;		/* the compiled page search */
	BtjitCompareEntryFn compare;	/* the compiled compare */
	bool		recent;			/* reads through remembered buffers */
	bool		fast;			/* not verifying */
} BtjitDescentCode;

extern bool btjit_descent_code(Relation rel, BtjitDescentCode *dc);
extern void btjit_descend_scan(const BtjitDescentCode *dc, Relation rel,
							   BTScanInsert key, Buffer *bufP,
							   Snapshot snapshot);
extern OffsetNumber btjit_descent_leaf_search(const BtjitDescentCode *dc,
											  Relation rel, BTScanInsert key,
											  Buffer buf);

/* The leaf read, for the start of a scan (readpage.c, first.c) */
extern bool btjit_readpage_first(IndexScanDesc scan, ScanDirection dir,
								 OffsetNumber offnum, BtjitIndex *ix);
extern const char *btjit_scanpos_difference(const BTScanPosData *a,
											const BTScanPosData *b,
											const char *tuples_a,
											const char *tuples_b);

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
/*
 * 17 and 18: a scan's array state, which the server's _bt_checkkeys and
 * _bt_start_array_keys change (the keys' current elements, the arrays'
 * positions, the flags for the next primitive scan): saved, put back and
 * compared by the verify routines of the leaf read and of the scan start
 * (readpage.c).  keys NULL: nothing saved yet.
 */
typedef struct BtjitArrayState
{
	ScanKeyData *keys;
	int		   *cur_elem;
	bool		needPrimScan;
	bool		scanBehind;
#if PG_VERSION_NUM >= 180000
	bool		oppositeDirCheck;
#endif
} BtjitArrayState;

extern void btjit_array_state_save(BTScanOpaque so, BtjitArrayState *a);
extern void btjit_array_state_restore(BTScanOpaque so,
									  const BtjitArrayState *a);
extern void btjit_array_state_free(BtjitArrayState *a);
extern const char *btjit_array_state_difference(BTScanOpaque so,
												const BtjitArrayState *ours);
#endif

/* btree_jit.build_compile_rows (build.c) */
extern int	btjit_build_compile_rows;

/*
 * What the locator must know of _bt_readpage's signature to prove its
 * calling convention (these headers', readpage.c).
 */
extern const BtjitReadpageSignature btjit_readpage_signature;

#ifdef BTJIT_READPAGE_OWNS_CHECKS
/*
 * 19: what the module's leaf read hands the compiled check.  The check gets
 * &continuescan; a declined call the module cannot test itself
 * (btjit_check_declined, checkkeys.c) finds the struct from it, sets
 * declined and stops the walk, and the read then leaves the page to the
 * server's _bt_readpage (readpage.c).
 */
typedef struct BtjitLeafreadChecks
{
	bool		continuescan;
	bool		declined;
} BtjitLeafreadChecks;

/*
 * Keys the module's C test of a declined tuple does not take (checkkeys.c):
 * a row comparison, and array and skip keys, which a scan the leaf read
 * takes does not have.  A page with one goes to the server's _bt_readpage.
 */
#define BTJIT_KEYS_LEFT_TO_SERVER (SK_ROW_HEADER | SK_SEARCHARRAY | SK_BT_SKIP)

#define BTJIT_LEAFREAD_CHECKS_OF(continuescan) \
	((BtjitLeafreadChecks *) ((char *) (continuescan) - \
							  offsetof(BtjitLeafreadChecks, continuescan)))
#endif

/*
 * Count a scan-key check or a leaf read that ran the server's code (or, on
 * 19, the module's C test of a declined tuple) in rel's state, when the
 * slot holds it: one that does not has not been searched by this backend
 * with the module on, and so is not one the module could have taken.
 * counter is stock_checks or stock_leafreads; a dispatcher that has
 * looked up rel's slot already passes it.
 */
#define btjit_count_stock_in_slot(slot, rel, counter, why) \
	do { \
		BtjitIndex *ix_ = btjit_slot_index((slot), (rel)); \
		\
		if (ix_ != NULL) \
			ix_->counts.counter[(why)]++; \
	} while (0)

static inline void
btjit_count_stock_check(Relation rel, BtjitStockReason why)
{
	btjit_count_stock_in_slot(btjit_slot_for(rel), rel, stock_checks, why);
}

static inline void
btjit_count_stock_leafread(Relation rel, BtjitStockReason why)
{
	btjit_count_stock_in_slot(btjit_slot_for(rel), rel, stock_leafreads, why);
}

/* Why a scan with array keys runs the server's code: skip arrays or not */
static inline BtjitStockReason
btjit_array_keys_reason(BTScanOpaque so)
{
#if PG_VERSION_NUM >= 180000
	if (so->skipScan)
		return BTJIT_STOCK_SKIP_ARRAYS;
#endif
	return BTJIT_STOCK_ARRAY_KEYS;
}

extern BtjitStockReason btjit_declined_reason(IndexScanDesc scan,
											  IndexTuple tuple);

/*
 * The common error hint of a verify mismatch: every target's verify
 * routine raises an ERROR naming the index and both results with it.
 */
#define BTJIT_VERIFY_HINT \
	"Set btree_jit.enabled = off to bypass the compiled code, and please report this."

#pragma GCC visibility pop

#endif							/* BTREE_JIT_TARGETS_H */
