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
 * dispatcher then runs the stock path).  The rules are in DESIGN.md, "The
 * contract".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "storage/bufpage.h"

#include "shape.h"

/* Bound by the specialiser; never defined in C. */
extern const BtjitShape btjit_shape_param;

#define SHAPE btjit_shape_param

/* The scankey, decoded once per page search. */
typedef struct BtjitKey
{
	int			keysz;
	bool		nextkey;
	bool		pivotsearch;
	ItemPointer scantid;
	int64		arg[BTJIT_MAX_KEYS];
	bool		argnull[BTJIT_MAX_KEYS];
} BtjitKey;

int			btjit_search(void *scankey, const char *page);

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
	if (col->desc)
		return (stored > k->arg[i]) - (stored < k->arg[i]);
	return (k->arg[i] > stored) - (k->arg[i] < stored);
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
btjit_tiebreak(IndexTuple itup, int keysz, int ntupatts, bool pivotsearch,
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
		if (!pivotsearch && keysz == ntupatts && heaptid == NULL)
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
 * _bt_compare for the item at offnum, minus the internal-page first-item
 * rule (the caller applies it).
 *
 * With general false, the tuple is known to have no NULLs and the scankey
 * none either, so every key column sits at its fixed offset; with full true
 * the scankey is known to cover every key column.  With general true, the
 * null bitmap is walked, laying out the present attributes as
 * index_form_tuple did.
 */
static inline __attribute__((always_inline)) int
btjit_compare(const BtjitKey *k, IndexTuple itup, bool general, bool full)
{
	int			keysz = full ? SHAPE.nkeys : k->keysz;
	int			ntupatts = btjit_tuple_natts(itup);
	int			ncmp = Min(ntupatts, keysz);
	bool		hasnulls = general && (itup->t_info & INDEX_NULL_MASK) != 0;
	const bits8 *bitmap = (const bits8 *) ((const char *) itup + sizeof(IndexTupleData));
	const char *data = (const char *) itup + IndexInfoFindDataOffset(itup->t_info);
	uint32		off = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		int64		value = 0;
		bool		isnull = false;
		int			result;

		if (i >= SHAPE.nkeys || i >= ncmp)
			break;
		if (!general)
			value = btjit_stored_value((const char *) itup + col->fixed_offset,
									   col->kind);
		else
		{
			isnull = hasnulls && !(bitmap[i >> 3] & (1 << (i & 7)));
			if (!isnull)
			{
				off = TYPEALIGN(col->attalign, off);
				value = btjit_stored_value(data + off, col->kind);
				off += col->attlen;
			}
		}
		result = btjit_compare_attr(i, k, isnull, value);
		if (result != 0)
			return result;
	}
	return btjit_tiebreak(itup, keysz, ntupatts, k->pivotsearch, k->scantid);
}

static __attribute__((noinline)) int btjit_search_general(BtjitKey k,
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
btjit_binsrch(const BtjitKey *k, const char *page, bool nextkey, bool general,
			  bool leaf, bool full)
{
	BTPageOpaque opaque = BTPageGetOpaque((Page) page);
	OffsetNumber firstkey = P_FIRSTDATAKEY(opaque);
	OffsetNumber low = firstkey;
	OffsetNumber high = PageGetMaxOffsetNumber((Page) page);
	int			cmpval = nextkey ? 0 : 1;

	if (high < low)
		return low;
	high++;

	while (high > low)
	{
		/* high > low, so an unsigned halving is the same midpoint */
		OffsetNumber mid = low + ((uint32) (high - low) >> 1);
		int			result;

		/* On internal pages the first data item is minus infinity. */
		if (!leaf && mid == firstkey)
			result = 1;
		else
		{
			ItemId		iid = PageGetItemId((Page) page, mid);
			IndexTuple	itup = (IndexTuple) (page + ItemIdGetOffset(iid));

			if (!general && (itup->t_info & INDEX_NULL_MASK))
				return btjit_search_general(*k, page);
			result = btjit_compare(k, itup, general, full);
		}

		if (result >= cmpval)
			low = mid + 1;
		else
			high = mid;
	}

	if (leaf)
		return low;
	return low - 1;
}

static __attribute__((noinline)) int
btjit_search_general(BtjitKey k, const char *page)
{
	if (P_ISLEAF(BTPageGetOpaque((Page) page)))
		return btjit_binsrch(&k, page, k.nextkey, true, true, false);
	return btjit_binsrch(&k, page, k.nextkey, true, false, false);
}

/*
 * Entry point: check that the scankey is one the shape covers, decode its
 * arguments once, and run the page search.
 */
int
btjit_search(void *scankey, const char *page)
{
	BTScanInsert key = (BTScanInsert) scankey;
	BtjitKey	k;
	bool		anynull = false;
	bool		leaf = P_ISLEAF(BTPageGetOpaque((Page) page));

	k.keysz = key->keysz;
	if (!key->heapkeyspace || k.keysz < 1 || k.keysz > SHAPE.nkeys)
		return BTJIT_DECLINE;
	/* scantid searches of leaf pages belong to _bt_binsrch_insert */
	if (key->scantid != NULL && (key->nextkey || leaf))
		return BTJIT_DECLINE;
	k.scantid = key->scantid;
	k.pivotsearch = key->pivotsearch;
	k.nextkey = key->nextkey;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		ScanKey		sk = &key->scankeys[i];
		int			flags = col->desc ? SK_BT_DESC : 0;
		int			argkind = BTJIT_KIND_NONE;

		k.arg[i] = 0;
		k.argnull[i] = false;
		if (i >= SHAPE.nkeys || i >= k.keysz)
			continue;
		if (col->nulls_first)
			flags |= SK_BT_NULLS_FIRST;
		if (sk->sk_attno != i + 1 ||
			(sk->sk_flags & (SK_BT_DESC | SK_BT_NULLS_FIRST)) != flags)
			return BTJIT_DECLINE;

		if (sk->sk_flags & SK_ISNULL)
		{
			k.argnull[i] = true;
			anynull = true;
			continue;
		}

#pragma clang loop unroll(full)
		for (int p = 0; p < BTJIT_MAX_PROCS; p++)
		{
			if (p < col->nprocs && sk->sk_func.fn_oid == col->procs[p])
			{
				argkind = col->argkinds[p];
				break;
			}
		}
		if (argkind == BTJIT_KIND_NONE)
			return BTJIT_DECLINE;
		k.arg[i] = btjit_arg_value(sk->sk_argument, argkind);
	}

	if (anynull)
		return btjit_search_general(k, page);

	/* One loop per combination; the common ones are the full-key ones. */
	if (k.keysz == SHAPE.nkeys)
	{
		if (leaf)
			return k.nextkey ? btjit_binsrch(&k, page, true, false, true, true) :
				btjit_binsrch(&k, page, false, false, true, true);
		return k.nextkey ? btjit_binsrch(&k, page, true, false, false, true) :
			btjit_binsrch(&k, page, false, false, false, true);
	}
	if (leaf)
		return k.nextkey ? btjit_binsrch(&k, page, true, false, true, false) :
			btjit_binsrch(&k, page, false, false, true, false);
	return k.nextkey ? btjit_binsrch(&k, page, true, false, false, false) :
		btjit_binsrch(&k, page, false, false, false, false);
}
