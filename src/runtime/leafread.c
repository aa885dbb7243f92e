/*-------------------------------------------------------------------------
 *
 * leafread.c
 *	  The leaf read of a scan whose index has compiled scan-key checks
 *	  (PostgreSQL 15): what _bt_readpage does, with the compiled check
 *	  called directly for each tuple and the matches saved inline, and
 *	  verify mode's comparison of it with the server's own.
 *
 * The server's _bt_readpage reaches the compiled check through the
 * redirected _bt_checkkeys and its dispatcher, and saves each match
 * through _bt_saveitem: per tuple about 120 instructions of detour,
 * dispatch and call for a 30-instruction check.  This walk is the
 * server's, in the same order with the same outputs (src/README, "The
 * leaf read"); only the calls are gone.  The dispatcher (dispatch.c)
 * sends here only scans that are neither parallel nor with array keys.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "runtime/runtime.h"

#ifdef BTJIT_READPAGE_REDIRECTABLE

/* Item i: a heap TID of the tuple at offnum, and where its copy is */
static inline void
leafread_save_tid(BTScanOpaque so, int i, OffsetNumber offnum,
				  ItemPointer tid, int tupleOffset)
{
	BTScanPosItem *item = &so->currPos.items[i];

	item->heapTid = *tid;
	item->indexOffset = offnum;
	if (so->currTuples)
		item->tupleOffset = tupleOffset;
}

/*
 * Save a posting list's TIDs at itemIndex upwards (forward) or below it
 * (backward), in the order the server saves them: ascending forward, and
 * backward the first TID highest; returns the next itemIndex.  An
 * index-only scan gets one copy for all of them: the key part, with its
 * size rewritten to match.
 */
static pg_noinline int
leafread_save_posting(BTScanOpaque so, int itemIndex, OffsetNumber offnum,
					  IndexTuple itup, bool forward)
{
	int			tupleOffset = 0;

	if (so->currTuples)
	{
		Size		size = MAXALIGN(BTreeTupleGetPostingOffset(itup));
		IndexTuple	copy;

		tupleOffset = so->currPos.nextTupleOffset;
		copy = (IndexTuple) (so->currTuples + tupleOffset);
		memcpy(copy, itup, size);
		copy->t_info = (copy->t_info & ~INDEX_SIZE_MASK) | size;
		so->currPos.nextTupleOffset += size;
	}
	for (int i = 0; i < BTreeTupleGetNPosting(itup); i++)
	{
		if (!forward)
			itemIndex--;
		leafread_save_tid(so, itemIndex, offnum, BTreeTupleGetPostingN(itup, i),
						  tupleOffset);
		if (forward)
			itemIndex++;
	}
	return itemIndex;
}

/*
 * Save a matching tuple as leafread_save_posting does; a plain tuple, the
 * common case, inline.
 */
static pg_attribute_always_inline int
leafread_save(BTScanOpaque so, int itemIndex, OffsetNumber offnum,
			  IndexTuple itup, bool forward)
{
	BTScanPosItem *item;

	if (unlikely(BTreeTupleIsPosting(itup)))
		return leafread_save_posting(so, itemIndex, offnum, itup, forward);
	if (!forward)
		itemIndex--;
	item = &so->currPos.items[itemIndex];
	item->heapTid = itup->t_tid;
	item->indexOffset = offnum;
	if (so->currTuples)
	{
		Size		size = IndexTupleSize(itup);

		item->tupleOffset = so->currPos.nextTupleOffset;
		memcpy(so->currTuples + so->currPos.nextTupleOffset, itup, size);
		so->currPos.nextTupleOffset += MAXALIGN(size);
	}
	return forward ? itemIndex + 1 : itemIndex;
}

/*
 * Read the leaf page in so->currPos.buf from offnum on in the scan's
 * direction, as the server's _bt_readpage does, testing each tuple with
 * the compiled check; true if anything matched.
 */
bool
btjit_leafread(IndexScanDesc scan, ScanDirection dir, OffsetNumber offnum,
			   BtjitCheckEntryFn check, uint64 *counters)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	Page		page = BufferGetPage(so->currPos.buf);
	BTPageOpaque opaque = BTPageGetOpaque(page);
	int			natts = IndexRelationGetNumberOfAttributes(scan->indexRelation);
	OffsetNumber minoff = P_FIRSTDATAKEY(opaque);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		skip_dead = scan->ignore_killed_tuples;
	bool		continuescan = true;
	int			itemIndex;

	Assert(scan->parallel_scan == NULL);
	so->currPos.currPage = BufferGetBlockNumber(so->currPos.buf);
	so->currPos.lsn = BufferGetLSNAtomic(so->currPos.buf);
	so->currPos.nextPage = opaque->btpo_next;
	so->currPos.nextTupleOffset = 0;

	if (ScanDirectionIsForward(dir))
	{
		itemIndex = 0;
		for (offnum = Max(offnum, minoff); offnum <= maxoff;
			 offnum = OffsetNumberNext(offnum))
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup;

			if (skip_dead && ItemIdIsDead(iid))
				continue;
			itup = (IndexTuple) PageGetItem(page, iid);
			if (check(scan, itup, natts, (int) dir, &continuescan, counters))
				itemIndex = leafread_save(so, itemIndex, offnum, itup, true);
			if (!continuescan)
				break;
		}

		/* the high key may show that the page to the right has no match */
		if (continuescan && !P_RIGHTMOST(opaque))
		{
			IndexTuple	hikey = (IndexTuple) PageGetItem(page,
														 PageGetItemId(page, P_HIKEY));

			(void) check(scan, hikey,
						 BTreeTupleGetNAtts(hikey, scan->indexRelation),
						 (int) dir, &continuescan, counters);
		}
		if (!continuescan)
			so->currPos.moreRight = false;
		so->currPos.firstItem = 0;
		so->currPos.lastItem = itemIndex - 1;
		so->currPos.itemIndex = 0;
	}
	else
	{
		itemIndex = MaxTIDsPerBTreePage;
		for (offnum = Min(offnum, maxoff); offnum >= minoff;
			 offnum = OffsetNumberPrev(offnum))
		{
			ItemId		iid = PageGetItemId(page, offnum);
			IndexTuple	itup;
			bool		alive = true;

			/*
			 * A dead first item is still tested: it may end the scan, which
			 * then need not step to the page on the left.
			 */
			if (skip_dead && ItemIdIsDead(iid))
			{
				if (offnum > minoff)
					continue;
				alive = false;
			}
			itup = (IndexTuple) PageGetItem(page, iid);
			if (check(scan, itup, natts, (int) dir, &continuescan, counters) &&
				alive)
				itemIndex = leafread_save(so, itemIndex, offnum, itup, false);
			if (!continuescan)
			{
				so->currPos.moreLeft = false;
				break;
			}
		}
		so->currPos.firstItem = itemIndex;
		so->currPos.lastItem = MaxTIDsPerBTreePage - 1;
		so->currPos.itemIndex = MaxTIDsPerBTreePage - 1;
	}
	return so->currPos.firstItem <= so->currPos.lastItem;
}

/* The first field of the scan position that differs, or NULL */
static const char *
leafread_first_difference(const BTScanPosData *a, const BTScanPosData *b,
						  const char *tuples_a, const char *tuples_b)
{
	if (a->buf != b->buf)
		return "buf";
	if (a->currPage != b->currPage)
		return "currPage";
	if (a->nextPage != b->nextPage)
		return "nextPage";
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
 * verify mode: the module's leaf read runs first, from the scan position
 * as the caller left it, and its result is put aside; the position is put
 * back and the server's _bt_readpage runs.  Every byte of the position and
 * of the saved tuples must then agree, and the server's result stands.
 */
bool
btjit_leafread_verify(IndexScanDesc scan, ScanDirection dir,
					  OffsetNumber offnum, BtjitCheckEntryFn check,
					  uint64 *counters, const char *signature)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	BTScanPosData *before = palloc(sizeof(BTScanPosData));
	BTScanPosData *ours = palloc(sizeof(BTScanPosData));
	char	   *tuples_before = NULL;
	char	   *tuples_ours = NULL;
	bool		our_result;
	bool		stock_result;
	const char *difference;

	memcpy(before, &so->currPos, sizeof(BTScanPosData));
	if (so->currTuples)
	{
		tuples_before = palloc(BLCKSZ);
		tuples_ours = palloc(BLCKSZ);
		memcpy(tuples_before, so->currTuples, BLCKSZ);
	}

	our_result = btjit_leafread(scan, dir, offnum, check, counters);
	memcpy(ours, &so->currPos, sizeof(BTScanPosData));
	memcpy(&so->currPos, before, sizeof(BTScanPosData));
	if (so->currTuples)
	{
		memcpy(tuples_ours, so->currTuples, BLCKSZ);
		memcpy(so->currTuples, tuples_before, BLCKSZ);
	}

	stock_result = btjit_module.stock_readpage(scan, dir, offnum);

	difference = leafread_first_difference(&so->currPos, ours,
										   so->currTuples, tuples_ours);
	if (unlikely(our_result != stock_result || difference != NULL))
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
						   ours->firstItem, ours->lastItem,
						   difference ? difference : "the result",
						   signature),
				 errhint("Set btree_jit.enabled = off to bypass the compiled code, and please report this.")));

	pfree(before);
	pfree(ours);
	if (tuples_before)
	{
		pfree(tuples_before);
		pfree(tuples_ours);
	}
	return stock_result;
}

#endif							/* BTJIT_READPAGE_REDIRECTABLE */
