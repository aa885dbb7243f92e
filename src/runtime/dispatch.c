/*-------------------------------------------------------------------------
 *
 * dispatch.c
 *	  The function every call of _bt_binsrch now reaches.
 *
 * It runs on the hottest path in the server, so the common case (module
 * enabled, index already examined, compiled code accepts the scankey) is a
 * slot-table hit and a tail call: no frame, no hash probe, no palloc, no
 * elog.  An index without compiled code takes the same tail call into
 * btjit_stock_entry, which counts the search and runs the stock path, the
 * server's original machine code reached through the detour's trampoline;
 * only what is due (an examination) and verify mode take the slow path.
 *
 * With btree_jit.verify on, the stock path also runs for every search the
 * compiled code answered, and any difference is an ERROR naming the index,
 * block and both results, in the manner of amcheck.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/inval.h"
#include "utils/rel.h"

#include "runtime/runtime.h"

bool		btjit_verify = false;

/* enabled and not verify: the dispatcher may tail-call compiled code */
static bool btjit_fast_ok = true;

/*
 * Relation -> index state, without a hash probe: a direct-mapped table keyed
 * by the relcache entry's address.  The address of a relcache entry is
 * stable for its lifetime (rebuilds happen in place), and the relcache
 * callback empties slots whenever an index's definition may have changed;
 * the rd_id check catches an entry freed and its memory reused.
 */
#define BTJIT_SLOTS 256

typedef struct BtjitSlot
{
	Relation	rel;
	Oid			relid;
	BtjitEntryFn entry;			/* ix->entry, or btjit_stock_entry */
	BtjitCompareEntryFn cmp_entry;	/* ix->cmp_entry, or NULL */
	BtjitInsertEntryFn ins_entry;	/* ix->ins_entry, or NULL */
	BtjitCheckEntryFn chk_entry;	/* ix->chk_entry, or NULL */
	BtjitIndex *ix;
} pg_attribute_aligned(64) BtjitSlot;	/* a cache line; indexed by a shift */

static BtjitSlot btjit_slots[BTJIT_SLOTS];

static inline BtjitSlot *
btjit_slot_for(Relation rel)
{
	uint64		h = ((uint64) (uintptr_t) rel >> 4) * UINT64CONST(0x9E3779B97F4A7C15);

	return &btjit_slots[h >> (64 - 8)];
}

static uint16 btjit_stock_entry(void *rel, void *scankey, int buf,
								uint64 *counters);

static void btjit_verify_search(Relation rel, BTScanInsert key, Buffer buf,
								BtjitIndex *ix, int jit_result);
static pg_noinline OffsetNumber btjit_dispatch_slow(Relation rel,
													BTScanInsert key,
													Buffer buf);

/*
 * Keep btjit_fast_ok = enabled && !verify for the page search's one test,
 * and btjit_code_active = enabled && btjit_code_present for the other
 * dispatchers' (GUC assign hooks).
 */
void
btjit_assign_enabled(bool newval, void *extra)
{
	btjit_fast_ok = newval && !btjit_verify;
	btjit_code_active = newval && btjit_code_present;
}

void
btjit_assign_verify(bool newval, void *extra)
{
	btjit_fast_ok = btjit_enabled && !newval;
}

/*
 * Relcache invalidation: empty the slots of the index (or every slot, for
 * InvalidOid), so that its next search opens it again (jitcache.c forgets
 * its state in a callback of its own).
 */
static void
btjit_slots_invalidate(Datum arg, Oid relid)
{
	if (!OidIsValid(relid))
	{
		memset(btjit_slots, 0, sizeof(btjit_slots));
		return;
	}
	for (int i = 0; i < BTJIT_SLOTS; i++)
		if (btjit_slots[i].relid == relid)
			memset(&btjit_slots[i], 0, sizeof(BtjitSlot));
}

/*
 * Called from _PG_init in the postmaster; backends inherit the callback
 * registration through fork.
 */
void
btjit_dispatch_init(void)
{
	CacheRegisterRelcacheCallback(btjit_slots_invalidate, (Datum) 0);
}

/*
 * Open the index (jitcache.c: examine it if due) and remember its state in
 * the slot table, settled or not: an index without compiled code then costs
 * the dispatcher a slot hit, a test and a counter per search in
 * btjit_stock_entry, rather than a hash probe (a short connection's catalog
 * searches are all of that kind, and every search of an index queued for
 * the compile worker).
 */
BtjitIndex *
btjit_dispatch_open(Relation rel, bool force)
{
	BtjitIndex *ix = btjit_index_open(rel, force);
	BtjitSlot  *slot = btjit_slot_for(rel);

	slot->rel = rel;
	slot->relid = rel->rd_id;
	slot->entry = ix->fn != NULL ? ix->entry : btjit_stock_entry;
	slot->cmp_entry = ix->cmp_entry;
	slot->ins_entry = ix->ins_entry;
	slot->chk_entry = ix->chk_entry;
	slot->ix = ix;
	return ix;
}

/*
 * The redirected _bt_binsrch.  The common case is a slot hit while the
 * module is enabled and not verifying: then this is a tail call of the
 * slot's entry, for an index with compiled code its fused entry, which
 * finds the page, searches, counts, and hands declined searches to
 * btjit_declined; for any other index btjit_stock_entry.
 */
OffsetNumber
btjit_dispatch(Relation rel, BTScanInsert key, Buffer buf)
{
	BtjitSlot  *slot;

	/* Switched off: straight to the original, uncounted. */
	if (unlikely(!btjit_enabled))
		return btjit_module.stock(rel, key, buf);

	slot = btjit_slot_for(rel);
	if (likely(slot->rel == rel && slot->relid == rel->rd_id &&
			   slot->entry != NULL && btjit_fast_ok))
		return slot->entry(rel, key, buf, &slot->ix->counts.jit_searches);
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
	return btjit_module.stock(rel, key, buf);
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
	return btjit_module.stock((Relation) rel, (BTScanInsert) scankey,
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
	return btjit_module.stock((Relation) rel, (BTScanInsert) scankey,
							  (Buffer) buf);
}

/*
 * The redirected _bt_compare: the compiled compare of an index that has
 * one, else the original.  It never examines an index (the page search
 * does that) and counts only compiled calls, so an index without compiled
 * code costs one slot test.
 */
static pg_noinline int32 btjit_verify_compare(Relation rel, BTScanInsert key,
											  Page page, OffsetNumber offnum,
											  BtjitIndex *ix);

int32
btjit_dispatch_compare(Relation rel, BTScanInsert key, Page page,
					   OffsetNumber offnum)
{
	BtjitSlot  *slot;

	if (!btjit_code_active)
		return btjit_module.stock_compare(rel, key, page, offnum);

	slot = btjit_slot_for(rel);
	if (likely(slot->rel == rel && slot->relid == rel->rd_id &&
			   slot->cmp_entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return slot->cmp_entry(rel, key, page, offnum,
								   &slot->ix->counts.jit_compares);
		return btjit_verify_compare(rel, key, page, offnum, slot->ix);
	}
	return btjit_module.stock_compare(rel, key, page, offnum);
}

/* verify mode: run both, and they must agree exactly */
static pg_noinline int32
btjit_verify_compare(Relation rel, BTScanInsert key, Page page,
					 OffsetNumber offnum, BtjitIndex *ix)
{
	uint64		answered_before = ix->counts.jit_compares;
	int32		result = ix->cmp_entry(rel, key, page, offnum, &ix->counts.jit_compares);
	int32		stock_result = btjit_module.stock_compare(rel, key, page, offnum);

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
				 errhint("Set btree_jit.enabled = off to bypass the compiled code, and please report this.")));
	return result;
}

/* Called by the compiled compare when the scankey is outside its shape. */
int32
btjit_compare_declined(void *rel, void *scankey, const char *page,
					   uint32 offnum, uint64 *counters)
{
	return btjit_module.stock_compare((Relation) rel, (BTScanInsert) scankey,
									  (Page) page, (OffsetNumber) offnum);
}

static void
btjit_verify_search(Relation rel, BTScanInsert key, Buffer buf,
					BtjitIndex *ix, int jit_result)
{
	OffsetNumber stock_result = btjit_module.stock(rel, key, buf);
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
			 errhint("Set btree_jit.enabled = off to bypass the compiled code, and please report this.")));
}

/*
 * The redirected _bt_binsrch_insert: the compiled insertion search of an
 * index that has one, else the original.  Like the compare, it never
 * examines an index (the page searches of the insertion's descent do).
 */
static pg_noinline OffsetNumber btjit_verify_insert(Relation rel,
													BTInsertState insertstate,
													BtjitIndex *ix);

OffsetNumber
btjit_dispatch_insert(Relation rel, BTInsertState insertstate)
{
	BtjitSlot  *slot;

	if (!btjit_code_active)
		return btjit_module.stock_insert(rel, insertstate);

	slot = btjit_slot_for(rel);
	if (likely(slot->rel == rel && slot->relid == rel->rd_id &&
			   slot->ins_entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return slot->ins_entry(rel, insertstate, &slot->ix->counts.jit_inserts);
		return btjit_verify_insert(rel, insertstate, slot->ix);
	}
	return btjit_module.stock_insert(rel, insertstate);
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
	OffsetNumber result = ix->ins_entry(rel, &jit_state, &ix->counts.jit_inserts);
	OffsetNumber stock_result = btjit_module.stock_insert(rel, insertstate);

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
				 errhint("Set btree_jit.enabled = off to bypass the compiled code, and please report this.")));
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
	return btjit_module.stock_insert((Relation) rel,
									 (BTInsertState) insertstate);
}

#ifdef BTJIT_CHECKKEYS_REDIRECTABLE
/* verify found a compiled scan-key check that differs: raise the error */
static pg_noinline void
btjit_report_check_mismatch(IndexScanDesc scan, int tupnatts,
							ScanDirection dir, const BtjitIndex *ix,
							bool stock_result, bool stock_continue,
							bool jit_result, bool jit_continue)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("btree_jit: compiled scan-key check in index \"%s\" differs from the server's own",
					RelationGetRelationName(scan->indexRelation)),
			 errdetail("_bt_checkkeys returned %s with continuescan %s, compiled code returned %s with continuescan %s; %d scan keys, %d tuple attributes, %s scan; shape %s.",
					   stock_result ? "true" : "false",
					   stock_continue ? "true" : "false",
					   jit_result ? "true" : "false",
					   jit_continue ? "true" : "false",
					   so->numberOfKeys, tupnatts,
					   ScanDirectionIsBackward(dir) ? "backward" : "forward",
					   ix->signature),
			 errhint("Set btree_jit.enabled = off to bypass the compiled code, and please report this.")));
}
#endif

#if defined(BTJIT_CHECKKEYS_READPAGE_STATE)
/*
 * The redirected _bt_checkkeys (PostgreSQL 17 and 18): the compiled
 * scan-key checks of an index that has them, for a scan without array
 * keys; else the original.  Called once per tuple a scan reads, so an
 * index without compiled code costs one slot test, as for the compare.
 *
 * For a scan without arrays the server's function is _bt_check_compare
 * over the scan's keys, whose only output besides its result is
 * pstate->continuescan.  It may skip keys the page's tuples are known to
 * satisfy (17: pstate->prechecked and firstmatch; 18: the keys before
 * pstate->startikey); the compiled check reads the same fields from the
 * pstate and skips the same keys (src/README, "Scan-key checks").  A scan
 * with array keys (18's skip arrays included) advances them inside the
 * server's function: never compiled, whatever arrayKeys says for this
 * call.
 *
 * The compiled check is always given &pstate->continuescan of a
 * BTReadPageState (the scan's, or verify's copy of it): the compiled code
 * reads the precheck fields next to it, and a declined call finds its
 * pstate again (btjit_check_declined).
 */
static pg_noinline bool btjit_verify_check(IndexScanDesc scan,
										   BTReadPageState *pstate,
										   IndexTuple tuple, int tupnatts,
										   BtjitIndex *ix);

bool
btjit_dispatch_check(IndexScanDesc scan, BTReadPageState *pstate,
					 bool arrayKeys, IndexTuple tuple, int tupnatts)
{
	Relation	rel = scan->indexRelation;
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	BtjitSlot  *slot;

	if (!btjit_code_active || arrayKeys || so->numArrayKeys != 0)
		return btjit_module.stock_check(scan, pstate, arrayKeys, tuple,
										tupnatts);

	slot = btjit_slot_for(rel);
	if (likely(slot->rel == rel && slot->relid == rel->rd_id &&
			   slot->chk_entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return slot->chk_entry(scan, tuple, tupnatts,
								   (int) BTJIT_READPAGE_DIR(so, pstate),
								   &pstate->continuescan,
								   &slot->ix->counts.jit_checks);
		return btjit_verify_check(scan, pstate, tuple, tupnatts, slot->ix);
	}
	return btjit_module.stock_check(scan, pstate, false, tuple, tupnatts);
}

/*
 * verify mode: the compiled check on a copy of the page's read state, the
 * server's on the real one; the result and continuescan must agree.
 */
static pg_noinline bool
btjit_verify_check(IndexScanDesc scan, BTReadPageState *pstate,
				   IndexTuple tuple, int tupnatts, BtjitIndex *ix)
{
	ScanDirection dir = BTJIT_READPAGE_DIR((BTScanOpaque) scan->opaque,
										   pstate);
	BTReadPageState jit_state = *pstate;
	uint64		answered_before = ix->counts.jit_checks;
	bool		result;
	bool		stock_result;

	jit_state.continuescan = true;
	result = ix->chk_entry(scan, tuple, tupnatts, (int) dir,
						   &jit_state.continuescan, &ix->counts.jit_checks);
	stock_result = btjit_module.stock_check(scan, pstate, false, tuple,
											tupnatts);
	/* a call the compiled check declined compared the server with itself */
	if (ix->counts.jit_checks != answered_before)
		ix->counts.verified_checks++;
	if (unlikely(result != stock_result ||
				 jit_state.continuescan != pstate->continuescan))
		btjit_report_check_mismatch(scan, tupnatts, dir, ix, stock_result,
									pstate->continuescan, result,
									jit_state.continuescan);
	return stock_result;
}

#elif defined(BTJIT_CHECKKEYS_REDIRECTABLE)
/*
 * The redirected _bt_checkkeys (PostgreSQL 15): the compiled scan-key
 * checks of an index that has them, else the original.  Called once per
 * tuple a scan reads, so an index without compiled code costs one slot
 * test, as for the compare.
 */
static pg_noinline bool btjit_verify_check(IndexScanDesc scan,
										   IndexTuple tuple, int tupnatts,
										   ScanDirection dir,
										   bool *continuescan,
										   BtjitIndex *ix);

bool
btjit_dispatch_check(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
					 ScanDirection dir, bool *continuescan)
{
	Relation	rel = scan->indexRelation;
	BtjitSlot  *slot;

	if (!btjit_code_active)
		return btjit_module.stock_check(scan, tuple, tupnatts, dir,
										continuescan);

	slot = btjit_slot_for(rel);
	if (likely(slot->rel == rel && slot->relid == rel->rd_id &&
			   slot->chk_entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return slot->chk_entry(scan, tuple, tupnatts, (int) dir,
								   continuescan, &slot->ix->counts.jit_checks);
		return btjit_verify_check(scan, tuple, tupnatts, dir, continuescan,
								  slot->ix);
	}
	return btjit_module.stock_check(scan, tuple, tupnatts, dir, continuescan);
}

/* verify mode: both, and the result and continuescan must agree */
static pg_noinline bool
btjit_verify_check(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
				   ScanDirection dir, bool *continuescan, BtjitIndex *ix)
{
	uint64		answered_before = ix->counts.jit_checks;
	bool		jit_continue = true;
	bool		result = ix->chk_entry(scan, tuple, tupnatts, (int) dir,
									   &jit_continue, &ix->counts.jit_checks);
	bool		stock_result = btjit_module.stock_check(scan, tuple, tupnatts,
														dir, continuescan);

	/* a call the compiled check declined compared the server with itself */
	if (ix->counts.jit_checks != answered_before)
		ix->counts.verified_checks++;
	if (unlikely(result != stock_result || jit_continue != *continuescan))
		btjit_report_check_mismatch(scan, tupnatts, dir, ix, stock_result,
									*continuescan, result, jit_continue);
	return stock_result;
}
#endif

#ifdef BTJIT_READPAGE_REDIRECTABLE
/*
 * The redirected _bt_readpage (15, 17 and 18): the module's leaf read
 * (leafread.c) for a scan whose index has compiled scan-key checks, else
 * the original.  A parallel scan (the read hands the next page to another
 * worker) and a scan with array keys keep the server's.  offnum arrives in
 * 32 bits and is truncated here: gcc's callers leave the upper bits
 * undefined (src/README, "Finding _bt_readpage").  17 and 18 add
 * firstPage, a bool, of which the callee reads the low byte only.
 */
#ifdef BTJIT_CHECKKEYS_READPAGE_STATE
bool
btjit_dispatch_readpage(IndexScanDesc scan, ScanDirection dir, uint32 offnum,
						bool firstpage)
#else
bool
btjit_dispatch_readpage(IndexScanDesc scan, ScanDirection dir, uint32 offnum)
#endif
{
	Relation	rel = scan->indexRelation;
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	BtjitSlot  *slot;
#ifndef BTJIT_CHECKKEYS_READPAGE_STATE
	bool		firstpage = false;	/* 15 has no such argument */
#endif

	if (!btjit_code_active || scan->parallel_scan != NULL ||
		so->numArrayKeys != 0)
		return BTJIT_STOCK_READPAGE(scan, dir, (OffsetNumber) offnum,
									firstpage);

	slot = btjit_slot_for(rel);
	if (likely(slot->rel == rel && slot->relid == rel->rd_id &&
			   slot->chk_entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return btjit_leafread(scan, dir, (OffsetNumber) offnum, firstpage,
								  slot->chk_entry, &slot->ix->counts);
		return btjit_leafread_verify(scan, dir, (OffsetNumber) offnum,
									 firstpage, slot->chk_entry, slot->ix);
	}
	return BTJIT_STOCK_READPAGE(scan, dir, (OffsetNumber) offnum, firstpage);
}
#endif

/*
 * Called by the compiled scan-key check when it leaves the call to the
 * server (a tuple with NULLs, a row comparison or NULL test, an operator
 * returning NULL); it has not written *continuescan.  Never called where
 * _bt_checkkeys is not redirected.
 */
bool
btjit_check_declined(void *scan, void *tuple, int tupnatts, int dir,
					 bool *continuescan, uint64 *counters)
{
#if defined(BTJIT_CHECKKEYS_READPAGE_STATE)
	/* continuescan is a BTReadPageState's (btjit_dispatch_check) */
	BTReadPageState *pstate = BTJIT_READPAGE_STATE_OF(continuescan);

	return btjit_module.stock_check((IndexScanDesc) scan, pstate, false,
									(IndexTuple) tuple, tupnatts);
#elif defined(BTJIT_CHECKKEYS_REDIRECTABLE)
	return btjit_module.stock_check((IndexScanDesc) scan, (IndexTuple) tuple,
									tupnatts, (ScanDirection) dir,
									continuescan);
#else
	elog(ERROR, "btree_jit: compiled scan-key check called on PostgreSQL %s",
		 PG_VERSION);
	return false;
#endif
}
