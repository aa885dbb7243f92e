/*-------------------------------------------------------------------------
 *
 * readpage.c
 *	  The redirected _bt_readpage (PostgreSQL 15, 17, 18 and 19): the leaf
 *	  read of a scan whose index has compiled scan-key checks, implemented
 *	  by the module, with the compiled check called directly for each tuple
 *	  and the matches saved inline; its dispatcher; and verify mode's
 *	  comparison of it with the server's own.
 *
 * The server's _bt_readpage reaches the compiled check through the
 * redirected _bt_checkkeys and its dispatcher, and saves each match
 * through _bt_saveitem: per tuple about 120 instructions of detour,
 * dispatch and call for a 30-instruction check.  This walk is the
 * server's, in the same order with the same outputs (src/README, "The
 * leaf read"); only the calls are gone.  The dispatcher sends here every
 * scan without array keys, parallel ones included (the parallel protocol
 * stays the server's: the read only releases the next page as the
 * server's does), and scans with array keys: on 15 any, on 17 and 18
 * serial ones whose every array is required (18: and no skip array),
 * where the server's _bt_checkkeys advances the arrays and the walk passes
 * over the tuples before their current elements itself (src/README,
 * "Array keys in the leaf read").
 *
 * Where every key is a built-in integer comparison, a serial read tests
 * the tuples against the keys decoded once per page into one interval
 * per column (keybounds.h), in a copy of the walk of its own, instead of
 * calling the compiled check for each.
 *
 * Where every scan key bounds the index order (each is required in one
 * direction or the other), the tuples between two that pass every key
 * pass every key too: a long run of matches is found by testing the
 * page's last item, or by bisection, and saved without testing the tuples
 * inside it (src/README, "The page shortcut").
 *
 * This target has no compiled entry of its own (targetlist.h): it calls
 * the check target's.  Up to 18 it is redirected after _bt_checkkeys, and
 * a tuple the compiled check declines goes to the server's _bt_checkkeys.
 * 19 has no _bt_checkkeys to call (it is static inside _bt_readpage): a
 * declined tuple is tested by the module's C (checkkeys.c), and only what
 * that does not take (a row comparison) ends the module's read, the
 * server's _bt_readpage reading the page from the start
 * (BTJIT_READPAGE_OWNS_CHECKS).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/parallel.h"
#include "access/relscan.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "targets/keybounds.h"
#include "targets/targets.h"

/*
 * What the locator must know to prove _bt_readpage's calling convention:
 * these headers' signature.  On 15 it is (scan, dir, offnum), and
 * _bt_checkkeys is handed &continuescan, a bool, as its fifth argument; on
 * 17 and 18 (scan, dir, offnum, firstPage), and _bt_checkkeys is handed
 * the page's BTReadPageState as its second.  19 exports it: its prototype
 * is its convention, and no _bt_checkkeys call is examined.
 */
#if defined(BTJIT_CHECKKEYS_READPAGE_STATE)
const BtjitReadpageSignature btjit_readpage_signature = {4, 1, sizeof(BTReadPageState)};
#elif defined(BTJIT_READPAGE_FIRSTPAGE)
const BtjitReadpageSignature btjit_readpage_signature = {4, 0, 0};
#else
const BtjitReadpageSignature btjit_readpage_signature = {3, 4, sizeof(bool)};
#endif

#ifndef BTJIT_READPAGE_REDIRECTABLE
const BtjitTargetImpl btjit_target_readpage = {0};
#else

/*
 * The server's _bt_readpage through its stock entry; firstpage is the
 * fourth argument from 17 on, which 15 does not have.
 */
#if defined(BTJIT_READPAGE_FIRSTPAGE)
typedef bool (*BtjitReadpageFn) (IndexScanDesc scan, ScanDirection dir,
								 OffsetNumber offnum, bool firstPage);
#define BTJIT_STOCK_READPAGE(scan, dir, offnum, firstpage) \
	((BtjitReadpageFn) btjit_module.stock[BTJIT_TARGET_READPAGE]) \
		((scan), (dir), (offnum), (firstpage))
static bool btjit_dispatch_readpage(IndexScanDesc scan, ScanDirection dir,
									uint32 offnum, bool firstPage);
#else
typedef bool (*BtjitReadpageFn) (IndexScanDesc scan, ScanDirection dir,
								 OffsetNumber offnum);
#define BTJIT_STOCK_READPAGE(scan, dir, offnum, firstpage) \
	((BtjitReadpageFn) btjit_module.stock[BTJIT_TARGET_READPAGE]) \
		((scan), (dir), (offnum))
static bool btjit_dispatch_readpage(IndexScanDesc scan, ScanDirection dir,
									uint32 offnum);
#endif

const BtjitTargetImpl btjit_target_readpage = {
	.dispatcher = (void *) btjit_dispatch_readpage,
};


/* Item i: a heap TID of the tuple at offnum, and where its copy is */
static inline void
leafread_save_tid(BTScanPosItem *items, bool copies, int i,
				  OffsetNumber offnum, ItemPointer tid, int tupleOffset)
{
	BTScanPosItem *item = &items[i];

	item->heapTid = *tid;
	item->indexOffset = offnum;
	if (copies)
		item->tupleOffset = tupleOffset;
}

/*
 * Save a posting list's TIDs at itemIndex upwards (forward) or below it
 * (backward), in the order the server saves them (pg_compat.h,
 * BTJIT_POSTING_SLOTS_ASCENDING): ascending forward; backward the first
 * TID highest up to 18, lowest on 19.  Returns the next itemIndex.  An
 * index-only scan gets one copy for all of them: the key part, with its
 * size rewritten to match.
 */
static pg_noinline int
leafread_save_posting(BTScanPosItem *items, char *tuples, int *nextTupleOffset,
					  int itemIndex, OffsetNumber offnum, IndexTuple itup,
					  bool forward)
{
	int			tupleOffset = 0;

	if (tuples != NULL)
	{
		Size		size = MAXALIGN(BTreeTupleGetPostingOffset(itup));
		IndexTuple	copy;

		tupleOffset = *nextTupleOffset;
		copy = (IndexTuple) (tuples + tupleOffset);
		memcpy(copy, itup, size);
		copy->t_info = (copy->t_info & ~INDEX_SIZE_MASK) | size;
		*nextTupleOffset += size;
	}
#ifdef BTJIT_POSTING_SLOTS_ASCENDING
	{
		int			nposting = BTreeTupleGetNPosting(itup);
		int			first = forward ? itemIndex : itemIndex - nposting;

		for (int i = 0; i < nposting; i++)
			leafread_save_tid(items, tuples != NULL, first + i, offnum,
							  BTreeTupleGetPostingN(itup, i), tupleOffset);
		return forward ? itemIndex + nposting : first;
	}
#else
	for (int i = 0; i < BTreeTupleGetNPosting(itup); i++)
	{
		if (!forward)
			itemIndex--;
		leafread_save_tid(items, tuples != NULL, itemIndex, offnum,
						  BTreeTupleGetPostingN(itup, i), tupleOffset);
		if (forward)
			itemIndex++;
	}
	return itemIndex;
#endif
}

/*
 * The size of the index-only tuple copied with a constant length: a key of
 * one or two 4-byte columns, or one 8-byte one, behind the 8-byte header
 */
#define LEAFREAD_COMMON_TUPLE_SIZE 16

/*
 * An index-only scan's copy of plain tuple itup for item, at
 * *nextTupleOffset.  A memcpy of a variable length is some 19 instructions
 * for a 16-byte tuple (gcc's dispatch on the length, then a string move);
 * that length, the most common, is copied as a constant: one 16-byte load
 * and store.
 */
static pg_attribute_always_inline void
leafread_copy_tuple(BTScanPosItem *item, char *tuples, int *nextTupleOffset,
					IndexTuple itup)
{
	Size		size = IndexTupleSize(itup);
	char	   *copy = tuples + *nextTupleOffset;

	item->tupleOffset = *nextTupleOffset;
	if (likely(size == LEAFREAD_COMMON_TUPLE_SIZE))
	{
		memcpy(copy, itup, LEAFREAD_COMMON_TUPLE_SIZE);
		*nextTupleOffset += LEAFREAD_COMMON_TUPLE_SIZE;
		return;
	}
	memcpy(copy, itup, size);
	*nextTupleOffset += MAXALIGN(size);
}

/*
 * Save a matching tuple at itemIndex (forward) or below it (backward):
 * a posting list as leafread_save_posting does, a plain tuple, the common
 * case, inline; returns the next itemIndex.  The destination is
 * so->currPos.items, and for an index-only scan (tuples not NULL) the
 * copies in so->currTuples from *nextTupleOffset on: passed apart rather
 * than as so, so that a loop can hold them in locals (leafread_save_run).
 */
static pg_attribute_always_inline int
leafread_save(BTScanPosItem *items, char *tuples, int *nextTupleOffset,
			  int itemIndex, OffsetNumber offnum, IndexTuple itup,
			  bool forward)
{
	BTScanPosItem *item;

	if (unlikely(BTreeTupleIsPosting(itup)))
		return leafread_save_posting(items, tuples, nextTupleOffset,
									 itemIndex, offnum, itup, forward);
	if (!forward)
		itemIndex--;
	item = &items[itemIndex];
	item->heapTid = itup->t_tid;
	item->indexOffset = offnum;
	if (tuples != NULL)
		leafread_copy_tuple(item, tuples, nextTupleOffset, itup);
	return forward ? itemIndex + 1 : itemIndex;
}

/*
 * A read first tries the page shortcut at the first matching tuple at
 * least LEAFREAD_SHORTCUT_AFTER items from where it started, by testing
 * the page's last item in the scan's direction: a read that stops sooner
 * (a unique key, a short range) pays nothing, and one whose run ends
 * before the page does pays that one test.  If the run then goes on for
 * LEAFREAD_BISECT_AFTER more items, it is long enough for a bisection
 * between its latest match and the failing last item (about log2 of the
 * items between them) to pay.
 */
#define LEAFREAD_SHORTCUT_AFTER 4
#define LEAFREAD_BISECT_AFTER 16

/* What the page shortcut tries next in this read */
typedef enum LeafreadRunStage
{
	LEAFREAD_TEST_LAST,			/* test the page's last item */
	LEAFREAD_BISECT,			/* the last item fails: bisect */
	LEAFREAD_RUN_DONE			/* tried: every tuple is tested */
} LeafreadRunStage;

/*
 * Whether the page shortcut holds for this scan's keys: every key is
 * required in one direction or the other (a bound of the index order,
 * all the columns before it bound by equality), and none is a row
 * comparison.  Then the tuples that pass every key are one run of the
 * page, so one between two that pass passes too (src/README, "The page
 * shortcut").  A key required in neither direction may fail anywhere in
 * a run, so such a scan tests every tuple.
 */
static bool
leafread_keys_bound_one_run(BTScanOpaque so)
{
	for (int i = 0; i < so->numberOfKeys; i++)
	{
		int			flags = so->keyData[i].sk_flags;

		if ((flags & SK_ROW_HEADER) ||
			!(flags & (SK_BT_REQFWD | SK_BT_REQBKWD)))
			return false;
	}
	return true;
}

/*
 * Who hands a parallel scan's next page to the other participants when
 * the module reads a page: the read itself, as the server's does
 * (_bt_parallel_release, the protocol staying the server's), except verify
 * mode's own read, after which the server's read of the same page
 * releases it (a second release could hand a page out twice).  A read
 * known not to be parallel is compiled without the test.
 */
typedef enum LeafreadRelease
{
	LEAFREAD_SERIAL,			/* not a parallel scan */
	LEAFREAD_RELEASES,			/* a parallel scan: this read releases */
	LEAFREAD_LEAVES_RELEASE		/* verify's own read, parallel or not */
} LeafreadRelease;

/*
 * Whether the read is of a scan with array keys (17 and 18: pg_compat.h,
 * BTJIT_READPAGE_ARRAY_HANDOFF).  A constant of each copy of the walk, so
 * that a scan without arrays has no test for them.
 */
typedef enum LeafreadKeys
{
	LEAFREAD_PLAIN_KEYS,
	LEAFREAD_KEY_BOUNDS,		/* plain keys, tested as bounds where a
								 * tuple has no NULLs (keybounds.h) */
	LEAFREAD_ARRAY_KEYS
} LeafreadKeys;

/*
 * One read of a leaf page: what the walk in either direction works with.
 * On 17 and 18 the compiled check is handed the continuescan of a
 * BTReadPageState set up as the server sets up its own: the check reads
 * the keys to skip next to it (17's precheck, 18's startikey), and a
 * declined check hands the same state to the server's _bt_checkkeys.  On
 * 19 it is handed the continuescan of a BtjitLeafreadChecks, and a
 * declined check marks it there (targets.h).
 */
typedef struct LeafreadPage
{
	IndexScanDesc scan;
	BTScanOpaque so;
	Page		page;
	BTPageOpaque opaque;
	OffsetNumber minoff;
	OffsetNumber maxoff;
	int			natts;
	bool		skip_dead;		/* the scan ignores killed tuples */
	ScanDirection dir;
	LeafreadRelease release;	/* of a parallel scan's next page */
	BtjitCheckEntryFn check;
	uint64	   *counters;
	const BtjitKeyBounds *bounds;	/* LEAFREAD_KEY_BOUNDS: the keys' */
#ifdef BTJIT_CHECKKEYS_READPAGE_STATE
	BTReadPageState *pstate;	/* the caller's: its address is handed out */
#endif
	bool	   *continuescan;	/* pstate's, or the caller's own (15),
								 * or a BtjitLeafreadChecks' (19) */
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	bool		arrays_to_server;	/* LEAFREAD_ARRAY_KEYS: test with the
									 * server's _bt_checkkeys until a tuple
									 * passes (leafread_test_arrays) */
	uint64	   *stock_array_checks; /* the index's counter of those tests */
#endif
} LeafreadPage;

/*
 * What the page shortcut tests items with: a copy of the read's fields,
 * made only when the shortcut is tried, so that handing it to a function
 * kept out of line does not make the walk keep its own LeafreadPage in
 * memory rather than in registers.
 */
typedef struct LeafreadProbe
{
	IndexScanDesc scan;
	BTScanOpaque so;
	Page		page;
	int			natts;
	ScanDirection dir;
	BtjitCheckEntryFn check;
	uint64	   *counters;
	const BtjitKeyBounds *bounds;
} LeafreadProbe;

/*
 * The keys' bounds' test of itup, counted as the compiled check counts
 * its answers: false when the tuple has NULLs, which the compiled check
 * takes; else *passes is the answer, continuescan set as the server's.
 */
static pg_attribute_always_inline bool
leafread_bounds_answer(const BtjitKeyBounds *bounds, IndexTuple itup,
					   bool *continuescan, uint64 *counters, bool *passes)
{
	BtjitBoundsResult r = btjit_bounds_test(bounds, itup, continuescan);

	if (unlikely(r == BTJIT_BOUNDS_NULLS))
		return false;
	(*counters)++;
	*passes = r == BTJIT_BOUNDS_PASS;
	return true;
}

/*
 * Whether the item itup at offnum passes every scan key (dead or not), by
 * the compiled check.  On 17
 * and 18 the test gets a read state of its own that skips no key: the
 * page's may have the server's precheck or startikey set.  On 19 an item
 * the compiled check declines counts as failing: the shortcut then claims
 * less of the run, and the walk tests the rest.
 */
static inline bool
leafread_passes_checked(const LeafreadProbe *lp, IndexTuple itup,
						OffsetNumber offnum)
{
#ifdef BTJIT_CHECKKEYS_READPAGE_STATE
	BTReadPageState state;

	memset(&state, 0, sizeof(state));
#if PG_VERSION_NUM < 180000
	state.dir = lp->dir;
#endif
	state.page = lp->page;
	state.offnum = offnum;
	state.continuescan = true;
	return lp->check(lp->scan, itup, lp->natts, (int) lp->dir,
					 &state.continuescan, lp->counters);
#elif defined(BTJIT_READPAGE_OWNS_CHECKS)
	BtjitLeafreadChecks state = {.continuescan = true,.declined = false};

	return lp->check(lp->scan, itup, lp->natts, (int) lp->dir,
					 &state.continuescan, lp->counters);
#else
	bool		continuescan = true;

	return lp->check(lp->scan, itup, lp->natts, (int) lp->dir, &continuescan,
					 lp->counters);
#endif
}

/*
 * Whether the item at offnum passes every scan key: by the keys' bounds
 * when the read has them, else by the compiled check.
 */
static inline bool
leafread_passes(const LeafreadProbe *lp, OffsetNumber offnum)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(lp->page,
												PageGetItemId(lp->page, offnum));

	bool		continuescan = true;
	bool		passes;

	if (lp->bounds != NULL &&
		leafread_bounds_answer(lp->bounds, itup, &continuescan, lp->counters,
							   &passes))
		return passes;
	return leafread_passes_checked(lp, itup, offnum);
}

/*
 * The furthest item from the walk's match 'from' towards the page's last
 * item 'last' (either direction) known to pass every scan key, 'from'
 * itself if none; and what the shortcut tries next.  First 'last' is
 * tested; if it fails, the next call bisects between its own match and
 * 'last', keeping a passing end and a failing one.  Every item between
 * two that pass passes too, when the keys bound one run.  'from' passed
 * the walk's test, which on 15 and 19 is of every key; on 17 and 18 the
 * page's read state may have skipped some, so there it is tested again.
 */
static pg_noinline OffsetNumber
leafread_run_end(const LeafreadProbe *lp, OffsetNumber from,
				 OffsetNumber last, LeafreadRunStage *stage)
{
	LeafreadRunStage tried = *stage;
	int			passing = from;
	int			failing = last;

	*stage = LEAFREAD_RUN_DONE;
	if (!leafread_keys_bound_one_run(lp->so))
		return from;
#ifdef BTJIT_CHECKKEYS_READPAGE_STATE
	if (!leafread_passes(lp, from))
		return from;
#endif
	if (tried == LEAFREAD_TEST_LAST)
	{
		if (leafread_passes(lp, last))
			return last;
		*stage = LEAFREAD_BISECT;
		return from;
	}
	while (abs(failing - passing) > 1)
	{
		int			mid = (passing + failing) / 2;

		if (leafread_passes(lp, (OffsetNumber) mid))
			passing = mid;
		else
			failing = mid;
	}
	return (OffsetNumber) passing;
}

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
typedef bool (*BtjitCheckkeysFn) (IndexScanDesc scan, BTReadPageState *pstate,
								  bool arrayKeys, IndexTuple tuple,
								  int tupnatts);

/*
 * 17 and 18, a scan with array keys: the compiled check ended the scan at itup
 * with the current elements.  The server's _bt_checkkeys decides what that
 * means for the arrays, from the same read state (its continuescan as the
 * server's walk would hand it: true), and its answer stands.
 */
static pg_noinline bool
leafread_arrays_decide(LeafreadPage *lp, IndexTuple itup, int tupnatts)
{
	(*lp->stock_array_checks)++;
	lp->pstate->continuescan = true;
	return ((BtjitCheckkeysFn) btjit_module.stock[BTJIT_TARGET_CHECKKEYS])
		(lp->scan, lp->pstate, true, itup, tupnatts);
}

/* Where a tuple lies against the arrays' current elements (leafread_place) */
typedef enum LeafreadArraysPlace
{
	LEAFREAD_TUPLE_BEFORE_ARRAYS,	/* before them: it fails, the scan goes
									 * on, and the arrays stay */
	LEAFREAD_TUPLE_NOT_BEFORE,	/* at or past them on the keys the test
								 * takes: the arrays may advance */
	LEAFREAD_TUPLE_UNDECIDED	/* a tuple with NULLs, or no key taken */
} LeafreadArraysPlace;

/* The = keys' flags the place test does not take (NULL, row, skip keys) */
#if PG_VERSION_NUM >= 180000
#define LEAFREAD_PLACE_UNTAKEN_FLAGS \
	(SK_ISNULL | SK_ROW_HEADER | SK_ROW_MEMBER | SK_SEARCHNULL | \
	 SK_SEARCHNOTNULL | SK_BT_SKIP | SK_BT_MINVAL | SK_BT_MAXVAL | \
	 SK_BT_NEXT | SK_BT_PRIOR)
#else
#define LEAFREAD_PLACE_UNTAKEN_FLAGS \
	(SK_ISNULL | SK_ROW_HEADER | SK_ROW_MEMBER | SK_SEARCHNULL | \
	 SK_SEARCHNOTNULL)
#endif

/*
 * One = key of the place test, prepared once for the tuples one search
 * places.  A built-in integer ORDER procedure (same-type or cross-type)
 * whose left type is the column's is compared inline: the column read at
 * its offset in a tuple without NULLs (keybounds.h's, from the lengths and
 * alignments of the columns before it), both values widened, which gives
 * the procedure's sign.  Any other procedure is called as
 * _bt_compare_array_skey calls it, the tuple's value on the left.
 */
typedef struct LeafreadPlaceKey
{
	ScanKey		key;
	FmgrInfo   *orderproc;
	int			offset;			/* in the tuple's data, when width != 0 */
	int			width;			/* 2, 4 or 8: compared inline; 0: called */
	bool		desc;			/* a DESC column: the sign inverted */
	int64		arg;			/* the key's argument widened, when inline */
} LeafreadPlaceKey;

/*
 * The keys the place test takes, from the page's first tested key (18:
 * pstate->startikey) to the first it does not take, and whether it can
 * place any tuple at all.
 */
typedef struct LeafreadPlaceKeys
{
	bool		usable;
	bool		forward;
	TupleDesc	tupdesc;
	int			nkeys;
	LeafreadPlaceKey keys[INDEX_MAX_KEYS];
} LeafreadPlaceKeys;

/*
 * For a built-in integer ORDER procedure: log2 of the width of its left
 * (the tuple's) and right (the argument's) type; false for any other.
 */
static bool
leafread_integer_order(Oid proc, int *left_shift, int *right_shift)
{
	switch (proc)
	{
		case F_BTINT2CMP:
			*left_shift = 1, *right_shift = 1;
			return true;
		case F_BTINT24CMP:
			*left_shift = 1, *right_shift = 2;
			return true;
		case F_BTINT28CMP:
			*left_shift = 1, *right_shift = 3;
			return true;
		case F_BTINT4CMP:
			*left_shift = 2, *right_shift = 2;
			return true;
		case F_BTINT42CMP:
			*left_shift = 2, *right_shift = 1;
			return true;
		case F_BTINT48CMP:
			*left_shift = 2, *right_shift = 3;
			return true;
		case F_BTINT8CMP:
			*left_shift = 3, *right_shift = 3;
			return true;
		case F_BTINT82CMP:
			*left_shift = 3, *right_shift = 1;
			return true;
		case F_BTINT84CMP:
			*left_shift = 3, *right_shift = 2;
			return true;
	}
	return false;
}

/*
 * 17 and 18, a scan with array keys: the keys by which a tuple is placed
 * against the arrays' current elements.  Given a tuple before them, the
 * server's _bt_checkkeys finds the key that fails (the first, from the
 * page's first tested key on, that the tuple does not satisfy), asks
 * _bt_tuple_before_array_skeys whether the tuple is still before that =
 * key's element, and then fails the tuple and lets the scan go on,
 * touching nothing but its look-ahead.  Where every key up to the failed
 * one is a required = key (as an IN list's are), the place test finds
 * that key and makes that comparison: each key passes exactly when its
 * ORDER procedure says equal, as its = operator does in an operator
 * family.  It takes no tuple on 17's prechecked page (whose required keys
 * the server does not test) or in a scan behind its arrays (17 then
 * checks the page's final tuple as well).  src/README, "Array keys in the
 * leaf read".
 */
static void
leafread_place_prepare(LeafreadPage *lp, LeafreadPlaceKeys *pk)
{
	BTScanOpaque so = lp->so;
	int			ikey;

	pk->forward = ScanDirectionIsForward(lp->dir);
	pk->tupdesc = RelationGetDescr(lp->scan->indexRelation);
	pk->nkeys = 0;
#if PG_VERSION_NUM >= 180000
	ikey = lp->pstate->startikey;
	pk->usable = !so->scanBehind;
#else
	ikey = 0;
	pk->usable = !so->scanBehind && !lp->pstate->prechecked;
#endif
	/*
	 * Preprocessing keeps = keys on one column that it cannot compare with
	 * each other, so the keys are not bounded by the index's columns: take
	 * at most INDEX_MAX_KEYS (a tuple equal on all of them is not placed).
	 */
	for (; pk->usable && ikey < so->numberOfKeys &&
		 pk->nkeys < INDEX_MAX_KEYS; ikey++)
	{
		ScanKey		key = &so->keyData[ikey];
		FmgrInfo   *orderproc = &so->orderProcs[ikey];
		LeafreadPlaceKey *k = &pk->keys[pk->nkeys];
		int			left,
					right;

		if (key->sk_strategy != BTEqualStrategyNumber ||
			(key->sk_flags & (SK_BT_REQFWD | SK_BT_REQBKWD)) !=
			(SK_BT_REQFWD | SK_BT_REQBKWD) ||
			(key->sk_flags & LEAFREAD_PLACE_UNTAKEN_FLAGS) != 0 ||
			!OidIsValid(orderproc->fn_oid))
			break;
		k->key = key;
		k->orderproc = orderproc;
		k->desc = (key->sk_flags & SK_BT_DESC) != 0;
		k->width = 0;
		if (leafread_integer_order(orderproc->fn_oid, &left, &right))
		{
			Form_pg_attribute attr = TupleDescAttr(pk->tupdesc,
												   key->sk_attno - 1);
			int			offset = btjit_column_offset(pk->tupdesc,
													 key->sk_attno);

			if (offset >= 0 && attr->attbyval && attr->attlen == (1 << left))
			{
				k->width = 1 << left;
				k->offset = offset;
				k->arg = btjit_int_argument(key->sk_argument, right);
			}
		}
		pk->nkeys++;
	}
}

/*
 * Whether itup is before the arrays' current elements, by usable keys: the
 * first prepared key the tuple does not equal decides.  A tuple equal on
 * every prepared key is not before them on those keys: it may pass, fail
 * an inequality (where the server's test advances the arrays) or be before
 * them on a later key the test does not take, which only makes the search
 * of leafread_arrays_skip_before stop short of it.  Undecided: a tuple with
 * NULLs, or no key taken.
 */
static pg_attribute_always_inline LeafreadArraysPlace
leafread_place(const LeafreadPlaceKeys *pk, IndexTuple itup)
{
	const char *data = (const char *) itup + MAXALIGN(sizeof(IndexTupleData));

	if (IndexTupleHasNulls(itup))
		return LEAFREAD_TUPLE_UNDECIDED;
	for (int i = 0; i < pk->nkeys; i++)
	{
		const LeafreadPlaceKey *k = &pk->keys[i];
		int32		order;

		if (likely(k->width == 4))
		{
			int64		value = *(const int32 *) (data + k->offset);

			if (value == k->arg)
				continue;
			order = value < k->arg ? -1 : 1;
		}
		else if (k->width != 0)
		{
			int64		value = k->width == 8 ?
				*(const int64 *) (data + k->offset) :
				*(const int16 *) (data + k->offset);

			order = (value > k->arg) - (value < k->arg);
		}
		else
		{
			bool		isnull;
			Datum		datum = index_getattr(itup, k->key->sk_attno,
											  pk->tupdesc, &isnull);

			order = DatumGetInt32(FunctionCall2Coll(k->orderproc,
													k->key->sk_collation,
													datum,
													k->key->sk_argument));
		}
		if (order == 0)
			continue;
		if (k->desc)
			INVERT_COMPARE_RESULT(order);
		if (pk->forward ? order < 0 : order > 0)
			return LEAFREAD_TUPLE_BEFORE_ARRAYS;
		return LEAFREAD_TUPLE_NOT_BEFORE;
	}
	return pk->nkeys > 0 ? LEAFREAD_TUPLE_NOT_BEFORE : LEAFREAD_TUPLE_UNDECIDED;
}

/*
 * A tuple before the arrays' current elements: where the walk goes next.
 * The page's tuples are in the order of the = keys' columns (the keys the
 * place test takes are on the columns the index orders first, and a key
 * before pstate->startikey has one value on the whole page), so the
 * tuples before the elements come first in the scan's direction.  The
 * first that is not is found by a search that doubles its step from the
 * tuple and then bisects (an IN list's elements often lie a few tuples
 * apart), and the walk moves to it through pstate->skip, as it does after
 * the server's look-ahead, or past the page's end when every later tuple
 * is before them.  Each tuple passed over would have failed with the scan
 * going on, and changed nothing.  A tuple the test cannot place ends the
 * search short of it: the walk moves past the last tuple known to be
 * before.
 */
static void
leafread_arrays_skip_before(LeafreadPage *lp, const LeafreadPlaceKeys *pk,
							OffsetNumber offnum)
{
	int			dir = pk->forward ? 1 : -1;
	int			before = offnum;
	int			after = pk->forward ? lp->maxoff + 1 : lp->minoff - 1;
	bool		galloping = true;
	int			step = 1;
	int			next;

	while (abs(after - before) > 1)
	{
		int			probe;
		LeafreadArraysPlace place;

		if (galloping)
		{
			probe = before + dir * step;
			if (abs(after - before) <= step)
			{
				galloping = false;
				continue;
			}
			step *= 2;
		}
		else
			probe = (before + after) / 2;
		place = leafread_place(pk, (IndexTuple)
							   PageGetItem(lp->page,
										   PageGetItemId(lp->page, probe)));
		if (place == LEAFREAD_TUPLE_BEFORE_ARRAYS)
			before = probe;
		else if (place == LEAFREAD_TUPLE_NOT_BEFORE)
		{
			after = probe;
			galloping = false;
		}
		else
			break;
	}
	if (before == offnum)
		return;
	/* past the page's end: the walk's loop ends there, as after its last */
	next = before + dir;
	if (next == InvalidOffsetNumber)
		next = before;			/* backward past offset 1: test the last */
	lp->pstate->skip = (OffsetNumber) next;
}

/*
 * The server's _bt_checkkeys failed the tuple at pstate->offnum and let
 * the scan go on.  Where it is before the arrays' current elements, the
 * walk moves past the tuples after it that are too; where the place test
 * cannot tell, the next tuples go to the server's test until one passes.
 * A skip the server's look-ahead set stands.
 */
static pg_noinline void
leafread_arrays_failed(LeafreadPage *lp, IndexTuple itup)
{
	LeafreadPlaceKeys pk;
	LeafreadArraysPlace place;

	if (OffsetNumberIsValid(lp->pstate->skip))
		return;
	leafread_place_prepare(lp, &pk);
	place = pk.usable ? leafread_place(&pk, itup) : LEAFREAD_TUPLE_UNDECIDED;
	if (place == LEAFREAD_TUPLE_BEFORE_ARRAYS)
		leafread_arrays_skip_before(lp, &pk, lp->pstate->offnum);
	else if (place == LEAFREAD_TUPLE_UNDECIDED)
		lp->arrays_to_server = true;
}

/*
 * Where the server's decision moved the walk: the offset the walk's loop
 * steps from, so that its next step lands on pstate->skip, or offnum to go
 * on as usual.  Read once per tuple.
 */
static pg_attribute_always_inline OffsetNumber
leafread_arrays_skip(LeafreadPage *lp, OffsetNumber offnum, bool forward)
{
	OffsetNumber skip = lp->pstate->skip;

	if (likely(!OffsetNumberIsValid(skip)))
		return offnum;
	lp->pstate->skip = InvalidOffsetNumber;
	return forward ? OffsetNumberPrev(skip) : OffsetNumberNext(skip);
}
#endif

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
/*
 * The test of a tuple in a scan with array keys: the compiled check, and
 * the server's _bt_checkkeys where it ends the scan.  When the server's
 * then fails the tuple and lets the scan go on (the arrays advanced past
 * it, or it is before their elements), the tuples after it are most
 * likely before the elements too: leafread_arrays_failed moves the walk
 * past those, or, where it cannot tell, they go straight to the server's
 * test until one passes.  Every answer is the one the server's walk would
 * give (src/README, "Array keys in the leaf read").
 */
static pg_attribute_always_inline bool
leafread_test_arrays(LeafreadPage *lp, IndexTuple itup)
{
	bool		passes;

	if (lp->arrays_to_server)
	{
		passes = leafread_arrays_decide(lp, itup, lp->natts);
		if (passes)
			lp->arrays_to_server = false;
		return passes;
	}
	passes = lp->check(lp->scan, itup, lp->natts, (int) lp->dir,
					   lp->continuescan, lp->counters);
	if (unlikely(!*lp->continuescan))
	{
		passes = leafread_arrays_decide(lp, itup, lp->natts);
		if (!passes && *lp->continuescan)
			leafread_arrays_failed(lp, itup);
	}
	return passes;
}
#endif

/* The walk's test of the tuple at offnum, with the page's read state */
static pg_attribute_always_inline bool
leafread_test(LeafreadPage *lp, IndexTuple itup, OffsetNumber offnum,
			  LeafreadKeys keys)
{
#ifdef BTJIT_CHECKKEYS_READPAGE_STATE
	lp->pstate->offnum = offnum;
#endif
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	if (keys == LEAFREAD_ARRAY_KEYS)
		return leafread_test_arrays(lp, itup);
#endif
	if (keys == LEAFREAD_KEY_BOUNDS)
	{
		bool		passes;

		if (leafread_bounds_answer(lp->bounds, itup, lp->continuescan,
								   lp->counters, &passes))
			return passes;
	}
	return lp->check(lp->scan, itup, lp->natts, (int) lp->dir,
					 lp->continuescan, lp->counters);
}

#if PG_VERSION_NUM < 180000
/*
 * The page a parallel scan's read hands out up to 17: the right sibling
 * forward, this page backward (whose left sibling the next reader finds
 * from it).
 */
static inline BlockNumber
leafread_released_page(const LeafreadPage *lp)
{
	return ScanDirectionIsForward(lp->dir) ? lp->opaque->btpo_next :
		lp->so->currPos.currPage;
}
#endif

/*
 * A parallel scan: the next page in the scan's direction goes to whichever
 * participant asks for it next, now, before this page is read; 18 hands
 * out both this page and the sibling.
 */
static pg_noinline void
leafread_release_parallel(LeafreadPage *lp)
{
#if PG_VERSION_NUM >= 180000
	BTScanPos	pos = &lp->so->currPos;

	_bt_parallel_release(lp->scan,
						 ScanDirectionIsForward(lp->dir) ? pos->nextPage :
						 pos->prevPage,
						 pos->currPage);
#else
	_bt_parallel_release(lp->scan, leafread_released_page(lp));
#endif
}

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
/*
 * A page of a scan with array keys: the arrays' advancement looks at the
 * page's last tuple in the scan's direction up front (pstate->finaltup),
 * and the walk starts with the compiled check.
 */
static pg_attribute_always_inline void
leafread_arrays_begin(LeafreadPage *lp)
{
	lp->arrays_to_server = false;
	if (ScanDirectionIsForward(lp->dir) && !P_RIGHTMOST(lp->opaque))
		lp->pstate->finaltup = (IndexTuple)
			PageGetItem(lp->page, PageGetItemId(lp->page, P_HIKEY));
	else if (ScanDirectionIsBackward(lp->dir) &&
			 lp->minoff <= lp->maxoff && !P_LEFTMOST(lp->opaque))
		lp->pstate->finaltup = (IndexTuple)
			PageGetItem(lp->page, PageGetItemId(lp->page, lp->minoff));
}
#endif

/* How a page's read starts (leafread_begin) */
typedef enum LeafreadStart
{
	LEAFREAD_START_WALK,		/* the walk reads the page */
	LEAFREAD_START_TO_SERVER,	/* the server's function reads it */
	LEAFREAD_START_BEHIND_ARRAYS	/* 18: the page is before the arrays'
									 * elements; a new primitive scan, no
									 * tuple read */
} LeafreadStart;

/*
 * What the server's read writes and sets up before its walk: the scan
 * position's page fields, 18's and 19's predicate lock, on 17 and 18 the
 * read state with its skipped keys (17's precheck of the page's last tuple,
 * 18's _bt_set_startikey), and a parallel scan's release of the next page
 * (leafread_release_parallel).  LEAFREAD_START_TO_SERVER if the page must
 * go to the server's function after all (18's page whose keys
 * _bt_set_startikey forces non-required: never without array keys, and
 * with them the walk tests every key instead), having
 * written nothing that function will not write again and released
 * nothing.  On 18, a page that a scan with array keys reaches behind them
 * (so->scanBehind) is first checked against its final tuple as the
 * server's read checks it, which may end the primitive scan there
 * (LEAFREAD_START_BEHIND_ARRAYS).
 */
static pg_attribute_always_inline LeafreadStart
leafread_begin(LeafreadPage *lp, bool firstpage, LeafreadKeys keys)
{
	BTScanOpaque so = lp->so;

	so->currPos.currPage = BufferGetBlockNumber(so->currPos.buf);
	so->currPos.nextPage = lp->opaque->btpo_next;
	so->currPos.nextTupleOffset = 0;
#if PG_VERSION_NUM >= 180000
	/* 18 and 19 leave the LSN to the caller, which takes it as it unlocks */
	so->currPos.prevPage = lp->opaque->btpo_prev;
	so->currPos.dir = lp->dir;
	PredicateLockPage(lp->scan->indexRelation, so->currPos.currPage,
					  lp->scan->xs_snapshot);
#else
	so->currPos.lsn = BufferGetLSNAtomic(so->currPos.buf);
#if PG_VERSION_NUM >= 170000
	so->currPos.dir = lp->dir;
#endif
#endif

#ifdef BTJIT_CHECKKEYS_READPAGE_STATE
	memset(lp->pstate, 0, sizeof(BTReadPageState));
	lp->pstate->minoff = lp->minoff;
	lp->pstate->maxoff = lp->maxoff;
	lp->pstate->page = lp->page;
	lp->pstate->continuescan = true;
#if PG_VERSION_NUM >= 180000
	lp->pstate->firstpage = firstpage;
#ifdef BTJIT_READPAGE_ARRAYS_SCAN_BEHIND
	if (keys == LEAFREAD_ARRAY_KEYS)
	{
		leafread_arrays_begin(lp);
		if (unlikely(so->scanBehind) && lp->pstate->finaltup != NULL &&
			!_bt_scanbehind_checkkeys(lp->scan, lp->dir,
									  lp->pstate->finaltup))
			return LEAFREAD_START_BEHIND_ARRAYS;
		so->scanBehind = so->oppositeDirCheck = false;
	}
#endif
	if (!firstpage && lp->minoff < lp->maxoff)
	{
		_bt_set_startikey(lp->scan, lp->pstate);
		if (unlikely(lp->pstate->forcenonrequired))
		{
#ifdef BTJIT_READPAGE_ARRAYS_SCAN_BEHIND
			/*
			 * Keys forced non-required would advance the arrays on tuples
			 * the compiled check passes: test every key instead, as on a
			 * primitive scan's first page (the two fields are all that
			 * _bt_set_startikey sets).
			 */
			if (keys == LEAFREAD_ARRAY_KEYS)
			{
				lp->pstate->forcenonrequired = false;
				lp->pstate->startikey = 0;
			}
			else
#endif
				return LEAFREAD_START_TO_SERVER;
		}
	}
#else
	lp->pstate->dir = lp->dir;
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	if (keys == LEAFREAD_ARRAY_KEYS)
		leafread_arrays_begin(lp);
#endif
	if (!firstpage && !so->scanBehind && lp->minoff < lp->maxoff)
	{
		OffsetNumber last = ScanDirectionIsForward(lp->dir) ?
			lp->maxoff : lp->minoff;

		(void) lp->check(lp->scan,
						 (IndexTuple) PageGetItem(lp->page,
												  PageGetItemId(lp->page, last)),
						 lp->natts, (int) lp->dir, lp->continuescan,
						 lp->counters);
		lp->pstate->prechecked = lp->pstate->continuescan;
		lp->pstate->continuescan = true;
	}
#endif
#else
	(void) firstpage;
#endif
	if (lp->release != LEAFREAD_SERIAL && lp->scan->parallel_scan != NULL)
	{
#if defined(BTJIT_CHECKKEYS_READPAGE_STATE) && PG_VERSION_NUM < 180000
		/* 17 notes the released page in the read state whoever releases */
		lp->pstate->prev_scan_page = leafread_released_page(lp);
#endif
		if (lp->release == LEAFREAD_RELEASES)
			leafread_release_parallel(lp);
	}
	return LEAFREAD_START_WALK;
}

/* A match: 17 notes the page's first (its firstmatch skips keys) */
static pg_attribute_always_inline void
leafread_matched(LeafreadPage *lp)
{
#if defined(BTJIT_CHECKKEYS_READPAGE_STATE) && PG_VERSION_NUM < 180000
	lp->pstate->firstmatch = true;
#else
	(void) lp;
#endif
}

/* An item's ItemId, read in one load where its fields are both wanted */
typedef union LeafreadItemId
{
	ItemIdData	id;
	uint32		word;
} LeafreadItemId;

/*
 * The ItemId at offnum into *iid, in one load: gcc reloads a bit-field
 * from memory for each field read (and given the union by value, widens
 * the item's offset once more, an instruction a tuple)
 */
static pg_attribute_always_inline void
leafread_item_id(Page page, int64 offnum, LeafreadItemId *iid)
{
	iid->word = *(uint32 *) PageGetItemId(page, offnum);
}

/*
 * Save itup, at offnum, in the slot item (forward) or the one below it
 * (backward), and its copy at *tupleOffset when tuples is not NULL: the
 * save of leafread_save_items and leafread_bounded_items, whose item is a
 * pointer walked.  A posting list goes to leafread_save_posting.  Returns
 * the next item.  The TID is copied as 8 bytes, t_tid with t_info behind
 * it, over heapTid with indexOffset behind it, and indexOffset then
 * written: three moves instead of five.  tupleOffset is written only with
 * copies, as the server's _bt_saveitem writes it.
 */
static pg_attribute_always_inline BTScanPosItem *
leafread_save_at(BTScanPosItem *items, BTScanPosItem *item, char *tuples,
				 int *tupleOffset, int64 offnum, IndexTuple itup, bool forward)
{
	StaticAssertStmt(offsetof(IndexTupleData, t_tid) == 0 &&
					 offsetof(IndexTupleData, t_info) == 6 &&
					 offsetof(BTScanPosItem, heapTid) == 0 &&
					 offsetof(BTScanPosItem, indexOffset) == 6,
					 "a heap TID and the field after it are 8 bytes");

	/*
	 * An index-only scan's common tuple: 16 bytes and no alternative TID
	 * format (so no posting list), in one test of t_info.  Saved here, not
	 * by the general save below with that test moved into
	 * leafread_copy_tuple: gcc 12 then keeps the tests apart and the run's
	 * loops grow from 24 to 31 instructions a tuple.
	 */
	if (tuples != NULL &&
		likely((itup->t_info & (INDEX_SIZE_MASK | INDEX_ALT_TID_MASK)) ==
			   LEAFREAD_COMMON_TUPLE_SIZE))
	{
		if (!forward)
			item--;
		memcpy(item, itup, 8);
		item->indexOffset = offnum;
		item->tupleOffset = *tupleOffset;
		memcpy(tuples + *tupleOffset, itup, LEAFREAD_COMMON_TUPLE_SIZE);
		*tupleOffset += LEAFREAD_COMMON_TUPLE_SIZE;
		return forward ? item + 1 : item;
	}
	if (unlikely(BTreeTupleIsPosting(itup)))
	{
		/*
		 * The offset through a copy: were the caller's local passed by
		 * address, it would live in memory for the whole walk.
		 */
		int			offset = *tupleOffset;
		int			next = leafread_save_posting(items, tuples, &offset,
												 item - items, offnum, itup,
												 forward);

		*tupleOffset = offset;
		return &items[next];
	}
	if (!forward)
		item--;
	memcpy(item, itup, 8);
	item->indexOffset = offnum;
	if (tuples != NULL)
		leafread_copy_tuple(item, tuples, tupleOffset, itup);
	return forward ? item + 1 : item;
}

/*
 * Save the live items after 'from' up to 'end' in the walk's direction, all
 * proven to match (leafread_take_run): what a long read spends its time
 * on.  gcc's -O2 does not unswitch loops, so leafread_save_run instantiates
 * this once per direction, per skip_dead and per whether tuples are copied
 * (an index-only scan's, to tuples from *nextTupleOffset on); the item is
 * a pointer walked rather than an index multiplied, and the offset 64 bits
 * rather than a uint16 widened at every use.  Against a general loop that
 * saves about 13 instructions a tuple of a plain index scan
 * (bench/README.md, "A run's TIDs saved in a loop of their own").  A
 * posting list goes to leafread_save_posting.  Returns the next itemIndex.
 */
static pg_attribute_always_inline int
leafread_save_items(Page page, BTScanPosItem *items, char *tuples,
					int *nextTupleOffset, int from, int end, bool forward,
					bool skip_dead, int itemIndex)
{
	BTScanPosItem *item = &items[itemIndex];
	int			step = forward ? 1 : -1;
	int			tupleOffset = tuples != NULL ? *nextTupleOffset : 0;

	/* the offset in 64 bits indexes the ItemIds without widening */
	for (int64 offnum = from + step;
		 forward ? offnum <= end : offnum >= end;
		 offnum += step)
	{
		LeafreadItemId iid;
		IndexTuple	itup;

		leafread_item_id(page, offnum, &iid);
		if (skip_dead && unlikely(ItemIdIsDead(&iid.id)))
			continue;
		itup = (IndexTuple) PageGetItem(page, &iid.id);
		item = leafread_save_at(items, item, tuples, &tupleOffset, offnum,
								itup, forward);
	}
	if (tuples != NULL)
		*nextTupleOffset = tupleOffset;
	return item - items;
}

/*
 * leafread_save_items for this read's scan, copying tuples or not.  The
 * scan position's next tuple offset is passed by address and held in a
 * local of leafread_save_items, since the build's -fno-strict-aliasing
 * would otherwise have every item stored reload it.
 */
static pg_attribute_always_inline int
leafread_save_run(LeafreadPage *lp, OffsetNumber from, OffsetNumber end,
				  bool forward, int itemIndex)
{
	BTScanOpaque so = lp->so;
	BTScanPosItem *items = so->currPos.items;
	char	   *tuples = so->currTuples;

	if (tuples == NULL)
	{
		if (lp->skip_dead)
			return leafread_save_items(lp->page, items, NULL, NULL, from, end,
									   forward, true, itemIndex);
		return leafread_save_items(lp->page, items, NULL, NULL, from, end,
								   forward, false, itemIndex);
	}
	if (lp->skip_dead)
		return leafread_save_items(lp->page, items, tuples,
								   &so->currPos.nextTupleOffset, from, end,
								   forward, true, itemIndex);
	return leafread_save_items(lp->page, items, tuples,
							   &so->currPos.nextTupleOffset, from, end,
							   forward, false, itemIndex);
}

/*
 * Whether the item at offnum fails the keys' bounds: false when it passes
 * them or has NULLs (untested).  Counted as leafread_passes counts.
 */
static pg_attribute_always_inline bool
leafread_bounds_fail(const LeafreadPage *lp, OffsetNumber offnum)
{
	IndexTuple	itup = (IndexTuple) PageGetItem(lp->page,
												PageGetItemId(lp->page, offnum));
	bool		continuescan;
	bool		passes;

	return leafread_bounds_answer(lp->bounds, itup, &continuescan,
								  lp->counters, &passes) && !passes;
}

/*
 * The page shortcut at the walk's match at offnum: leafread_run_end's try
 * towards the page's last item in the walk's direction, and every live
 * item it proves saved untested, as the server's walk finds them all
 * matching (backward, a dead first item too, which the server tests but
 * does not save).  Returns the offset the walk goes on from, the run's
 * end; sets where the shortcut is tried next, and the next itemIndex.
 */
static pg_attribute_always_inline OffsetNumber
leafread_take_run(LeafreadPage *lp, OffsetNumber offnum, bool forward,
				  LeafreadKeys keys, LeafreadRunStage *stage, int *shortcut_at,
				  int *itemIndex)
{
	OffsetNumber last = forward ? lp->maxoff : lp->minoff;
	OffsetNumber end;

	if (keys == LEAFREAD_KEY_BOUNDS && *stage == LEAFREAD_TEST_LAST &&
		leafread_bounds_fail(lp, last))
	{
		/*
		 * leafread_run_end's first try, inline: the last item fails.  Where
		 * the keys do not bound one run, its bisection declines later.
		 */
		*stage = LEAFREAD_BISECT;
		end = offnum;
	}
	else
	{
		const BtjitKeyBounds *bounds = keys == LEAFREAD_KEY_BOUNDS ?
			lp->bounds : NULL;
		LeafreadProbe probe = {lp->scan, lp->so, lp->page, lp->natts, lp->dir,
		lp->check, lp->counters, bounds};

		end = leafread_run_end(&probe, offnum, last, stage);
	}
	if (*stage == LEAFREAD_BISECT)
		*shortcut_at = forward ? offnum + LEAFREAD_BISECT_AFTER :
			(int) offnum - LEAFREAD_BISECT_AFTER;
	else
		*shortcut_at = forward ? MaxOffsetNumber + 1 : -1;
	if (end != offnum)
		*itemIndex = leafread_save_run(lp, offnum, end, forward, *itemIndex);
	return end;
}

/*
 * The walk's tuples from offnum towards (not including) 'stop', in its
 * direction, where the keys are one column's bounds of width bytes: each
 * live tuple tested by the bound and saved if it passes, with the bound,
 * the page, the item saved next and the count of tests in registers.  The
 * walk's general step costs some 56 instructions a tuple, most of them
 * reloads that -fno-strict-aliasing forces after each item stored, and the
 * loop over the columns; this loop about 27 (bench/README.md, "One
 * column's bounds in a loop of their own").  It stops at whatever the
 * general step must take: a tuple with NULLs (for the compiled check),
 * backward a dead first item (tested, not saved), and 'stop', where the
 * page shortcut is tried next.  Returns the offset it stopped at: 'stop'
 * or beyond it, a tuple for the general step, or the failing tuple that
 * ended the scan (*continuescan false).  No test here reads the read
 * state's offnum, which the general step sets before each of its tests.
 */
static pg_attribute_always_inline OffsetNumber
leafread_bounded_items(LeafreadPage *lp, OffsetNumber start, int stop,
					   bool forward, int width, int *itemIndex)
{
	const BtjitColumnBound *col = &lp->bounds->columns[0];
	const int64 lo = col->lo;
	const int64 hi = col->hi;
	const uint32 offset = MAXALIGN(sizeof(IndexTupleData)) + col->offset;
	const Page	page = lp->page;
	const bool	skip_dead = lp->skip_dead;
	const int64 minoff = lp->minoff;
	BTScanPosItem *items = lp->so->currPos.items;
	BTScanPosItem *item = &items[*itemIndex];
	char	   *tuples = lp->so->currTuples;
	int			tupleOffset = tuples != NULL ? lp->so->currPos.nextTupleOffset : 0;
	int			step = forward ? 1 : -1;
	uint64		tested = 0;
	int64		offnum;

	for (offnum = start; forward ? offnum < stop : offnum > stop;
		 offnum += step)
	{
		LeafreadItemId iid;
		IndexTuple	itup;
		int64		value;

		leafread_item_id(page, offnum, &iid);
		if (skip_dead && unlikely(ItemIdIsDead(&iid.id)))
		{
			if (forward || offnum > minoff)
				continue;
			break;
		}
		itup = (IndexTuple) PageGetItem(page, &iid.id);
		if (unlikely(itup->t_info & INDEX_NULL_MASK))
			break;
		value = btjit_bound_value((const char *) itup + offset, width);
		tested++;
		if (unlikely(value < lo || value > hi))
		{
			if (value < lo ? col->lo_continues : col->hi_continues)
				continue;
			*lp->continuescan = false;
			break;
		}
		item = leafread_save_at(items, item, tuples, &tupleOffset, offnum,
								itup, forward);
	}
	if (tuples != NULL)
		lp->so->currPos.nextTupleOffset = tupleOffset;
	if (item - items != *itemIndex)
		leafread_matched(lp);
	*itemIndex = item - items;
	*lp->counters += tested;
	return (OffsetNumber) offnum;
}

/*
 * leafread_bounded_items for the column's width; from offnum up to the
 * page shortcut's next try in the walk's direction, or the page's end.
 */
static pg_attribute_always_inline OffsetNumber
leafread_bounded_run(LeafreadPage *lp, OffsetNumber offnum, int shortcut_at,
					 bool forward, int *itemIndex)
{
	int			stop;

	if (forward)
		stop = shortcut_at < lp->maxoff ? shortcut_at : lp->maxoff + 1;
	else
		stop = shortcut_at > lp->minoff ? shortcut_at : lp->minoff - 1;
	switch (lp->bounds->columns[0].width)
	{
		case sizeof(int32):
			return leafread_bounded_items(lp, offnum, stop, forward,
										  sizeof(int32), itemIndex);
		case sizeof(int64):
			return leafread_bounded_items(lp, offnum, stop, forward,
										  sizeof(int64), itemIndex);
		default:
			return leafread_bounded_items(lp, offnum, stop, forward,
										  sizeof(int16), itemIndex);
	}
}

/* The walk forward from offnum, the high key, and the position's items */
static pg_attribute_always_inline void
leafread_forward(LeafreadPage *lp, OffsetNumber offnum, LeafreadKeys keys)
{
	BTScanOpaque so = lp->so;
	Page		page = lp->page;
	OffsetNumber maxoff = lp->maxoff;
	bool	   *continuescan = lp->continuescan;
	LeafreadRunStage stage = LEAFREAD_TEST_LAST;
	int			shortcut_at;
	int			itemIndex = 0;
	bool		one_column = keys == LEAFREAD_KEY_BOUNDS &&
		lp->bounds->ncolumns == 1;

	offnum = Max(offnum, lp->minoff);
	shortcut_at = offnum + LEAFREAD_SHORTCUT_AFTER;
	for (; offnum <= maxoff; offnum = OffsetNumberNext(offnum))
	{
		ItemId		iid;
		IndexTuple	itup;

		if (one_column)
		{
			offnum = leafread_bounded_run(lp, offnum, shortcut_at, true,
										  &itemIndex);
			if (offnum > maxoff || !*continuescan)
				break;
		}
		iid = PageGetItemId(page, offnum);
		if (lp->skip_dead && ItemIdIsDead(iid))
			continue;
		itup = (IndexTuple) PageGetItem(page, iid);
		if (leafread_test(lp, itup, offnum, keys))
		{
			leafread_matched(lp);
			itemIndex = leafread_save(so->currPos.items, so->currTuples,
									  &so->currPos.nextTupleOffset, itemIndex,
									  offnum, itup, true);
			if (unlikely(offnum >= shortcut_at) && offnum < maxoff)
				offnum = leafread_take_run(lp, offnum, true, keys, &stage,
										   &shortcut_at, &itemIndex);
		}
		if (!*continuescan)
			break;
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
		if (keys == LEAFREAD_ARRAY_KEYS)
			offnum = leafread_arrays_skip(lp, offnum, true);
#endif
	}

	/* the high key may show that the page to the right has no match */
	if (*continuescan && !P_RIGHTMOST(lp->opaque)
#if PG_VERSION_NUM >= 180000
		&& !so->scanBehind
#endif
		)
	{
		IndexTuple	hikey = (IndexTuple) PageGetItem(page,
													 PageGetItemId(page, P_HIKEY));
		int			hikey_natts = BTreeTupleGetNAtts(hikey,
													 lp->scan->indexRelation);

#if defined(BTJIT_CHECKKEYS_READPAGE_STATE) && PG_VERSION_NUM >= 180000
		lp->pstate->startikey = 0;
#elif defined(BTJIT_CHECKKEYS_READPAGE_STATE)
		lp->pstate->prechecked = false;
#endif
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
		/* the server's test, which may advance the arrays from it */
		if (keys == LEAFREAD_ARRAY_KEYS)
			(void) leafread_arrays_decide(lp, hikey, hikey_natts);
		else
#endif
			(void) lp->check(lp->scan, hikey, hikey_natts, (int) lp->dir,
							 continuescan, lp->counters);
	}
	if (!*continuescan)
		so->currPos.moreRight = false;
	so->currPos.firstItem = 0;
	so->currPos.lastItem = itemIndex - 1;
	so->currPos.itemIndex = 0;
}

/* The walk backward from offnum, and the position's items */
static pg_attribute_always_inline void
leafread_backward(LeafreadPage *lp, OffsetNumber offnum, LeafreadKeys keys)
{
	BTScanOpaque so = lp->so;
	Page		page = lp->page;
	OffsetNumber minoff = lp->minoff;
	bool	   *continuescan = lp->continuescan;
	LeafreadRunStage stage = LEAFREAD_TEST_LAST;
	int			shortcut_at;
	int			itemIndex = MaxTIDsPerBTreePage;
	bool		one_column = keys == LEAFREAD_KEY_BOUNDS &&
		lp->bounds->ncolumns == 1;

	offnum = Min(offnum, lp->maxoff);
	shortcut_at = (int) offnum - LEAFREAD_SHORTCUT_AFTER;
	for (; offnum >= minoff; offnum = OffsetNumberPrev(offnum))
	{
		ItemId		iid;
		IndexTuple	itup;
		bool		alive = true;

		if (one_column)
		{
			offnum = leafread_bounded_run(lp, offnum, shortcut_at, false,
										  &itemIndex);
			if (!*continuescan)
			{
				so->currPos.moreLeft = false;
				break;
			}
			if (offnum < minoff)
				break;
		}
		iid = PageGetItemId(page, offnum);

		/*
		 * A dead first item is still tested: it may end the scan, which then
		 * need not step to the page on the left.
		 */
		if (lp->skip_dead && ItemIdIsDead(iid))
		{
			if (offnum > minoff)
				continue;
			alive = false;
		}
		itup = (IndexTuple) PageGetItem(page, iid);
		if (leafread_test(lp, itup, offnum, keys) && alive)
		{
			leafread_matched(lp);
			itemIndex = leafread_save(so->currPos.items, so->currTuples,
									  &so->currPos.nextTupleOffset, itemIndex,
									  offnum, itup, false);
			if (unlikely((int) offnum <= shortcut_at) && offnum > minoff)
				offnum = leafread_take_run(lp, offnum, false, keys, &stage,
										   &shortcut_at, &itemIndex);
		}
		if (!*continuescan)
		{
			so->currPos.moreLeft = false;
			break;
		}
#ifdef BTJIT_READPAGE_ARRAYS_SCAN_BEHIND
		/* the server's test left the arrays ahead of this page: done */
		if (keys == LEAFREAD_ARRAY_KEYS && so->scanBehind)
			break;
#endif
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
		if (keys == LEAFREAD_ARRAY_KEYS)
			offnum = leafread_arrays_skip(lp, offnum, false);
#endif
	}
	so->currPos.firstItem = itemIndex;
	so->currPos.lastItem = MaxTIDsPerBTreePage - 1;
	so->currPos.itemIndex = MaxTIDsPerBTreePage - 1;
}

/* What the module's read of a page came to */
typedef enum LeafreadOutcome
{
	LEAFREAD_MATCHED,			/* read: items were saved */
	LEAFREAD_NO_MATCH,			/* read: nothing matched */
	LEAFREAD_LEFT_TO_SERVER		/* not read: the server's function reads
								 * the page, from the start */
} LeafreadOutcome;

/*
 * Read the leaf page in so->currPos.buf from offnum on in the scan's
 * direction, as the server's _bt_readpage does, testing each tuple with
 * the compiled check.  firstpage is the argument of 17 on (whether this is
 * the first page the scan reads), false on 15.  A page left to the server
 * has had nothing written that the server's function does not write again,
 * and nothing released.  That is 18's page whose keys are forced
 * non-required (never without array keys), and on 19 a page where a tuple
 * no check of the module takes ends the walk: moreLeft and moreRight are
 * put back as they came (every other field of the position the server's
 * function sets afresh; taking the page's predicate lock again changes
 * nothing).  A parallel scan, whose read releases the next page before
 * its walk, goes to the server before that when a key is of such a kind.
 */
static pg_attribute_always_inline LeafreadOutcome
leafread_run(IndexScanDesc scan, ScanDirection dir, OffsetNumber offnum,
			 bool firstpage, BtjitCheckEntryFn check, BtjitIndexStats *counts,
			 LeafreadRelease release, LeafreadKeys keys,
			 const BtjitKeyBounds *bounds)
{
	LeafreadPage lp;
#ifdef BTJIT_CHECKKEYS_READPAGE_STATE
	BTReadPageState pstate;

	lp.pstate = &pstate;
	lp.continuescan = &pstate.continuescan;
#elif defined(BTJIT_READPAGE_OWNS_CHECKS)
	BtjitLeafreadChecks checks = {.continuescan = true,.declined = false};
	BTScanPosData *pos = &((BTScanOpaque) scan->opaque)->currPos;
	bool		moreLeft = pos->moreLeft;
	bool		moreRight = pos->moreRight;

	lp.continuescan = &checks.continuescan;
#else
	bool		continuescan = true;

	lp.continuescan = &continuescan;
#endif

	lp.scan = scan;
	lp.so = (BTScanOpaque) scan->opaque;
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	Assert((keys == LEAFREAD_ARRAY_KEYS) == (lp.so->numArrayKeys != 0));
	Assert(keys != LEAFREAD_ARRAY_KEYS || scan->parallel_scan == NULL);
#elif !defined(BTJIT_READPAGE_TAKES_ARRAY_KEYS)
	Assert(lp.so->numArrayKeys == 0);
#endif
#ifdef BTJIT_READPAGE_OWNS_CHECKS
	if (release != LEAFREAD_SERIAL && scan->parallel_scan != NULL)
	{
		for (int i = 0; i < lp.so->numberOfKeys; i++)
			if (lp.so->keyData[i].sk_flags & BTJIT_KEYS_LEFT_TO_SERVER)
			{
				btjit_count_stock_leafread(scan->indexRelation,
										   BTJIT_STOCK_ROW_COMPARE);
				return LEAFREAD_LEFT_TO_SERVER;
			}
	}
#endif
	lp.page = BufferGetPage(lp.so->currPos.buf);
	lp.opaque = BTPageGetOpaque(lp.page);
	lp.minoff = P_FIRSTDATAKEY(lp.opaque);
	lp.maxoff = PageGetMaxOffsetNumber(lp.page);
	lp.natts = IndexRelationGetNumberOfAttributes(scan->indexRelation);
	lp.skip_dead = scan->ignore_killed_tuples;
	lp.dir = dir;
	lp.release = release;
	lp.check = check;
	lp.counters = &counts->jit_checks;
	lp.bounds = bounds;
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	lp.stock_array_checks = &counts->stock_checks[BTJIT_STOCK_ARRAY_KEYS];
#endif
	switch (leafread_begin(&lp, firstpage, keys))
	{
		case LEAFREAD_START_WALK:
			break;
		case LEAFREAD_START_TO_SERVER:
			btjit_count_stock_leafread(scan->indexRelation,
									   btjit_array_keys_reason(lp.so));
			return LEAFREAD_LEFT_TO_SERVER;
		case LEAFREAD_START_BEHIND_ARRAYS:
#ifdef BTJIT_READPAGE_ARRAYS_SCAN_BEHIND
			/* another primitive scan, from the next descent */
			if (ScanDirectionIsForward(dir))
				lp.so->currPos.moreRight = false;
			else
				lp.so->currPos.moreLeft = false;
			lp.so->needPrimScan = true;
			counts->jit_leafreads++;
			return LEAFREAD_NO_MATCH;
#else
			pg_unreachable();
#endif
	}
	if (ScanDirectionIsForward(dir))
		leafread_forward(&lp, offnum, keys);
	else
		leafread_backward(&lp, offnum, keys);
#ifdef BTJIT_READPAGE_OWNS_CHECKS
	if (unlikely(checks.declined))
	{
		/* a parallel scan has released its next page: not twice */
		if (release == LEAFREAD_RELEASES)
			elog(ERROR, "btree_jit: parallel leaf read of index \"%s\" declined after its release",
				 RelationGetRelationName(scan->indexRelation));
		pos->moreLeft = moreLeft;
		pos->moreRight = moreRight;
		/* the one key checkkeys.c's test of a tuple does not take */
		btjit_count_stock_leafread(scan->indexRelation,
								   BTJIT_STOCK_ROW_COMPARE);
		return LEAFREAD_LEFT_TO_SERVER;
	}
#endif
	counts->jit_leafreads++;
	return lp.so->currPos.firstItem <= lp.so->currPos.lastItem ?
		LEAFREAD_MATCHED : LEAFREAD_NO_MATCH;
}

/*
 * The module's read of a leaf page, or the server's: true if anything
 * matched.  A copy for serial scans, one for parallel ones, and on 17 and
 * 18 one for serial scans with array keys.
 */
static pg_attribute_always_inline bool
leafread_or_stock(IndexScanDesc scan, ScanDirection dir, OffsetNumber offnum,
				  bool firstpage, BtjitCheckEntryFn check,
				  BtjitIndexStats *counts, LeafreadRelease release,
				  LeafreadKeys keys, const BtjitKeyBounds *bounds)
{
	LeafreadOutcome outcome = leafread_run(scan, dir, offnum, firstpage, check,
										   counts, release, keys, bounds);

	if (unlikely(outcome == LEAFREAD_LEFT_TO_SERVER))
		return BTJIT_STOCK_READPAGE(scan, dir, offnum, firstpage);
	return outcome == LEAFREAD_MATCHED;
}

static pg_noinline bool
btjit_leafread(IndexScanDesc scan, ScanDirection dir, OffsetNumber offnum,
			   bool firstpage, BtjitCheckEntryFn check, BtjitIndexStats *counts)
{
	return leafread_or_stock(scan, dir, offnum, firstpage, check, counts,
							 LEAFREAD_SERIAL, LEAFREAD_PLAIN_KEYS, NULL);
}

/*
 * A serial read whose keys may be bounds (btjit_keys_may_bound): read with
 * them when they are, in a copy of the walk of its own.
 */
static pg_noinline bool
btjit_leafread_bounded(IndexScanDesc scan, ScanDirection dir,
					   OffsetNumber offnum, bool firstpage,
					   BtjitCheckEntryFn check, BtjitIndexStats *counts)
{
	BtjitKeyBounds bounds;

	if (!btjit_key_bounds(scan, dir, &bounds))
		return btjit_leafread(scan, dir, offnum, firstpage, check, counts);
	return leafread_or_stock(scan, dir, offnum, firstpage, check, counts,
							 LEAFREAD_SERIAL, LEAFREAD_KEY_BOUNDS, &bounds);
}

/*
 * A serial scan's read without array keys: with its keys as bounds when
 * they are (keybounds.h), the cheap test of whether they may be made
 * here, so that a scan whose keys are not pays little more than it.
 */
static inline bool
btjit_leafread_serial(IndexScanDesc scan, ScanDirection dir,
					  OffsetNumber offnum, bool firstpage,
					  BtjitCheckEntryFn check, BtjitIndexStats *counts)
{
	if (btjit_keys_may_bound((BTScanOpaque) scan->opaque))
		return btjit_leafread_bounded(scan, dir, offnum, firstpage, check,
									  counts);
	return btjit_leafread(scan, dir, offnum, firstpage, check, counts);
}

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
static pg_noinline bool
btjit_leafread_arrays(IndexScanDesc scan, ScanDirection dir,
					  OffsetNumber offnum, bool firstpage,
					  BtjitCheckEntryFn check, BtjitIndexStats *counts)
{
	return leafread_or_stock(scan, dir, offnum, firstpage, check, counts,
							 LEAFREAD_SERIAL, LEAFREAD_ARRAY_KEYS, NULL);
}
#endif

static pg_noinline bool
btjit_leafread_parallel(IndexScanDesc scan, ScanDirection dir,
						OffsetNumber offnum, bool firstpage,
						BtjitCheckEntryFn check, BtjitIndexStats *counts)
{
	return leafread_or_stock(scan, dir, offnum, firstpage, check, counts,
							 LEAFREAD_RELEASES, LEAFREAD_PLAIN_KEYS, NULL);
}

/*
 * The first field of the scan position that differs, or NULL (also
 * first.c's, for the position a scan starts at).
 */
const char *
btjit_scanpos_difference(const BTScanPosData *a, const BTScanPosData *b,
						  const char *tuples_a, const char *tuples_b)
{
	if (a->buf != b->buf)
		return "buf";
	if (a->currPage != b->currPage)
		return "currPage";
	if (a->nextPage != b->nextPage)
		return "nextPage";
#if PG_VERSION_NUM >= 180000
	if (a->prevPage != b->prevPage)
		return "prevPage";
#endif
#if PG_VERSION_NUM >= 170000
	if (a->dir != b->dir)
		return "dir";
#endif
	if (a->lsn != b->lsn)
		return "lsn";
	if (a->moreLeft != b->moreLeft)
		return "moreLeft";
	if (a->moreRight != b->moreRight)
		return "moreRight";
	if (a->nextTupleOffset != b->nextTupleOffset)
		return "nextTupleOffset";
	if (a->firstItem != b->firstItem)
		return "firstItem";
	if (a->lastItem != b->lastItem)
		return "lastItem";
	if (a->itemIndex != b->itemIndex)
		return "itemIndex";
	/* both started from the same bytes: any other difference is a write */
	if (memcmp(a->items, b->items, sizeof(a->items)) != 0)
		return "items";
	if (memcmp(a, b, sizeof(BTScanPosData)) != 0)
		return "another field";
	if (tuples_a != NULL && memcmp(tuples_a, tuples_b, BLCKSZ) != 0)
		return "the saved tuples";
	return NULL;
}

/*
 * The page's items marked LP_DEAD.  Another backend may mark items dead
 * while this one holds its share lock (_bt_killitems sets the bit as a
 * hint), never unmark them, so a changed count means the two reads of
 * verify mode saw different pages.
 */
static int
leafread_dead_items(Page page)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			ndead = 0;

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff;
		 off = OffsetNumberNext(off))
		ndead += ItemIdIsDead(PageGetItemId(page, off)) ? 1 : 0;
	return ndead;
}

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
/*
 * 17 and 18: what a read of a scan with array keys may change besides the
 * position, through the server's _bt_checkkeys (targets.h's
 * BtjitArrayState).  verify puts it back between its runs and compares it;
 * first.c's verify too, around its starts of a primitive scan.
 */
void
btjit_array_state_save(BTScanOpaque so, BtjitArrayState *a)
{
	if (a->keys == NULL)
	{
		a->keys = palloc(sizeof(ScanKeyData) * Max(so->numberOfKeys, 1));
		a->cur_elem = palloc(sizeof(int) * Max(so->numArrayKeys, 1));
	}
	memcpy(a->keys, so->keyData, sizeof(ScanKeyData) * so->numberOfKeys);
	for (int i = 0; i < so->numArrayKeys; i++)
		a->cur_elem[i] = so->arrayKeys[i].cur_elem;
	a->needPrimScan = so->needPrimScan;
	a->scanBehind = so->scanBehind;
#if PG_VERSION_NUM >= 180000
	a->oppositeDirCheck = so->oppositeDirCheck;
#endif
}

void
btjit_array_state_restore(BTScanOpaque so, const BtjitArrayState *a)
{
	memcpy(so->keyData, a->keys, sizeof(ScanKeyData) * so->numberOfKeys);
	for (int i = 0; i < so->numArrayKeys; i++)
		so->arrayKeys[i].cur_elem = a->cur_elem[i];
	so->needPrimScan = a->needPrimScan;
	so->scanBehind = a->scanBehind;
#if PG_VERSION_NUM >= 180000
	so->oppositeDirCheck = a->oppositeDirCheck;
#endif
}

void
btjit_array_state_free(BtjitArrayState *a)
{
	if (a->keys != NULL)
	{
		pfree(a->keys);
		pfree(a->cur_elem);
		a->keys = NULL;
		a->cur_elem = NULL;
	}
}

/* The first part of it that differs between the scan and 'ours', or NULL */
const char *
btjit_array_state_difference(BTScanOpaque so, const BtjitArrayState *ours)
{
	for (int i = 0; i < so->numArrayKeys; i++)
		if (so->arrayKeys[i].cur_elem != ours->cur_elem[i])
			return "an array's current element";
	for (int i = 0; i < so->numberOfKeys; i++)
		if (so->keyData[i].sk_flags != ours->keys[i].sk_flags ||
			so->keyData[i].sk_argument != ours->keys[i].sk_argument)
			return "a scan key's value or flags";
	if (so->needPrimScan != ours->needPrimScan)
		return "needPrimScan";
	if (so->scanBehind != ours->scanBehind)
		return "scanBehind";
#if PG_VERSION_NUM >= 180000
	if (so->oppositeDirCheck != ours->oppositeDirCheck)
		return "oppositeDirCheck";
#endif
	return NULL;
}
#endif

/*
 * What a read writes into the scan, as verify saves it: the position, the
 * saved tuples of an index-only scan, and on 17 and 18 the arrays.  verify puts
 * the scan back to it between its two reads, and compares the scan with
 * the module's after them.
 */
typedef struct LeafreadScanState
{
	BTScanPosData pos;
	char	   *tuples;			/* a copy of so->currTuples, or NULL */
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	BtjitArrayState arrays;
#endif
} LeafreadScanState;

static LeafreadScanState *
leafread_state_new(BTScanOpaque so)
{
	LeafreadScanState *st = palloc0(sizeof(LeafreadScanState));

	if (so->currTuples)
		st->tuples = palloc(BLCKSZ);
	return st;
}

static void
leafread_state_free(LeafreadScanState *st)
{
	if (st->tuples)
		pfree(st->tuples);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	btjit_array_state_free(&st->arrays);
#endif
	pfree(st);
}

static void
leafread_state_save(BTScanOpaque so, LeafreadScanState *st)
{
	memcpy(&st->pos, &so->currPos, sizeof(BTScanPosData));
	if (st->tuples)
		memcpy(st->tuples, so->currTuples, BLCKSZ);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	if (so->numArrayKeys != 0)
		btjit_array_state_save(so, &st->arrays);
#endif
}

static void
leafread_state_restore(BTScanOpaque so, const LeafreadScanState *st)
{
	memcpy(&so->currPos, &st->pos, sizeof(BTScanPosData));
	if (st->tuples)
		memcpy(so->currTuples, st->tuples, BLCKSZ);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	if (so->numArrayKeys != 0)
		btjit_array_state_restore(so, &st->arrays);
#endif
}

/* The first thing in which the scan differs from 'ours', or NULL */
static const char *
leafread_state_difference(BTScanOpaque so, const LeafreadScanState *ours)
{
	const char *difference = btjit_scanpos_difference(&so->currPos,
													   &ours->pos,
													   so->currTuples,
													   ours->tuples);

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	if (difference == NULL && so->numArrayKeys != 0)
		difference = btjit_array_state_difference(so, &ours->arrays);
#endif
	return difference;
}

/* reads of one page verify mode makes before it stops comparing */
#define BTJIT_VERIFY_READ_ATTEMPTS 4

/*
 * verify mode: the module's leaf read runs first, from the scan position
 * as the caller left it, and its result is put aside; the position is put
 * back and the server's _bt_readpage runs.  Every byte of the position and
 * of the saved tuples (on 17 and 18 also the arrays' state) must then agree, and
 * the server's result stands.  A scan that skips killed tuples reads the
 * page's LP_DEAD bits, which another backend may set between the two
 * reads: a difference that comes with more dead items is read again (both
 * sides), and a page that keeps changing is left uncompared (not counted
 * as verified) rather than reported.  On 19, where the compiled checks
 * have no server function to be compared with one by one, the checks of a
 * compared read count as verified: each decided an item of the position,
 * or where the walk stopped.
 */
static pg_noinline bool
btjit_leafread_verify(IndexScanDesc scan, ScanDirection dir,
					  OffsetNumber offnum, bool firstpage,
					  BtjitCheckEntryFn check, BtjitIndex *ix)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	LeafreadScanState *before = leafread_state_new(so);
	LeafreadScanState *ours = leafread_state_new(so);
	LeafreadKeys keys = LEAFREAD_PLAIN_KEYS;
	BtjitKeyBounds bounds;
	LeafreadOutcome outcome;
	bool		our_result;
	bool		stock_result;
	const char *difference = NULL;
	uint64		leafreads_before = ix->counts.jit_leafreads;
	Page		page = BufferGetPage(so->currPos.buf);
	bool		compared = true;
#ifdef BTJIT_READPAGE_OWNS_CHECKS
	uint64		checks_before = 0;
#endif

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	if (so->numArrayKeys != 0)
		keys = LEAFREAD_ARRAY_KEYS;
	else
#endif
	/* the walk the fast path takes (btjit_leafread_serial) */
	if (scan->parallel_scan == NULL && btjit_keys_may_bound(so) &&
		btjit_key_bounds(scan, dir, &bounds))
		keys = LEAFREAD_KEY_BOUNDS;
	leafread_state_save(so, before);
	for (int attempt = 1;; attempt++)
	{
		int			dead_before = leafread_dead_items(page);

#ifdef BTJIT_READPAGE_OWNS_CHECKS
		checks_before = ix->counts.jit_checks;
#endif
		outcome = leafread_run(scan, dir, offnum, firstpage, check,
							   &ix->counts, LEAFREAD_LEAVES_RELEASE, keys,
							   keys == LEAFREAD_KEY_BOUNDS ? &bounds : NULL);
		our_result = outcome == LEAFREAD_MATCHED;
		leafread_state_save(so, ours);
		leafread_state_restore(so, before);

		stock_result = BTJIT_STOCK_READPAGE(scan, dir, offnum, firstpage);
		if (outcome == LEAFREAD_LEFT_TO_SERVER)
		{
			/* the module did not read it: nothing to compare */
			compared = false;
			break;
		}

		difference = leafread_state_difference(so, ours);
		if (likely(our_result == stock_result && difference == NULL) ||
			!scan->ignore_killed_tuples ||
			leafread_dead_items(page) == dead_before)
			break;
		/* items were killed between the reads: read both again */
		if (attempt == BTJIT_VERIFY_READ_ATTEMPTS)
		{
			compared = false;
			break;
		}
		leafread_state_restore(so, before);
	}
	if (unlikely(compared &&
				 (our_result != stock_result || difference != NULL)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: leaf read of index \"%s\" differs from the server's own",
						RelationGetRelationName(scan->indexRelation)),
				 errdetail("Block %u, %s scan from offset %u: _bt_readpage returned %s with items %d..%d, the module's leaf read returned %s with items %d..%d; first difference: %s; shape %s.",
						   so->currPos.currPage,
						   ScanDirectionIsBackward(dir) ? "backward" : "forward",
						   (unsigned) offnum,
						   stock_result ? "true" : "false",
						   so->currPos.firstItem, so->currPos.lastItem,
						   our_result ? "true" : "false",
						   ours->pos.firstItem, ours->pos.lastItem,
						   difference ? difference : "the result",
						   ix->signature),
				 errhint(BTJIT_VERIFY_HINT)));
	/* only a read the module made, and compared, counts */
	if (compared && ix->counts.jit_leafreads != leafreads_before)
	{
		ix->counts.verified_leafreads++;
#ifdef BTJIT_READPAGE_OWNS_CHECKS
		ix->counts.verified_checks += ix->counts.jit_checks - checks_before;
#endif
	}
	leafread_state_free(before);
	leafread_state_free(ours);
	return stock_result;
}

#ifndef BTJIT_READPAGE_TAKES_ARRAY_KEYS
/*
 * Whether the module's read takes a scan with array keys: on 17 and 18 a
 * serial scan whose every array is required in both directions, without
 * skip arrays (pg_compat.h, BTJIT_READPAGE_ARRAY_HANDOFF); a non-required
 * array advances inside the server's _bt_check_compare, tuple by tuple, a
 * parallel scan schedules its primitive scans through the shared state,
 * and a skip array's current element may be a sentinel no compiled
 * comparison takes.
 */
static inline bool
leafread_takes_arrays(IndexScanDesc scan)
{
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (scan->parallel_scan != NULL)
		return false;
#if PG_VERSION_NUM >= 180000
	/* a skip array's element may be a sentinel (-inf, +inf, next, prior) */
	if (so->skipScan)
		return false;
#endif
	for (int i = 0; i < so->numberOfKeys; i++)
	{
		int			flags = so->keyData[i].sk_flags;

		if ((flags & SK_SEARCHARRAY) &&
			(flags & (SK_BT_REQFWD | SK_BT_REQBKWD)) !=
			(SK_BT_REQFWD | SK_BT_REQBKWD))
			return false;
	}
	return true;
#else
	(void) scan;
	return false;
#endif
}
#endif

/*
 * A parallel worker's first leaf read of an index.  A worker may read its
 * pages without ever searching the index (another participant descended,
 * and the worker takes the next page from the shared state), so the page
 * search's dispatcher would never open it: open it here, once per worker
 * and index (jitcache.c examines it at once in a worker and links cached
 * code).  Whether the read now has compiled checks.  Called for parallel
 * scans only.
 */
static pg_noinline bool
leafread_worker_open(IndexScanDesc scan)
{
	Relation	rel = scan->indexRelation;
	BtjitSlot  *slot = btjit_slot_for(rel);

	if (!IsParallelWorker() || !btjit_enabled ||
		btjit_slot_index(slot, rel) != NULL)
		return false;
	(void) btjit_dispatch_open(rel, false);
	return btjit_code_active && btjit_slot_entry_CHECKKEYS(slot, rel) != NULL;
}

/*
 * The redirected _bt_readpage (15, 17, 18 and 19): the module's leaf read
 * (btjit_leafread) for a scan whose index has compiled scan-key checks,
 * else the original.  A scan with array keys is the module's on 15 and
 * (with its arrays required, and no skip arrays) 17 and 18, and the
 * server's on 19
 * (pg_compat.h, BTJIT_READPAGE_TAKES_ARRAY_KEYS and _ARRAY_HANDOFF); a
 * parallel scan's read hands the next page to the other participants as
 * the server's does (leafread_release_parallel).  offnum arrives in 32
 * bits and is truncated here: gcc's callers leave the upper bits
 * undefined (src/README, "Finding the leaf read").  17 on add firstPage, a
 * bool, of which the callee reads the low byte only.
 */
#ifdef BTJIT_READPAGE_FIRSTPAGE
static bool
btjit_dispatch_readpage(IndexScanDesc scan, ScanDirection dir, uint32 offnum,
						bool firstpage)
#else
static bool
btjit_dispatch_readpage(IndexScanDesc scan, ScanDirection dir, uint32 offnum)
#endif
{
	Relation	rel = scan->indexRelation;
	BtjitSlot  *slot;
	BtjitCheckEntryFn check;
#ifndef BTJIT_READPAGE_FIRSTPAGE
	bool		firstpage = false;	/* 15 has no such argument */
#endif

	if (unlikely(!btjit_code_active) &&
		(scan->parallel_scan == NULL || !leafread_worker_open(scan)))
		return BTJIT_STOCK_READPAGE(scan, dir, (OffsetNumber) offnum,
									firstpage);
#ifndef BTJIT_READPAGE_TAKES_ARRAY_KEYS
	if (((BTScanOpaque) scan->opaque)->numArrayKeys != 0 &&
		!leafread_takes_arrays(scan))
	{
		btjit_count_stock_leafread(rel,
								   btjit_array_keys_reason((BTScanOpaque) scan->opaque));
		return BTJIT_STOCK_READPAGE(scan, dir, (OffsetNumber) offnum,
									firstpage);
	}
#endif

	slot = btjit_slot_for(rel);
	check = btjit_slot_entry_CHECKKEYS(slot, rel);
	if (unlikely(check == NULL) && scan->parallel_scan != NULL &&
		leafread_worker_open(scan))
		check = btjit_slot_entry_CHECKKEYS(slot, rel);
	if (likely(check != NULL))
	{
		if (likely(btjit_fast_ok))
		{
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
			if (((BTScanOpaque) scan->opaque)->numArrayKeys != 0)
				return btjit_leafread_arrays(scan, dir, (OffsetNumber) offnum,
											 firstpage, check,
											 &slot->ix->counts);
#endif
			if (likely(scan->parallel_scan == NULL))
				return btjit_leafread_serial(scan, dir, (OffsetNumber) offnum,
											 firstpage, check,
											 &slot->ix->counts);
			return btjit_leafread_parallel(scan, dir, (OffsetNumber) offnum,
										   firstpage, check,
										   &slot->ix->counts);
		}
		return btjit_leafread_verify(scan, dir, (OffsetNumber) offnum,
									 firstpage, check, slot->ix);
	}
	btjit_count_stock_in_slot(slot, rel, stock_leafreads,
							  BTJIT_STOCK_NOT_COMPILED);
	return BTJIT_STOCK_READPAGE(scan, dir, (OffsetNumber) offnum, firstpage);
}

/*
 * The leaf read of the page a simple scan (not parallel; on 17 and 18 with
 * or without array keys) of index ix starts on (first.c), as _bt_first
 * calls _bt_readpage (firstPage true from 17 on): the module's read at once, the dispatcher
 * when verifying or when the index has no compiled check.
 */
bool
btjit_readpage_first(IndexScanDesc scan, ScanDirection dir,
					 OffsetNumber offnum, BtjitIndex *ix)
{
	BtjitCheckEntryFn check = btjit_entry_CHECKKEYS(ix->entries);

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	/* 17, 18: a primitive scan of a scan with array keys */
	if (((BTScanOpaque) scan->opaque)->numArrayKeys != 0)
	{
		if (likely(check != NULL && btjit_fast_ok) &&
			leafread_takes_arrays(scan))
			return btjit_leafread_arrays(scan, dir, offnum, true, check,
										 &ix->counts);
		return btjit_dispatch_readpage(scan, dir, offnum, true);
	}
#endif
#ifdef BTJIT_READPAGE_FIRSTPAGE
	if (likely(check != NULL && btjit_fast_ok))
		return btjit_leafread_serial(scan, dir, offnum, true, check,
									 &ix->counts);
	return btjit_dispatch_readpage(scan, dir, offnum, true);
#else
	if (likely(check != NULL && btjit_fast_ok))
		return btjit_leafread_serial(scan, dir, offnum, false, check,
									 &ix->counts);
	return btjit_dispatch_readpage(scan, dir, offnum);
#endif
}
#endif							/* BTJIT_READPAGE_REDIRECTABLE */
