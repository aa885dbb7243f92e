/*-------------------------------------------------------------------------
 *
 * binsrch.c
 *	  The redirected _bt_binsrch: the page search of every descent and of
 *	  the start of every scan.
 *
 * It runs on the hottest path in the server, so the common case (module
 * enabled, index already examined, compiled code accepts the scankey) is a
 * slot-table hit and a tail call: no frame, no hash probe, no palloc, no
 * elog.  An index without compiled code takes the same tail call into
 * btjit_stock_entry, which counts the search and runs the stock path, the
 * server's original machine code reached through the detour's trampoline;
 * only what is due (an examination) and verify mode take the slow path.
 *
 * This target is the one that examines indexes: the first searches of an
 * index open it (runtime/jitcache.c) and fill its slot for every target.
 *
 * With btree_jit.verify on, the stock path also runs for every search the
 * compiled code answered, and any difference is an ERROR naming the index,
 * block and both results, in the manner of amcheck.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "targets/targets.h"

/* The server's _bt_binsrch, through its detour's trampoline. */
typedef OffsetNumber (*BtjitBinsrchFn) (Relation rel, BTScanInsert key,
										Buffer buf);

#define BTJIT_STOCK_BINSRCH \
	((BtjitBinsrchFn) btjit_module.stock[BTJIT_TARGET_BINSRCH])

static uint16 btjit_stock_entry(void *rel, void *scankey, int buf,
								uint64 *counters);
static OffsetNumber btjit_dispatch(Relation rel, BTScanInsert key, Buffer buf);
static void btjit_verify_search(Relation rel, BTScanInsert key, Buffer buf,
								BtjitIndex *ix, int jit_result);
static pg_noinline OffsetNumber btjit_dispatch_slow(Relation rel,
													BTScanInsert key,
													Buffer buf);

const BtjitTargetImpl btjit_target_binsrch = {
	.dispatcher = (void *) btjit_dispatch,
	.declined = (void *) btjit_declined,
	.stock_entry = (void *) btjit_stock_entry,
};

/*
 * The redirected _bt_binsrch.  The common case is a slot hit while the
 * module is enabled and not verifying: then this is a tail call of the
 * slot's entry, for an index with compiled code its fused entry, which
 * finds the page, searches, counts, and hands declined searches to
 * btjit_declined; for any other index btjit_stock_entry.
 */
static OffsetNumber
btjit_dispatch(Relation rel, BTScanInsert key, Buffer buf)
{
	BtjitSlot  *slot;
	BtjitEntryFn entry;

	/* Switched off: straight to the original, uncounted. */
	if (unlikely(!btjit_enabled))
		return BTJIT_STOCK_BINSRCH(rel, key, buf);

	slot = btjit_slot_for(rel);
	entry = btjit_slot_entry_BINSRCH(slot, rel);
	if (likely(entry != NULL && btjit_fast_ok))
		return entry(rel, key, buf, &slot->ix->counts.jit_searches);
	return btjit_dispatch_slow(rel, key, buf);
}

/*
 * Is something due for an index without compiled code: its examination,
 * once it has been searched often enough; a look at the queue, once the
 * compile worker has finished something since it was queued; a report of
 * its searches to the queue; or, after a failed compile, a look at whether
 * it may be tried again (btjit_index_recheck_due)?
 */
static inline bool
btjit_index_due(const BtjitIndex *ix)
{
	return (ix->state == BTJIT_INDEX_UNKNOWN &&
			ix->counts.stock_searches >= (uint64) btjit_compile_threshold) ||
		(ix->state == BTJIT_INDEX_QUEUED && btjit_index_compile_done(ix)) ||
		btjit_index_recheck_due(ix);
}

/*
 * Everything else while enabled: an index not examined yet, one whose
 * examination is due, or verify mode.
 */
static pg_noinline OffsetNumber
btjit_dispatch_slow(Relation rel, BTScanInsert key, Buffer buf)
{
	BtjitSlot  *slot = btjit_slot_for(rel);
	BtjitIndex *ix;
	int			result;

	if (slot->rel == rel && slot->relid == rel->rd_id)
	{
		ix = slot->ix;
		if (unlikely(btjit_index_due(ix)))
			ix = btjit_dispatch_open(rel, false);
	}
	else
		ix = btjit_dispatch_open(rel, false);

	if (ix->fn != NULL)
	{
		result = ix->fn(key, BufferGetPage(buf));
		if (result != BTJIT_DECLINE)
		{
			if (btjit_verify)
				btjit_verify_search(rel, key, buf, ix, result);
			ix->counts.jit_searches++;
			return (OffsetNumber) result;
		}
		ix->counts.declined_searches++;
	}
	ix->counts.stock_searches++;
	return BTJIT_STOCK_BINSRCH(rel, key, buf);
}

/*
 * The slot entry of an index without compiled code (below the threshold,
 * queued for the compile worker, or refused): the dispatcher tail-calls it
 * as it would compiled code, so that while not verifying such an index
 * costs one test and a counter per search on top of the slot probe, not
 * the slow path's frame and tests.  Whatever is due goes to the slow path.
 * counters is &ix->counts.jit_searches, as for the compiled entry.
 */
static uint16
btjit_stock_entry(void *rel, void *scankey, int buf, uint64 *counters)
{
	BtjitIndex *ix = btjit_index_of_search_counter(counters);

	if (unlikely(btjit_index_due(ix)))
		return btjit_dispatch_slow((Relation) rel, (BTScanInsert) scankey,
								   (Buffer) buf);
	ix->counts.stock_searches++;
	return BTJIT_STOCK_BINSRCH((Relation) rel, (BTScanInsert) scankey,
							  (Buffer) buf);
}

/*
 * Called by the compiled fused entry when the scankey is outside its shape.
 * counters is &ix->counts.jit_searches of the index it was called for.
 */
uint16
btjit_declined(void *rel, void *scankey, int buf, uint64 *counters)
{
	BtjitIndex *ix = btjit_index_of_search_counter(counters);

	ix->counts.declined_searches++;
	ix->counts.stock_searches++;
	return BTJIT_STOCK_BINSRCH((Relation) rel, (BTScanInsert) scankey,
							  (Buffer) buf);
}

static void
btjit_verify_search(Relation rel, BTScanInsert key, Buffer buf,
					BtjitIndex *ix, int jit_result)
{
	OffsetNumber stock_result = BTJIT_STOCK_BINSRCH(rel, key, buf);
	Page		page;
	BTPageOpaque opaque;

	ix->counts.verified_searches++;
	if (likely(stock_result == (OffsetNumber) jit_result))
		return;

	page = BufferGetPage(buf);
	opaque = BTPageGetOpaque(page);
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("btree_jit: compiled page search of index \"%s\" differs from the server's own",
					RelationGetRelationName(rel)),
			 errdetail("Block %u (%s page, level %u, %u items): stock search returned offset %u, compiled code returned %d; scankey has %d of %d key attributes, nextkey=%d, %s=%d, scantid %s; shape %s.",
					   BufferGetBlockNumber(buf),
					   P_ISLEAF(opaque) ? "leaf" : "internal",
					   opaque->btpo_level,
					   (unsigned) PageGetMaxOffsetNumber(page),
					   (unsigned) stock_result, jit_result,
					   key->keysz,
					   IndexRelationGetNumberOfKeyAttributes(rel),
					   (int) key->nextkey, BTJIT_KEY_BACKWARD_NAME,
					   (int) BTJIT_KEY_BACKWARD(key),
					   key->scantid ? "set" : "not set",
					   ix->signature),
			 errhint(BTJIT_VERIFY_HINT)));
}
