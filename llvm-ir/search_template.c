/*-------------------------------------------------------------------------
 *
 * search_template.c
 *	  The page search template: _bt_binsrch and _bt_compare fused, generic
 *	  over a constant key shape.
 *
 * Compiled by clang-14 to bitcode at build time, against the server's
 * headers, so struct layouts and the header's inline accessors are the
 * server's own.  It is never linked into the module: at run time compile.c
 * loads the bitcode, gives btjit_shape_param a constant initializer
 * describing one index's key shape, and optimises.  Every test on the
 * shape then folds away, the per-column loops unroll, and what is left is
 * the page search for exactly that shape: fixed-offset loads of the key
 * columns, integer compares, no calls.
 *
 * The function must return what _bt_binsrch returns for every input the
 * server can give it, or BTJIT_DECLINE for scankeys outside the shape (the
 * dispatcher then runs the stock path).  The rules, per PostgreSQL
 * version, are in src/README, "The contract".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"

#include "pg_compat.h"
#include "shape.h"

/* Bound by the specialiser; never defined in C. */
extern const BtjitShape btjit_shape_param;

#define SHAPE btjit_shape_param

/* The scankey, decoded once per page search. */
typedef struct BtjitKey
{
	int			keysz;
	bool		nextkey;
	bool		backward;		/* pivotsearch up to 16 (pg_compat.h) */
	ItemPointer scantid;
	int64		arg[BTJIT_MAX_KEYS];
	bool		argnull[BTJIT_MAX_KEYS];
	bool		argdiff[BTJIT_MAX_KEYS];	/* proc returns a difference */
} BtjitKey;

int			btjit_search(void *scankey, const char *page);
uint16		btjit_entry(void *rel, void *scankey, int buf, uint64 *counters);
int32		btjit_compare_entry(void *rel, void *scankey, const char *page,
								uint32 offnum, uint64 *counters);

/* In the module: run the stock path for a declined search or compare. */
extern uint16 btjit_declined(void *rel, void *scankey, int buf,
							 uint64 *counters);
extern int32 btjit_compare_declined(void *rel, void *scankey, const char *page,
									uint32 offnum, uint64 *counters);

/*
 * A stored value widened to int64 the way the comparison proc sees it:
 * every first-wave proc compares these exactly (oid and "char" unsigned,
 * bool as zero or not).
 */
static inline __attribute__((always_inline)) int64
btjit_stored_value(const char *p, int kind)
{
	switch (kind)
	{
		case BTJIT_KIND_INT16:
			return *(const int16 *) p;
		case BTJIT_KIND_INT32:
			return *(const int32 *) p;
		case BTJIT_KIND_INT64:
			return *(const int64 *) p;
		case BTJIT_KIND_UINT32:
			return *(const uint32 *) p;
		case BTJIT_KIND_BOOL:
			return *(const uint8 *) p != 0;
		case BTJIT_KIND_UINT8:
			return *(const uint8 *) p;
	}
	return 0;
}

/*
 * A scankey argument as the proc reads it: only the low bits of a narrow
 * type's Datum are defined, so cut to the type's width first.
 */
static inline __attribute__((always_inline)) int64
btjit_arg_value(Datum d, int kind)
{
	switch (kind)
	{
		case BTJIT_KIND_INT16:
			return (int16) d;
		case BTJIT_KIND_INT32:
			return (int32) d;
		case BTJIT_KIND_INT64:
			return (int64) d;
		case BTJIT_KIND_UINT32:
			return (uint32) d;
		case BTJIT_KIND_BOOL:
			return d != 0;
		case BTJIT_KIND_UINT8:
			return (uint8) d;
	}
	return 0;
}

/* Three-way comparison of heap TIDs: block number, then offset. */
static inline int
btjit_tid_compare(ItemPointer a, ItemPointer b)
{
	BlockNumber ba = ItemPointerGetBlockNumberNoCheck(a);
	BlockNumber bb = ItemPointerGetBlockNumberNoCheck(b);
	OffsetNumber oa,
				ob;

	if (ba != bb)
		return ba < bb ? -1 : 1;
	oa = ItemPointerGetOffsetNumberNoCheck(a);
	ob = ItemPointerGetOffsetNumberNoCheck(b);
	return (oa > ob) - (oa < ob);
}

/*
 * _bt_compare's result for two non-NULL values of one attribute, as
 * branches: once inlined into the search loop, "result >= cmpval" folds into
 * a single comparison of the two values.
 */
static inline __attribute__((always_inline)) int
btjit_compare_value(const BtjitColumnShape *col, int64 arg, int64 stored)
{
	if (arg == stored)
		return 0;
	if (col->desc)
		return stored > arg ? 1 : -1;
	return arg > stored ? 1 : -1;
}

/*
 * _bt_compare's result for one attribute.  The proc is called as
 * proc(stored, argument) and negated unless the column is DESC, which for an
 * exact comparison is sign(argument - stored), resp. sign(stored - argument).
 */
static inline __attribute__((always_inline)) int
btjit_compare_attr(int i, const BtjitKey *k, bool stored_null, int64 stored)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];

	if (k->argnull[i])
	{
		if (stored_null)
			return 0;
		return col->nulls_first ? -1 : 1;
	}
	if (stored_null)
		return col->nulls_first ? 1 : -1;
	return btjit_compare_value(col, k->arg[i], stored);
}

/*
 * Number of attributes of a tuple, as far as comparisons are concerned.
 * Pivot tuples store theirs; other tuples carry every attribute, and
 * counting only the key columns gives the same answers (keysz never exceeds
 * them, and such tuples always have a heap TID).
 */
static inline __attribute__((always_inline)) int
btjit_tuple_natts(IndexTuple itup)
{
	if (itup->t_info & INDEX_ALT_TID_MASK)
	{
		uint16		tidoff = ItemPointerGetOffsetNumberNoCheck(&itup->t_tid);

		if ((tidoff & BT_IS_POSTING) == 0)
			return tidoff & BT_OFFSET_MASK;
	}
	return SHAPE.nkeys;
}

/*
 * What _bt_compare returns once every compared attribute was equal:
 * truncated attributes, then the heap TID tie-break.  Out of line: it runs
 * at most a few times per search.
 */
static __attribute__((noinline)) int
btjit_tiebreak(IndexTuple itup, int keysz, int ntupatts, bool backward,
			   ItemPointer scantid)
{
	uint16		tidoff = ItemPointerGetOffsetNumberNoCheck(&itup->t_tid);
	bool		alt = (itup->t_info & INDEX_ALT_TID_MASK) != 0;
	bool		posting = alt && (tidoff & BT_IS_POSTING) != 0;
	bool		pivot = alt && !posting;
	ItemPointer heaptid;
	int			result;

	/* Truncated attributes are minus infinity. */
	if (keysz > ntupatts)
		return 1;

	if (pivot)
		heaptid = (tidoff & BT_PIVOT_HEAP_TID_ATTR) ?
			(ItemPointer) ((char *) itup + IndexTupleSize(itup) - sizeof(ItemPointerData)) :
			NULL;
	else if (posting)
		heaptid = (ItemPointer) ((char *) itup +
								 ItemPointerGetBlockNumberNoCheck(&itup->t_tid));
	else
		heaptid = &itup->t_tid;

	if (scantid == NULL)
	{
		/* heapkeyspace is guaranteed by the entry point */
		if (!backward && keysz == ntupatts && heaptid == NULL)
			return 1;
		return 0;
	}
	if (heaptid == NULL)
		return 1;
	result = btjit_tid_compare(scantid, heaptid);
	if (result <= 0 || !posting)
		return result;
	/* Within a posting list's range of TIDs counts as equal. */
	if (btjit_tid_compare(scantid, heaptid + ((tidoff & BT_OFFSET_MASK) - 1)) > 0)
		return 1;
	return 0;
}

/*
 * "_bt_compare(...) >= cmpval" for a tuple without NULLs against a scankey
 * without NULLs, minus the internal-page first-item rule (the caller
 * applies it): every present key column sits at its fixed offset.  The
 * caller works out the tuple's attribute count, cheaply for the kind of
 * tuple it expects on the page; with full true the scankey is known to
 * cover every key column.
 *
 * Returning the branch decision rather than the three-way result lets a
 * differing column decide with one comparison of the two values: for a
 * result of +1 or -1 and cmpval of 0 or 1, result >= cmpval means +1.
 */
static inline __attribute__((always_inline)) bool
btjit_goright_fast(const BtjitKey *k, IndexTuple itup, int ntupatts, bool full,
				   bool leafplain, int cmpval)
{
	int			keysz = full ? SHAPE.nkeys : k->keysz;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		int64		value;

		if (i >= SHAPE.nkeys || i >= keysz || i >= ntupatts)
			break;
		value = btjit_stored_value((const char *) itup + col->fixed_offset,
								   col->kind);
		if (value != k->arg[i])
			return col->desc ? value > k->arg[i] : k->arg[i] > value;
	}

	/*
	 * A plain tuple on a leaf page has every attribute and a heap TID, and
	 * leaf searches never carry a scantid (the entry declines those), so
	 * _bt_compare's answer for it is 0 here.
	 */
	if (leafplain)
		return 0 >= cmpval;
	return btjit_tiebreak(itup, keysz, ntupatts, k->backward,
						  k->scantid) >= cmpval;
}

/*
 * _bt_compare in full generality (NULLs in the tuple or the scankey, any
 * keysz), minus the internal-page first-item rule: walks the null bitmap,
 * laying out the present attributes as index_form_tuple did.
 */
static inline __attribute__((always_inline)) int
btjit_compare_general(const BtjitKey *k, IndexTuple itup)
{
	int			keysz = k->keysz;
	int			ntupatts = btjit_tuple_natts(itup);
	int			ncmp = Min(ntupatts, keysz);
	bool		hasnulls = (itup->t_info & INDEX_NULL_MASK) != 0;
	const bits8 *bitmap = (const bits8 *) ((const char *) itup + sizeof(IndexTupleData));
	const char *data = (const char *) itup + IndexInfoFindDataOffset(itup->t_info);
	uint32		off = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		int64		value = 0;
		bool		isnull;
		int			result;

		if (i >= SHAPE.nkeys || i >= ncmp)
			break;
		isnull = hasnulls && !(bitmap[i >> 3] & (1 << (i & 7)));
		if (!isnull)
		{
			off = TYPEALIGN(col->attalign, off);
			value = btjit_stored_value(data + off, col->kind);
			off += col->attlen;
		}
		result = btjit_compare_attr(i, k, isnull, value);
		if (result != 0)
			return result;
	}
	return btjit_tiebreak(itup, keysz, ntupatts, k->backward, k->scantid);
}

static __attribute__((noinline)) int btjit_search_general(void *scankey,
														  const char *page);

/*
 * _bt_binsrch's loop over one page, probing exactly the offsets it probes.
 * nextkey, leaf and full are constants in each copy the entry point
 * instantiates, so each copy carries only the tests it needs.  In the fast
 * variants a tuple with NULLs sends the whole search to the general
 * variant, which starts over: the answer does not depend on the path
 * taken, and the fast loop stays free of the bitmap walk.
 */
static inline __attribute__((always_inline)) int
btjit_binsrch(const BtjitKey *k, void *scankey, const char *page, bool nextkey,
			  bool general, bool leaf, bool full)
{
	BTPageOpaque opaque = BTPageGetOpaque((Page) page);
	uint32		firstkey = P_FIRSTDATAKEY(opaque);
	uint32		low = firstkey;
	uint32		high = PageGetMaxOffsetNumber((Page) page);
	int			cmpval = nextkey ? 0 : 1;

	if (high < low)
		return low;
	high++;

	/* Offsets are below MaxOffsetNumber: plain 32-bit arithmetic is exact. */
	while (high > low)
	{
		uint32		mid = (low + high) >> 1;
		bool		goright;

		/* On internal pages the first data item is minus infinity. */
		if (!leaf && mid == firstkey)
			goright = true;
		else
		{
			ItemId		iid = PageGetItemId((Page) page, mid);
			IndexTuple	itup = (IndexTuple) (page + ItemIdGetOffset(iid));
			uint16		info = itup->t_info;

			uint16		kind = info & (INDEX_NULL_MASK | INDEX_ALT_TID_MASK);
			uint16		tidoff = ItemPointerGetOffsetNumberNoCheck(&itup->t_tid);

			/*
			 * Test first for the tuples the page mostly holds: plain tuples
			 * on leaf pages (every attribute present), pivots on internal
			 * pages (attribute count in the TID offset).
			 */
			if (general)
				goright = btjit_compare_general(k, itup) >= cmpval;
			else if (leaf && likely(kind == 0))
				goright = btjit_goright_fast(k, itup, SHAPE.nkeys, full, true,
											 cmpval);
			else if (!leaf && likely(kind == INDEX_ALT_TID_MASK &&
									 (tidoff & BT_IS_POSTING) == 0))
				goright = btjit_goright_fast(k, itup, tidoff & BT_OFFSET_MASK,
											 full, false, cmpval);
			else if (kind & INDEX_NULL_MASK)
				return btjit_search_general(scankey, page);
			else
				goright = btjit_goright_fast(k, itup, btjit_tuple_natts(itup),
											 full, false, cmpval);
		}

		if (goright)
			low = mid + 1;
		else
			high = mid;
	}

	/* From 17 a backward leaf search returns the item before (pg_compat.h). */
	if (leaf)
		return (BTJIT_LEAF_BACKWARD && k->backward) ? low - 1 : low;
	return low - 1;
}

/*
 * Whether the proc returns a difference of its arguments rather than
 * -1/0/+1: btint2cmp, btboolcmp and btcharcmp (their own type on both
 * sides) do.
 */
static inline __attribute__((always_inline)) bool
btjit_proc_is_difference(const BtjitColumnShape *col, int argkind)
{
	return argkind == col->kind &&
		(col->kind == BTJIT_KIND_INT16 || col->kind == BTJIT_KIND_BOOL ||
		 col->kind == BTJIT_KIND_UINT8);
}

/* A decoded scankey argument, returned in registers. */
typedef struct BtjitArg
{
	int64		value;
	bool		ok;				/* the proc is one the shape accepts */
	bool		diff;			/* the proc returns a difference */
} BtjitArg;

/* A scankey attribute with a cross-type proc of column i. */
static __attribute__((noinline)) BtjitArg
btjit_decode_crosstype(int i, ScanKey sk)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	BtjitArg	a = {0, false, false};

	for (int p = 1; p < BTJIT_MAX_PROCS; p++)
	{
		if (p < col->nprocs && sk->sk_func.fn_oid == col->procs[p])
		{
			a.value = btjit_arg_value(sk->sk_argument, col->argkinds[p]);
			a.diff = btjit_proc_is_difference(col, col->argkinds[p]);
			a.ok = true;
			break;
		}
	}
	return a;
}

/*
 * Decode a scankey into k, checking that the shape covers it.  Returns
 * false to decline.  With general false, a NULL scankey attribute also
 * returns false, with *hasnull set: the caller hands such keys to the
 * general instance.
 */
static inline __attribute__((always_inline)) bool
btjit_decode_key(BTScanInsert key, BtjitKey *k, bool general, bool *hasnull)
{
	k->keysz = key->keysz;
	if (!key->heapkeyspace || k->keysz < 1 || k->keysz > SHAPE.nkeys)
		return false;
	k->scantid = key->scantid;
	k->backward = BTJIT_KEY_BACKWARD(key);
	k->nextkey = key->nextkey;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		ScanKey		sk = &key->scankeys[i];
		int			flags = col->desc ? SK_BT_DESC : 0;
		bool		matched = false;

		if (i >= SHAPE.nkeys)
			break;
		k->arg[i] = 0;
		k->argnull[i] = false;
		k->argdiff[i] = false;
		if (i >= k->keysz)
			continue;
		if (col->nulls_first)
			flags |= SK_BT_NULLS_FIRST;
		if (sk->sk_attno != i + 1 ||
			(sk->sk_flags & (SK_BT_DESC | SK_BT_NULLS_FIRST)) != flags)
			return false;

		if (sk->sk_flags & SK_ISNULL)
		{
			if (!general)
			{
				*hasnull = true;
				return false;
			}
			k->argnull[i] = true;
			continue;
		}

		/*
		 * The column's own proc reads the argument with a constant kind;
		 * cross-type procs go out of line, so that the optimiser cannot
		 * merge the two into a table lookup on the hot path.
		 */
		if (likely(sk->sk_func.fn_oid == col->procs[0]))
		{
			k->arg[i] = btjit_arg_value(sk->sk_argument, col->argkinds[0]);
			k->argdiff[i] = btjit_proc_is_difference(col, col->argkinds[0]);
			matched = true;
		}
		else
		{
			BtjitArg	a = btjit_decode_crosstype(i, sk);

			k->arg[i] = a.value;
			k->argdiff[i] = a.diff;
			matched = a.ok;
		}
		if (!matched)
			return false;
	}
	return true;
}

/*
 * Decode the scankey once per page search and run the page search.  The
 * fast instance (general false) declines nothing the general one accepts:
 * it hands scankeys with NULLs, and pages with NULLs in probed tuples, to
 * btjit_search_general, which decodes the key again.  Keeping the decoded
 * key private to each instance lets it live in registers.
 */
static inline __attribute__((always_inline)) int
btjit_search_impl(void *scankey, const char *page, bool general)
{
	BTScanInsert key = (BTScanInsert) scankey;
	BtjitKey	k;
	bool		hasnull = false;
	bool		leaf = P_ISLEAF(BTPageGetOpaque((Page) page));

	/* scantid searches of leaf pages belong to _bt_binsrch_insert */
	if (key->scantid != NULL && (key->nextkey || leaf))
		return BTJIT_DECLINE;
	if (!btjit_decode_key(key, &k, general, &hasnull))
		return hasnull ? btjit_search_general(scankey, page) : BTJIT_DECLINE;

	if (general)
	{
		if (leaf)
			return btjit_binsrch(&k, scankey, page, k.nextkey, true, true, false);
		return btjit_binsrch(&k, scankey, page, k.nextkey, true, false, false);
	}

	/* One loop per combination; the common ones are the full-key ones. */
	if (k.keysz == SHAPE.nkeys)
	{
		if (leaf)
			return k.nextkey ?
				btjit_binsrch(&k, scankey, page, true, false, true, true) :
				btjit_binsrch(&k, scankey, page, false, false, true, true);
		return k.nextkey ?
			btjit_binsrch(&k, scankey, page, true, false, false, true) :
			btjit_binsrch(&k, scankey, page, false, false, false, true);
	}
	if (leaf)
		return k.nextkey ?
			btjit_binsrch(&k, scankey, page, true, false, true, false) :
			btjit_binsrch(&k, scankey, page, false, false, true, false);
	return k.nextkey ?
		btjit_binsrch(&k, scankey, page, true, false, false, false) :
		btjit_binsrch(&k, scankey, page, false, false, false, false);
}

static __attribute__((noinline)) int
btjit_search_general(void *scankey, const char *page)
{
	return btjit_search_impl(scankey, page, true);
}

/*
 * Entry point: what _bt_binsrch returns for this scankey and page, or
 * BTJIT_DECLINE when the scankey is outside the shape.
 */
int
btjit_search(void *scankey, const char *page)
{
	return btjit_search_impl(scankey, page, false);
}

/*
 * Fused entry for the dispatcher's tail call (see BtjitEntryFn): the page
 * of a shared or local buffer as BufferGetPage finds it, the search, and
 * the count, with no frame of the dispatcher's in between.
 */
uint16
btjit_entry(void *rel, void *scankey, int buf, uint64 *counters)
{
	const char *page = (const char *) BufferGetPage(buf);
	int			result = btjit_search_impl(scankey, page, false);

	if (likely(result != BTJIT_DECLINE))
	{
		counters[0]++;
		return (uint16) result;
	}
	return btjit_declined(rel, scankey, buf, counters);
}

/*
 * _bt_compare's exact value for one attribute: the proc's own result
 * (a difference for int2, bool and "char" against their own type, else
 * -1/0/+1), inverted as INVERT_COMPARE_RESULT does unless DESC.  Callers
 * of _bt_compare other than the page search may look at more than the
 * sign, so the value must match, not just its sign.
 */
static inline __attribute__((always_inline)) int32
btjit_exact_attr(int i, const BtjitKey *k, bool stored_null, int64 stored)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	int32		c;

	if (k->argnull[i] || stored_null)
		return btjit_compare_attr(i, k, stored_null, stored);
	if (k->argdiff[i])
		c = (int32) stored - (int32) k->arg[i];
	else
		c = stored > k->arg[i] ? 1 : (stored < k->arg[i] ? -1 : 0);
	if (!col->desc)
		c = c < 0 ? 1 : -c;
	return c;
}

/*
 * _bt_compare(rel, scankey, page, offnum) with its exact value; *declined
 * set when the scankey is outside the shape.
 */
static inline __attribute__((always_inline)) int32
btjit_compare_one(void *scankey, const char *page, uint32 offnum,
				  bool *declined)
{
	BTScanInsert key = (BTScanInsert) scankey;
	BTPageOpaque opaque = BTPageGetOpaque((Page) page);
	BtjitKey	k;
	bool		hasnull = false;
	IndexTuple	itup;
	int			ntupatts;
	int			ncmp;
	bool		hasnulls;
	const bits8 *bitmap;
	const char *data;
	uint32		off = 0;

	if (!btjit_decode_key(key, &k, true, &hasnull))
	{
		*declined = true;
		return 0;
	}
	*declined = false;

	/* On internal pages the first data item is minus infinity. */
	if (!P_ISLEAF(opaque) && offnum == P_FIRSTDATAKEY(opaque))
		return 1;

	itup = (IndexTuple) (page + ItemIdGetOffset(PageGetItemId((Page) page, offnum)));
	ntupatts = btjit_tuple_natts(itup);
	ncmp = Min(ntupatts, k.keysz);
	hasnulls = (itup->t_info & INDEX_NULL_MASK) != 0;
	bitmap = (const bits8 *) ((const char *) itup + sizeof(IndexTupleData));
	data = (const char *) itup + IndexInfoFindDataOffset(itup->t_info);

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		int64		value = 0;
		bool		isnull;
		int32		result;

		if (i >= SHAPE.nkeys || i >= ncmp)
			break;
		isnull = hasnulls && !(bitmap[i >> 3] & (1 << (i & 7)));
		if (!isnull)
		{
			if (hasnulls)
			{
				off = TYPEALIGN(col->attalign, off);
				value = btjit_stored_value(data + off, col->kind);
				off += col->attlen;
			}
			else
				value = btjit_stored_value((const char *) itup + col->fixed_offset,
										   col->kind);
		}
		result = btjit_exact_attr(i, &k, isnull, value);
		if (result != 0)
			return result;
	}
	return btjit_tiebreak(itup, k.keysz, ntupatts, k.backward, k.scantid);
}

/*
 * Fused entry for the redirected _bt_compare: counts in counters[0], hands
 * declined calls to btjit_compare_declined.
 */
int32
btjit_compare_entry(void *rel, void *scankey, const char *page, uint32 offnum,
					uint64 *counters)
{
	bool		declined;
	int32		result = btjit_compare_one(scankey, page, offnum, &declined);

	if (likely(!declined))
	{
		counters[0]++;
		return result;
	}
	return btjit_compare_declined(rel, scankey, page, offnum, counters);
}
