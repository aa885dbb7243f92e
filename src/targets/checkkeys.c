/*-------------------------------------------------------------------------
 *
 * checkkeys.c
 *	  The redirected _bt_checkkeys: the scan-key test of every tuple a scan
 *	  reads, on the compiled checks of an index that has them.
 *
 * 15 exports (scan, tuple, tupnatts, dir, &continuescan); 17 and 18
 * export (scan, pstate, arrayKeys, tuple, tupnatts), the result going to
 * pstate->continuescan (pg_compat.h).  19 made it static inside
 * _bt_readpage: there this target is not redirected, the module's leaf
 * read (readpage.c) is the compiled check's only caller, and the declined
 * callback hands the page back to it.  Called
 * once per tuple a scan reads, so an index without compiled code costs
 * one slot test.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/itup.h"
#include "access/relscan.h"
#include "utils/rel.h"

#include "targets/targets.h"

/* The server's _bt_checkkeys, through its detour's trampoline. */
#if defined(BTJIT_CHECKKEYS_READPAGE_STATE)
typedef bool (*BtjitCheckkeysFn) (IndexScanDesc scan,
								  BTReadPageState *pstate, bool arrayKeys,
								  IndexTuple tuple, int tupnatts);
#elif defined(BTJIT_CHECKKEYS_REDIRECTABLE)
typedef bool (*BtjitCheckkeysFn) (IndexScanDesc scan, IndexTuple tuple,
								  int tupnatts, ScanDirection dir,
								  bool *continuescan);
#endif
#define BTJIT_STOCK_CHECK \
	((BtjitCheckkeysFn) btjit_module.stock[BTJIT_TARGET_CHECKKEYS])

#if defined(BTJIT_CHECKKEYS_READPAGE_STATE)
static bool btjit_dispatch_check(IndexScanDesc scan, BTReadPageState *pstate,
								 bool arrayKeys, IndexTuple tuple,
								 int tupnatts);
#elif defined(BTJIT_CHECKKEYS_REDIRECTABLE)
static bool btjit_dispatch_check(IndexScanDesc scan, IndexTuple tuple,
								 int tupnatts, ScanDirection dir,
								 bool *continuescan);
#endif

const BtjitTargetImpl btjit_target_checkkeys = {
#ifdef BTJIT_CHECKKEYS_REDIRECTABLE
	.dispatcher = (void *) btjit_dispatch_check,
#endif
	.declined = (void *) btjit_check_declined,
};

#ifdef BTJIT_CHECKKEYS_REDIRECTABLE
/* What a scan-key check answered: its result and continuescan. */
typedef struct BtjitCheckAnswer
{
	bool		result;
	bool		continuescan;
} BtjitCheckAnswer;

/* verify found a compiled scan-key check that differs: raise the error */
static pg_noinline void
btjit_report_check_mismatch(IndexScanDesc scan, int tupnatts,
							ScanDirection dir, const BtjitIndex *ix,
							BtjitCheckAnswer stock, BtjitCheckAnswer jit)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("btree_jit: compiled scan-key check in index \"%s\" differs from the server's own",
					RelationGetRelationName(scan->indexRelation)),
			 errdetail("_bt_checkkeys returned %s with continuescan %s, compiled code returned %s with continuescan %s; %d scan keys, %d tuple attributes, %s scan; shape %s.",
					   stock.result ? "true" : "false",
					   stock.continuescan ? "true" : "false",
					   jit.result ? "true" : "false",
					   jit.continuescan ? "true" : "false",
					   so->numberOfKeys, tupnatts,
					   ScanDirectionIsBackward(dir) ? "backward" : "forward",
					   ix->signature),
			 errhint(BTJIT_VERIFY_HINT)));
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

static bool
btjit_dispatch_check(IndexScanDesc scan, BTReadPageState *pstate,
					 bool arrayKeys, IndexTuple tuple, int tupnatts)
{
	Relation	rel = scan->indexRelation;
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	BtjitSlot  *slot;
	BtjitCheckEntryFn entry;

	/*
	 * A scan with arrays is here only from the server's leaf read, which
	 * counts as such (btree_jit_stock_calls counts its pages, not each
	 * tuple: a lookup per tuple would cost the server's path).
	 */
	if (!btjit_code_active || arrayKeys || so->numArrayKeys != 0)
		return BTJIT_STOCK_CHECK(scan, pstate, arrayKeys, tuple, tupnatts);

	slot = btjit_slot_for(rel);
	entry = btjit_slot_entry_CHECKKEYS(slot, rel);
	if (likely(entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return entry(scan, tuple, tupnatts,
						 (int) BTJIT_READPAGE_DIR(so, pstate),
						 &pstate->continuescan, &slot->ix->counts.jit_checks);
		return btjit_verify_check(scan, pstate, tuple, tupnatts, slot->ix);
	}
	return BTJIT_STOCK_CHECK(scan, pstate, false, tuple, tupnatts);
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
	result = btjit_entry_CHECKKEYS(ix->entries)(scan, tuple, tupnatts, (int) dir,
						   &jit_state.continuescan, &ix->counts.jit_checks);
	stock_result = BTJIT_STOCK_CHECK(scan, pstate, false, tuple,
											tupnatts);
	/* a call the compiled check declined compared the server with itself */
	if (ix->counts.jit_checks != answered_before)
		ix->counts.verified_checks++;
	if (unlikely(result != stock_result ||
				 jit_state.continuescan != pstate->continuescan))
		btjit_report_check_mismatch(scan, tupnatts, dir, ix,
									(BtjitCheckAnswer) {stock_result, pstate->continuescan},
									(BtjitCheckAnswer) {result, jit_state.continuescan});
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

static bool
btjit_dispatch_check(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
					 ScanDirection dir, bool *continuescan)
{
	Relation	rel = scan->indexRelation;
	BtjitSlot  *slot;
	BtjitCheckEntryFn entry;

	if (!btjit_code_active)
		return BTJIT_STOCK_CHECK(scan, tuple, tupnatts, dir, continuescan);

	slot = btjit_slot_for(rel);
	entry = btjit_slot_entry_CHECKKEYS(slot, rel);
	if (likely(entry != NULL))
	{
		if (likely(btjit_fast_ok))
			return entry(scan, tuple, tupnatts, (int) dir, continuescan,
						 &slot->ix->counts.jit_checks);
		return btjit_verify_check(scan, tuple, tupnatts, dir, continuescan,
								  slot->ix);
	}
	return BTJIT_STOCK_CHECK(scan, tuple, tupnatts, dir, continuescan);
}

/* verify mode: both, and the result and continuescan must agree */
static pg_noinline bool
btjit_verify_check(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
				   ScanDirection dir, bool *continuescan, BtjitIndex *ix)
{
	uint64		answered_before = ix->counts.jit_checks;
	bool		jit_continue = true;
	bool		result = btjit_entry_CHECKKEYS(ix->entries)(scan, tuple, tupnatts, (int) dir,
									   &jit_continue, &ix->counts.jit_checks);
	bool		stock_result = BTJIT_STOCK_CHECK(scan, tuple, tupnatts,
														dir, continuescan);

	/* a call the compiled check declined compared the server with itself */
	if (ix->counts.jit_checks != answered_before)
		ix->counts.verified_checks++;
	if (unlikely(result != stock_result || jit_continue != *continuescan))
		btjit_report_check_mismatch(scan, tupnatts, dir, ix,
									(BtjitCheckAnswer) {stock_result, *continuescan},
									(BtjitCheckAnswer) {result, jit_continue});
	return stock_result;
}
#endif

#ifdef BTJIT_READPAGE_OWNS_CHECKS
/*
 * 19: the test of a tuple the compiled check declined, made here by the
 * rules of 19's _bt_check_compare for a scan without arrays, from the
 * first key (the module's read skips none): 1 or 0 with *continuescan set,
 * or -1 for a key this does not take (a row comparison; array and skip
 * keys, which such a scan does not have), whose page the server reads.
 *
 * A key fails the tuple as the operator says, and a failing key required
 * in the scan's direction ends the scan.  An attribute past tupnatts (a
 * truncated high key) passes.  IS NULL and IS NOT NULL keys test the
 * attribute's nullness.  A NULL attribute fails an ordinary key, and ends
 * the scan when the key is required in either direction and the scan is
 * moving towards where the NULLs sort (first or last): no value of the
 * column is left there.  An operator returning NULL raises the error the
 * server raises, from the same call.
 */
static int
btjit_check_tuple_here(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
					   ScanDirection dir, bool *continuescan)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	TupleDesc	tupdesc = RelationGetDescr(scan->indexRelation);
	bool		forward = ScanDirectionIsForward(dir);

	*continuescan = true;
	for (int i = 0; i < so->numberOfKeys; i++)
	{
		ScanKey		key = &so->keyData[i];
		int			flags = key->sk_flags;
		bool		required_here = (flags & (forward ? SK_BT_REQFWD : SK_BT_REQBKWD)) != 0;
		bool		required = (flags & (SK_BT_REQFWD | SK_BT_REQBKWD)) != 0;
		Datum		datum;
		bool		isnull;

		if (key->sk_attno > tupnatts)
			continue;
		if (flags & BTJIT_KEYS_LEFT_TO_SERVER)
			return -1;
		datum = index_getattr(tuple, key->sk_attno, tupdesc, &isnull);
		if (flags & SK_ISNULL)
		{
			if (isnull == ((flags & SK_SEARCHNULL) != 0))
				continue;
			if (required_here)
				*continuescan = false;
			return 0;
		}
		if (isnull)
		{
			bool		towards_nulls = (flags & SK_BT_NULLS_FIRST) ? !forward : forward;

			if (required && towards_nulls)
				*continuescan = false;
			return 0;
		}
		if (!DatumGetBool(FunctionCall2Coll(&key->sk_func, key->sk_collation,
											datum, key->sk_argument)))
		{
			if (required_here)
				*continuescan = false;
			return 0;
		}
	}
	return 1;
}
#endif

/*
 * Why the compiled check declined a tuple, for btree_jit_stock_calls: a
 * row comparison among the keys, a NULL test key or a NULL in the tuple,
 * else something else (an operator returning NULL).
 */
BtjitStockReason
btjit_declined_reason(IndexScanDesc scan, IndexTuple tuple)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	BtjitStockReason why = IndexTupleHasNulls(tuple) ?
		BTJIT_STOCK_NULLS : BTJIT_STOCK_DECLINED;

	for (int i = 0; i < so->numberOfKeys; i++)
	{
		if (so->keyData[i].sk_flags & SK_ROW_HEADER)
			return BTJIT_STOCK_ROW_COMPARE;
		if (so->keyData[i].sk_flags & SK_ISNULL)
			why = BTJIT_STOCK_NULLS;
	}
	return why;
}

/*
 * Called by the compiled scan-key check when it leaves the call to the
 * server (a tuple with NULLs, a row comparison or NULL test, an operator
 * returning NULL); it has not written *continuescan.  On 19, with no
 * server function to call, the module tests the tuple itself
 * (btjit_check_tuple_here); what that does not take is refused: the leaf
 * read's walk stops (continuescan false, the result false) and the read,
 * seeing declined, gives the page to the server's _bt_readpage.
 */
bool
btjit_check_declined(void *scan, void *tuple, int tupnatts, int dir,
					 bool *continuescan, uint64 *counters)
{
	IndexScanDesc iscan = (IndexScanDesc) scan;
#if defined(BTJIT_CHECKKEYS_READPAGE_STATE)
	/* continuescan is a BTReadPageState's (btjit_dispatch_check) */
	BTReadPageState *pstate = BTJIT_READPAGE_STATE_OF(continuescan);
#elif defined(BTJIT_READPAGE_OWNS_CHECKS)
	int			result;
#endif

#ifdef BTJIT_READPAGE_ARRAYS_SCAN_BEHIND

	/*
	 * 18 tests no tuple of a scan with array keys without them (its
	 * _bt_checkkeys asserts so), and only the module's leaf read calls the
	 * compiled check for such a scan: ending the scan here hands the tuple
	 * to the server's whole test with its arrays, which the walk makes
	 * where the compiled check ends the scan (readpage.c,
	 * leafread_test_arrays), and which counts it.
	 */
	if (((BTScanOpaque) iscan->opaque)->numArrayKeys != 0)
	{
		*continuescan = false;
		return false;
	}
#endif
	btjit_count_stock_check(iscan->indexRelation,
							btjit_declined_reason(iscan, (IndexTuple) tuple));
#if defined(BTJIT_CHECKKEYS_READPAGE_STATE)
	return BTJIT_STOCK_CHECK(iscan, pstate, false, (IndexTuple) tuple,
							 tupnatts);
#elif defined(BTJIT_CHECKKEYS_REDIRECTABLE)
	return BTJIT_STOCK_CHECK(iscan, (IndexTuple) tuple, tupnatts,
							 (ScanDirection) dir, continuescan);
#elif defined(BTJIT_READPAGE_OWNS_CHECKS)
	result = btjit_check_tuple_here(iscan, (IndexTuple) tuple, tupnatts,
									(ScanDirection) dir, continuescan);
	if (result >= 0)
		return result != 0;
	/* continuescan is a BtjitLeafreadChecks' (readpage.c) */
	BTJIT_LEAFREAD_CHECKS_OF(continuescan)->declined = true;
	*continuescan = false;
	return false;
#else
	elog(ERROR, "btree_jit: compiled scan-key check called on PostgreSQL %s",
		 PG_VERSION);
	return false;
#endif
}
