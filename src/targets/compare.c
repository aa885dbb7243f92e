/*-------------------------------------------------------------------------
 *
 * compare.c
 *	  The redirected _bt_compare: the comparisons made outside the page
 *	  search (_bt_moveright's high-key checks, _bt_binsrch_insert's callers'
 *	  unique checks), on the compiled compare of an index that has one.
 *
 * _bt_compare is exported: its side of the calling convention is its
 * prototype, its callers' side the locator's step 6.  It never examines
 * an index (the page search does) and counts only compiled calls, so an
 * index without compiled code costs one slot test.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/rel.h"

#include "targets/targets.h"

/*
 * The server's _bt_compare, through its detour's trampoline.  offnum is
 * handed on in the 32 bits it came in (see btjit_dispatch_compare).
 */
typedef int32 (*BtjitCompareFn) (Relation rel, BTScanInsert key, Page page,
								 uint32 offnum);

#define BTJIT_STOCK_COMPARE \
	((BtjitCompareFn) btjit_module.stock[BTJIT_TARGET_COMPARE])

static int32 btjit_dispatch_compare(Relation rel, BTScanInsert key, Page page,
									uint32 offnum);

const BtjitTargetImpl btjit_target_compare = {
	.dispatcher = (void *) btjit_dispatch_compare,
	.declined = (void *) btjit_compare_declined,
};

/*
 * The redirected _bt_compare: the compiled compare of an index that has
 * one, else the original.  It never examines an index (the page search
 * does that) and counts only compiled calls, so an index without compiled
 * code costs one slot test.  offnum arrives in 32 bits whose upper half
 * the caller need not have cleared (an OffsetNumber is 16 bits): the stock
 * path hands the register on as it came, for the server's function to read
 * as it would have; the compiled entry, which takes 32 bits, gets it
 * truncated.
 */
static pg_noinline int32 btjit_verify_compare(Relation rel, BTScanInsert key,
											  Page page, OffsetNumber offnum,
											  BtjitIndex *ix);

/*
 * With compiled code somewhere in this backend: the slot probe.  Apart
 * from the dispatcher so that its path to the server's code without any
 * (the module off, or nothing compiled yet: every comparison of the
 * server's own page search) is a test and a jump, whatever registers this
 * part needs.
 */
static pg_noinline int32
btjit_dispatch_compare_code(Relation rel, BTScanInsert key, Page page,
							uint32 offnum)
{
	BtjitSlot  *slot = btjit_slot_for(rel);
	BtjitCompareEntryFn entry = btjit_slot_entry_COMPARE(slot, rel);

	if (likely(entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return entry(rel, key, page, (OffsetNumber) offnum,
						 &slot->ix->counts.jit_compares);
		return btjit_verify_compare(rel, key, page, (OffsetNumber) offnum,
									slot->ix);
	}
	return BTJIT_STOCK_COMPARE(rel, key, page, offnum);
}

static int32
btjit_dispatch_compare(Relation rel, BTScanInsert key, Page page,
					   uint32 offnum)
{
	if (!btjit_code_active)
		return BTJIT_STOCK_COMPARE(rel, key, page, offnum);
	return btjit_dispatch_compare_code(rel, key, page, offnum);
}

/* verify mode: run both, and they must agree exactly */
static pg_noinline int32
btjit_verify_compare(Relation rel, BTScanInsert key, Page page,
					 OffsetNumber offnum, BtjitIndex *ix)
{
	uint64		answered_before = ix->counts.jit_compares;
	int32		result = btjit_entry_COMPARE(ix->entries)(rel, key, page, offnum,
													  &ix->counts.jit_compares);
	int32		stock_result = BTJIT_STOCK_COMPARE(rel, key, page, offnum);

	/* as for the checks: a declined call is not a verified one */
	if (ix->counts.jit_compares != answered_before)
		ix->counts.verified_compares++;
	if (unlikely(result != stock_result))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: compiled comparison in index \"%s\" differs from the server's own",
						RelationGetRelationName(rel)),
				 errdetail("Offset %u on a %s page: _bt_compare returned %d, compiled code returned %d; scankey has %d key attributes, scantid %s; shape %s.",
						   (unsigned) offnum,
						   P_ISLEAF(BTPageGetOpaque(page)) ? "leaf" : "internal",
						   stock_result, result, key->keysz,
						   key->scantid ? "set" : "not set", ix->signature),
				 errhint(BTJIT_VERIFY_HINT)));
	return result;
}

/* Called by the compiled compare when the scankey is outside its shape. */
int32
btjit_compare_declined(void *rel, void *scankey, const char *page,
					   uint32 offnum, uint64 *counters)
{
	return BTJIT_STOCK_COMPARE((Relation) rel, (BTScanInsert) scankey,
									  (Page) page, (OffsetNumber) offnum);
}
