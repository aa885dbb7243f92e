/*-------------------------------------------------------------------------
 *
 * insert.c
 *	  The redirected _bt_binsrch_insert: the leaf search of every
 *	  insertion, on the compiled insertion search of an index that has one.
 *
 * _bt_binsrch_insert is exported, and its callers in the server
 * (_bt_findinsertloc, _bt_check_unique) call the exported entry.  Like the
 * compare, it never examines an index (the page searches of the
 * insertion's descent do).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "targets/targets.h"

/* The server's _bt_binsrch_insert, through its detour's trampoline. */
typedef OffsetNumber (*BtjitBinsrchInsertFn) (Relation rel,
											  BTInsertState insertstate);

#define BTJIT_STOCK_INSERT \
	((BtjitBinsrchInsertFn) btjit_module.stock[BTJIT_TARGET_INSERT])

static OffsetNumber btjit_dispatch_insert(Relation rel,
										  BTInsertState insertstate);

const BtjitTargetImpl btjit_target_insert = {
	.dispatcher = (void *) btjit_dispatch_insert,
	.declined = (void *) btjit_insert_declined,
};

/*
 * The redirected _bt_binsrch_insert: the compiled insertion search of an
 * index that has one, else the original.  Like the compare, it never
 * examines an index (the page searches of the insertion's descent do).
 */
static pg_noinline OffsetNumber btjit_verify_insert(Relation rel,
													BTInsertState insertstate,
													BtjitIndex *ix);

static OffsetNumber
btjit_dispatch_insert(Relation rel, BTInsertState insertstate)
{
	BtjitSlot  *slot;
	BtjitInsertEntryFn entry;

	if (!btjit_code_active)
		return BTJIT_STOCK_INSERT(rel, insertstate);

	slot = btjit_slot_for(rel);
	entry = btjit_slot_entry_INSERT(slot, rel);
	if (likely(entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return entry(rel, insertstate, &slot->ix->counts.jit_inserts);
		return btjit_verify_insert(rel, insertstate, slot->ix);
	}
	return BTJIT_STOCK_INSERT(rel, insertstate);
}

/*
 * verify mode: the compiled search runs on a copy of the insertstate, the
 * stock one on the caller's; the offset and every field the search sets
 * (the cached bounds and the posting-list offset) must agree.
 */
static pg_noinline OffsetNumber
btjit_verify_insert(Relation rel, BTInsertState insertstate, BtjitIndex *ix)
{
	BTInsertStateData jit_state = *insertstate;
	OffsetNumber result = btjit_entry_INSERT(ix->entries)(rel, &jit_state,
															&ix->counts.jit_inserts);
	OffsetNumber stock_result = BTJIT_STOCK_INSERT(rel, insertstate);

	ix->counts.verified_inserts++;
	if (unlikely(result != stock_result ||
				 jit_state.bounds_valid != insertstate->bounds_valid ||
				 jit_state.low != insertstate->low ||
				 jit_state.stricthigh != insertstate->stricthigh ||
				 jit_state.postingoff != insertstate->postingoff))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: compiled insertion search of index \"%s\" differs from the server's own",
						RelationGetRelationName(rel)),
				 errdetail("Block %u: _bt_binsrch_insert returned offset %u (bounds %s, low %u, stricthigh %u, postingoff %d), compiled code returned offset %u (bounds %s, low %u, stricthigh %u, postingoff %d); scantid %s; shape %s.",
						   BufferGetBlockNumber(insertstate->buf),
						   (unsigned) stock_result,
						   insertstate->bounds_valid ? "valid" : "invalid",
						   (unsigned) insertstate->low,
						   (unsigned) insertstate->stricthigh,
						   insertstate->postingoff,
						   (unsigned) result,
						   jit_state.bounds_valid ? "valid" : "invalid",
						   (unsigned) jit_state.low,
						   (unsigned) jit_state.stricthigh,
						   jit_state.postingoff,
						   insertstate->itup_key->scantid ? "set" : "not set",
						   ix->signature),
				 errhint(BTJIT_VERIFY_HINT)));
	return result;
}

/*
 * Called by the compiled insertion search when it leaves the call to the
 * server (a scankey outside the shape, or a heap TID inside a posting
 * list); it has not touched the insertstate.
 */
uint16
btjit_insert_declined(void *rel, void *insertstate, uint64 *counters)
{
	return BTJIT_STOCK_INSERT((Relation) rel,
									 (BTInsertState) insertstate);
}
