/*-------------------------------------------------------------------------
 *
 * gettuple.c
 *	  A scan's step from one saved item to the next on the same leaf page,
 *	  for an index with compiled code, taken in the redirected btgettuple
 *	  (PostgreSQL 15, 17, 18 and 19) and, where the executor asks for the
 *	  row, in the redirected index_getnext_tid (15, 17, 18).
 *
 * The executor asks for each row of an index scan with index_getnext_tid,
 * which calls the access method's amgettuple, btgettuple, which, once the
 * scan is positioned, calls _bt_next: one more item index in the scan's
 * direction, and that item's TID (and, for an index-only scan, its tuple
 * in so->currTuples) returned; index_getnext_tid then clears two flags and
 * counts the row in the index's statistics.  A leaf read saves every
 * matching item of its page at once, so nearly every call is that step:
 * some eighty instructions of the server's, in three functions, for a
 * dozen of work.
 *
 * The module takes exactly the step within the page: a scan positioned on
 * a page (currPos valid), no tuple to mark dead (kill_prior_tuple, which
 * the server records) and an item left on the page in the scan's
 * direction.  There btgettuple clears xs_recheck and _bt_next moves the
 * item index and returns the item, and nothing else: the arrays, the
 * parallel scan and the mark are touched only when a page is done, so
 * the step is the same for every form of scan.  Everything else is the
 * server's btgettuple: the first call (_bt_first), the step to another
 * page (_bt_steppage), a tuple to kill, an index without compiled code,
 * and every call while the module is off.
 *
 * A step is some twenty instructions, so finding the index's state must
 * not cost as much: runtime/dispatch.c keeps the index of the last step
 * (btjit_step_index), and only a step in a scan of another index reads the
 * slot table (src/README, "The step from one item to the next").
 * index_getnext_tid takes the step only for a scan of that index (which
 * only btgettuple sets, so that a scan of any other access method, or of
 * another index, is the server's after one comparison), and then does
 * index_getnext_tid's part itself.
 *
 * verify mode: the module works out the step, the server's function takes
 * it, and the two must agree on the result, the item index, the TID, the
 * tuple and xs_recheck, and, for index_getnext_tid, on the flags it clears
 * and the row it counts.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "catalog/pg_am_d.h"
#include "pgstat.h"
#include "utils/rel.h"

#include "targets/targets.h"

typedef bool (*BtjitGettupleFn) (IndexScanDesc scan, ScanDirection dir);

#define BTJIT_STOCK_GETTUPLE \
	((BtjitGettupleFn) btjit_module.stock[BTJIT_TARGET_GETTUPLE])

static bool btjit_dispatch_gettuple(IndexScanDesc scan, ScanDirection dir);

const BtjitTargetImpl btjit_target_gettuple = {
	.dispatcher = (void *) btjit_dispatch_gettuple,
};

#ifdef BTJIT_GETNEXT_REDIRECTABLE
typedef ItemPointer (*BtjitGetnextFn) (IndexScanDesc scan, ScanDirection dir);

#define BTJIT_STOCK_GETNEXT \
	((BtjitGetnextFn) btjit_module.stock[BTJIT_TARGET_GETNEXT])

static ItemPointer btjit_dispatch_getnext(IndexScanDesc scan, ScanDirection dir);

const BtjitTargetImpl btjit_target_getnext = {
	.dispatcher = (void *) btjit_dispatch_getnext,
};
#else
const BtjitTargetImpl btjit_target_getnext = {0};
#endif

/*
 * Whether _bt_next returns the item's tuple: 15 and 17 test the scan's
 * request, 18 and 19 (_bt_returnitem) whether the scan has tuples saved,
 * which btrescan allocates exactly when the scan asks for them.
 */
#if PG_VERSION_NUM >= 180000
#define GETTUPLE_RETURNS_TUPLE(scan, so) ((so)->currTuples != NULL)
#else
#define GETTUPLE_RETURNS_TUPLE(scan, so) ((scan)->xs_want_itup)
#endif

/*
 * The step: the item at next returned, as btgettuple and _bt_next return
 * it (the caller counts it).
 */
static inline void
gettuple_step(IndexScanDesc scan, BTScanOpaque so, int next)
{
	BTScanPosItem *item = &so->currPos.items[next];

	scan->xs_recheck = false;
	so->currPos.itemIndex = next;
	scan->xs_heaptid = item->heapTid;
	if (GETTUPLE_RETURNS_TUPLE(scan, so))
		scan->xs_itup = (IndexTuple) (so->currTuples + item->tupleOffset);
}

/*
 * Whether the scan's page has an item left in its direction (any direction
 * but forward is backward, as in _bt_next), and which, in *next; for a
 * scan positioned on a page and with no tuple to kill.
 */
static inline bool
gettuple_next_item(BTScanOpaque so, ScanDirection dir, int *next)
{
	if (ScanDirectionIsForward(dir))
	{
		*next = so->currPos.itemIndex + 1;
		return *next <= so->currPos.lastItem;
	}
	*next = so->currPos.itemIndex - 1;
	return *next >= so->currPos.firstItem;
}

/* What a step to item next returns, worked out before the server's takes it */
typedef struct GettupleExpected
{
	int			next;
	ItemPointerData heap_tid;
	IndexTuple	itup;
} GettupleExpected;

static inline void
gettuple_expect(IndexScanDesc scan, BTScanOpaque so, int next,
				GettupleExpected *expected)
{
	BTScanPosItem *item = &so->currPos.items[next];

	expected->next = next;
	expected->heap_tid = item->heapTid;
	expected->itup = GETTUPLE_RETURNS_TUPLE(scan, so) ?
		(IndexTuple) (so->currTuples + item->tupleOffset) : scan->xs_itup;
}

/*
 * Where the step the server's function took differs from the expected
 * one (item index, TID, tuple, xs_recheck), or NULL.
 */
static const char *
gettuple_difference(IndexScanDesc scan, BTScanOpaque so,
					const GettupleExpected *expected)
{
	if (so->currPos.itemIndex != expected->next)
		return "the item index";
	if (!ItemPointerEquals(&scan->xs_heaptid,
						   (ItemPointer) &expected->heap_tid))
		return "the heap TID";
	if (scan->xs_itup != expected->itup)
		return "the index tuple";
	if (scan->xs_recheck)
		return "xs_recheck";
	return NULL;
}

static pg_noinline bool
gettuple_verify(IndexScanDesc scan, ScanDirection dir, BtjitIndex *ix,
				int next)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	GettupleExpected expected;
	const char *difference;
	bool		found;

	gettuple_expect(scan, so, next, &expected);
	found = BTJIT_STOCK_GETTUPLE(scan, dir);
	ix->counts.jit_row_steps++;
	difference = found ? gettuple_difference(scan, so, &expected) :
		"the result";
	if (unlikely(difference != NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: the step to the next item of index \"%s\" differs from the server's btgettuple",
						RelationGetRelationName(scan->indexRelation)),
				 errdetail("They differ in %s: the module's step returns item %d, the server's %s item %d; items %d to %d, %s scan.",
						   difference, next,
						   found ? "returned" : "found no",
						   so->currPos.itemIndex,
						   so->currPos.firstItem, so->currPos.lastItem,
						   ScanDirectionIsForward(dir) ? "forward" : "backward"),
				 errhint(BTJIT_VERIFY_HINT)));
	ix->counts.verified_row_steps++;
	return found;
}

/*
 * The module's state for the scan's index, from its slot (and kept as the
 * step's entry), or NULL when the index has no compiled code or its slot
 * holds another index.
 */
static BtjitIndex *
gettuple_index(Relation rel)
{
	BtjitIndex *ix = btjit_slot_index(btjit_slot_for(rel), rel);

	if (ix == NULL || ix->fn == NULL)
		return NULL;
	btjit_step_index_set(rel, ix);
	return ix;
}

/* verify mode, for a scan positioned and with no tuple to kill */
static pg_noinline bool
gettuple_verify_step(IndexScanDesc scan, ScanDirection dir)
{
	BtjitIndex *ix;
	int			next;

	if (!gettuple_next_item((BTScanOpaque) scan->opaque, dir, &next) ||
		(ix = gettuple_index(scan->indexRelation)) == NULL)
		return BTJIT_STOCK_GETTUPLE(scan, dir);
	return gettuple_verify(scan, dir, ix, next);
}

/* A step in a scan of another index than the last stepped one. */
static pg_noinline bool
gettuple_other_index(IndexScanDesc scan, ScanDirection dir, int next)
{
	BtjitIndex *ix = gettuple_index(scan->indexRelation);

	if (ix == NULL)
		return BTJIT_STOCK_GETTUPLE(scan, dir);
	gettuple_step(scan, (BTScanOpaque) scan->opaque, next);
	ix->counts.jit_row_steps++;
	return true;
}

/*
 * The first call of a scan goes to the server's function after one test,
 * the call at a page's end after six: a probe of a unique key makes just
 * these two.  The module off costs each step four tests.
 */
static bool
btjit_dispatch_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	Relation	rel = scan->indexRelation;
	int			next;

	if (!BTScanPosIsValid(so->currPos) || scan->kill_prior_tuple)
		return BTJIT_STOCK_GETTUPLE(scan, dir);
	if (unlikely(!btjit_fast_ok))
		return btjit_code_active ? gettuple_verify_step(scan, dir) :
			BTJIT_STOCK_GETTUPLE(scan, dir);
	if (!gettuple_next_item(so, dir, &next))
		return BTJIT_STOCK_GETTUPLE(scan, dir);
	if (rel != btjit_step_index.rel || rel->rd_id != btjit_step_index.relid)
		return gettuple_other_index(scan, dir, next);
	gettuple_step(scan, so, next);
	btjit_step_index.ix->counts.jit_row_steps++;
	return true;
}

#ifdef BTJIT_GETNEXT_REDIRECTABLE

/*
 * Whether index_getnext_tid's call is a step the module takes, for a scan
 * of a B-tree index: btgettuple's conditions, and the relation's
 * statistics entry set up (the server's function sets it up otherwise,
 * pgstat_count_index_tuples).
 */
static inline bool
getnext_is_step(IndexScanDesc scan, BTScanOpaque so, ScanDirection dir,
				int *next)
{
	return BTScanPosIsValid(so->currPos) && !scan->kill_prior_tuple &&
		gettuple_next_item(so, dir, next) &&
		scan->indexRelation->pgstat_info != NULL;
}

/* The step, and what index_getnext_tid does after btgettuple. */
static inline ItemPointer
getnext_step(IndexScanDesc scan, BTScanOpaque so, int next, BtjitIndex *ix)
{
	gettuple_step(scan, so, next);
	ix->counts.jit_tid_steps++;
	scan->xs_heap_continue = false;
	BTJIT_PGSTAT_TUPLES_RETURNED(scan->indexRelation->pgstat_info)++;
	return &scan->xs_heaptid;
}

/*
 * verify mode, for index_getnext_tid: the module works out the step, the
 * server's index_getnext_tid takes it (through the redirected btgettuple,
 * whose verify mode checks the step in its own terms), and the two must
 * agree on the TID and tuple returned and on what index_getnext_tid adds:
 * the two flags cleared and one row counted in the index's statistics.
 */
static pg_noinline ItemPointer
getnext_verify(IndexScanDesc scan, ScanDirection dir)
{
	Relation	rel = scan->indexRelation;
	BTScanOpaque so;
	BtjitIndex *ix;
	GettupleExpected expected;
	PgStat_Counter returned;
	ItemPointer tid;
	const char *difference;
	int			next;

	if (rel->rd_rel->relam != BTREE_AM_OID)
		return BTJIT_STOCK_GETNEXT(scan, dir);
	so = (BTScanOpaque) scan->opaque;
	if (!getnext_is_step(scan, so, dir, &next) ||
		(ix = gettuple_index(rel)) == NULL)
		return BTJIT_STOCK_GETNEXT(scan, dir);
	gettuple_expect(scan, so, next, &expected);
	returned = BTJIT_PGSTAT_TUPLES_RETURNED(rel->pgstat_info);

	tid = BTJIT_STOCK_GETNEXT(scan, dir);
	ix->counts.jit_tid_steps++;
	difference = tid == &scan->xs_heaptid ?
		gettuple_difference(scan, so, &expected) : "the result";
	if (difference == NULL &&
		(scan->kill_prior_tuple || scan->xs_heap_continue))
		difference = "the flags";
	if (difference == NULL &&
		(rel->pgstat_info == NULL ||
		 BTJIT_PGSTAT_TUPLES_RETURNED(rel->pgstat_info) != returned + 1))
		difference = "the rows counted";
	if (unlikely(difference != NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: the step to the next item of index \"%s\" differs from the server's index_getnext_tid",
						RelationGetRelationName(rel)),
				 errdetail("They differ in %s: the module's step returns item %d, the server's %s item %d; items %d to %d, %s scan.",
						   difference, next,
						   tid != NULL ? "returned" : "found no",
						   so->currPos.itemIndex,
						   so->currPos.firstItem, so->currPos.lastItem,
						   ScanDirectionIsForward(dir) ? "forward" : "backward"),
				 errhint(BTJIT_VERIFY_HINT)));
	ix->counts.verified_tid_steps++;
	return tid;
}

/*
 * A call of a positioned B-tree scan of another index than the last
 * stepped one: a step takes the index's state from its slot (and makes it
 * the step's entry), as btgettuple does, so that a nested loop alternating
 * two indexes does not pay the server's function and btgettuple's redirect
 * for each step.
 */
static pg_noinline ItemPointer
getnext_other_index(IndexScanDesc scan, ScanDirection dir)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	BtjitIndex *ix;
	int			next;

	if (!getnext_is_step(scan, so, dir, &next) ||
		(ix = gettuple_index(scan->indexRelation)) == NULL)
		return BTJIT_STOCK_GETNEXT(scan, dir);
	return getnext_step(scan, so, next, ix);
}

/*
 * index_getnext_tid, redirected.  Every call while the module is off goes
 * to the server's function after two tests, and so do a scan of another
 * access method and a scan's first call (a probe of a unique key makes
 * just that call and the next) after a few more; a positioned B-tree scan
 * of another index than the last stepped one goes to getnext_other_index.
 */
static ItemPointer
btjit_dispatch_getnext(IndexScanDesc scan, ScanDirection dir)
{
	Relation	rel = scan->indexRelation;
	BTScanOpaque so;
	int			next;

	if (unlikely(!btjit_fast_ok))
		return btjit_code_active ? getnext_verify(scan, dir) :
			BTJIT_STOCK_GETNEXT(scan, dir);
	so = (BTScanOpaque) scan->opaque;
	if (rel != btjit_step_index.rel || rel->rd_id != btjit_step_index.relid)
	{
		/* only a B-tree scan's opaque is a BTScanOpaque */
		if (rel->rd_rel->relam != BTREE_AM_OID ||
			!BTScanPosIsValid(so->currPos))
			return BTJIT_STOCK_GETNEXT(scan, dir);
		return getnext_other_index(scan, dir);
	}
	if (!getnext_is_step(scan, so, dir, &next))
		return BTJIT_STOCK_GETNEXT(scan, dir);
	return getnext_step(scan, so, next, btjit_step_index.ix);
}

#endif							/* BTJIT_GETNEXT_REDIRECTABLE */
