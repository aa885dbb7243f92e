/*-------------------------------------------------------------------------
 *
 * keepnatts.c
 *	  The redirected _bt_keep_natts_fast: how many leading key attributes
 *	  two index tuples hold as equal images, on the compiled code of an
 *	  index that has it (15, 17, 18).
 *
 * A build's deduplication asks it once for every tuple it loads (is this
 * tuple's key the pending posting list's?); an insertion's deduplication,
 * suffix truncation and the split point choice ask it too.  The compiled
 * entry compares the tuples' bytes at the shape's offsets and hands the
 * server's function what it does not compare itself (code_abi.h).  19 has
 * the function too, but the module has not checked it against 19's source
 * (targetlist.h's row ends at 18).
 *
 * The slot table decides, without a hash probe: btbuild fills the slot of
 * an index it compiled for (build.c), and an insertion's search fills it
 * before its deduplication or split asks.  An index whose slot holds no
 * compiled code costs the server's function a slot test.  A slot taken
 * since by another relation is not a reason to compare with the server's
 * code: btjit_keepnatts_index finds the index again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "utils/rel.h"

#include "targets/targets.h"

typedef int (*BtjitKeepNattsFn) (Relation rel, IndexTuple lastleft,
								 IndexTuple firstright);

#define BTJIT_STOCK_KEEPNATTS \
	((BtjitKeepNattsFn) btjit_module.stock[BTJIT_TARGET_KEEPNATTS])

static int	btjit_dispatch_keepnatts(Relation rel, IndexTuple lastleft,
									 IndexTuple firstright);

const BtjitTargetImpl btjit_target_keepnatts = {
	.dispatcher = (void *) btjit_dispatch_keepnatts,
	.declined = (void *) btjit_keep_natts_declined,
};

static pg_noinline int btjit_verify_keepnatts(Relation rel,
											  IndexTuple lastleft,
											  IndexTuple firstright,
											  BtjitIndex *ix);

/*
 * The index's state when its slot holds another relation: a catalog index
 * searched since the slot was filled may hash to the same slot (a build's
 * sort looks up its support procedures after btbuild filled it).  The
 * index a build is loading answers without a hash probe, also when it has
 * no compiled code, so that a build of an index the module has not seen
 * pays one comparison per tuple; any other index is looked up, and its
 * slot refilled.
 */
static pg_noinline BtjitIndex *
btjit_keepnatts_index(Relation rel)
{
	BtjitIndex *ix;

	if (rel == btjit_build_index.rel &&
		rel->rd_id == btjit_build_index.relid)
		ix = btjit_build_index.ix;
	else
		ix = btjit_index_find(rel);
	if (ix != NULL)
		btjit_slot_fill(rel, ix);
	return ix;
}

static int
btjit_dispatch_keepnatts(Relation rel, IndexTuple lastleft,
						 IndexTuple firstright)
{
	BtjitSlot  *slot;
	BtjitIndex *ix;

	if (!btjit_code_active)
		return BTJIT_STOCK_KEEPNATTS(rel, lastleft, firstright);
	slot = btjit_slot_for(rel);
	ix = btjit_slot_index(slot, rel);
	if (unlikely(ix == NULL))
		ix = btjit_keepnatts_index(rel);
	if (ix == NULL || ix->fn == NULL)
		return BTJIT_STOCK_KEEPNATTS(rel, lastleft, firstright);
	if (likely(btjit_fast_ok))
		return btjit_entry_KEEPNATTS(ix->entries)(rel, lastleft, firstright,
												  &ix->counts.jit_image_compares);
	return btjit_verify_keepnatts(rel, lastleft, firstright, ix);
}

/* verify mode: run both, and they must agree exactly */
static pg_noinline int
btjit_verify_keepnatts(Relation rel, IndexTuple lastleft,
					   IndexTuple firstright, BtjitIndex *ix)
{
	uint64		answered_before = ix->counts.jit_image_compares;
	int			result = btjit_entry_KEEPNATTS(ix->entries)(rel, lastleft,
															firstright,
															&ix->counts.jit_image_compares);
	int			stock_result = BTJIT_STOCK_KEEPNATTS(rel, lastleft,
													 firstright);

	/* a declined call is not a verified one */
	if (ix->counts.jit_image_compares != answered_before)
		ix->counts.verified_image_compares++;
	if (unlikely(result != stock_result))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: compiled key image comparison in index \"%s\" differs from the server's own",
						RelationGetRelationName(rel)),
				 errdetail("_bt_keep_natts_fast returned %d, compiled code returned %d; tuples of %zu and %zu bytes; shape %s.",
						   stock_result, result,
						   IndexTupleSize(lastleft), IndexTupleSize(firstright),
						   ix->signature),
				 errhint(BTJIT_VERIFY_HINT)));
	return result;
}

/* Called by the compiled entry for a pair it does not compare itself. */
int32
btjit_keep_natts_declined(void *rel, void *lastleft, void *firstright,
						  uint64 *counters)
{
	return BTJIT_STOCK_KEEPNATTS((Relation) rel, (IndexTuple) lastleft,
								 (IndexTuple) firstright);
}
