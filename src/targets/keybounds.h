/*-------------------------------------------------------------------------
 *
 * keybounds.h
 *	  A scan's integer keys as one interval per column, for the leaf read:
 *	  decoded once per page (keybounds.c), tested inline on each tuple.
 *
 * The compiled check walks the scan's keys for every tuple: it reads each
 * key's flags, recognises its operator and decodes its argument again, some
 * 20 instructions a key before the comparison itself.  Where every key is a
 * built-in integer comparison (integer_ops, any mix of int2, int4 and int8)
 * on a column stored at a fixed place, the keys of one column are an
 * interval of int64, and the test of a tuple is two comparisons per column
 * (src/README, "Integer keys as bounds").
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_KEYBOUNDS_H
#define BTREE_JIT_KEYBOUNDS_H

#include "access/itup.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/sdir.h"

/* The columns with keys a scan's bounds hold at most */
#define BTJIT_BOUNDED_COLUMNS 4

/*
 * One column's keys: its value passes when lo <= value <= hi.  A failing
 * value ends the scan as the key it fails would: *_continues is what
 * _bt_checkkeys sets continuescan to when that key fails in the read's
 * direction.  A column without a lower (upper) key has lo (hi) at the
 * int64 limit.
 */
typedef struct BtjitColumnBound
{
	int64		lo;
	int64		hi;
	uint16		offset;			/* of the value in a tuple without NULLs,
								 * from the end of its IndexTupleData */
	uint8		width;			/* 2, 4 or 8 bytes, signed */
	bool		lo_continues;
	bool		hi_continues;
} BtjitColumnBound;

/* A page read's bounds, when the keys are bounds */
typedef struct BtjitKeyBounds
{
	int			ncolumns;
	BtjitColumnBound columns[BTJIT_BOUNDED_COLUMNS];
} BtjitKeyBounds;

extern bool btjit_key_bounds(IndexScanDesc scan, ScanDirection dir,
							 BtjitKeyBounds *bounds);
extern int	btjit_column_offset(TupleDesc desc, AttrNumber attno);

/* An integer argument of 2^shift bytes, widened */
static inline int64
btjit_int_argument(Datum arg, int shift)
{
	if (shift == 2)
		return DatumGetInt32(arg);
	if (shift == 3)
		return DatumGetInt64(arg);
	return DatumGetInt16(arg);
}

/*
 * The integer operators, by function OID (keybounds.c): the comparison in
 * the low three bits (BTJIT_INT_*), then log2 of the left argument's width
 * and of the right one's in two bits each; 0 for any other function.
 */
#define BTJIT_INT_OPERATOR_OIDS 2048
#define BTJIT_INT_LT 1
#define BTJIT_INT_LE 2
#define BTJIT_INT_EQ 3
#define BTJIT_INT_GE 4
#define BTJIT_INT_GT 5
#define BTJIT_INT_OPERATOR(op, left_shift, right_shift) \
	((op) | ((left_shift) << 3) | ((right_shift) << 5))
#define BTJIT_INT_OPERATOR_OP(code) ((code) & 7)
#define BTJIT_INT_OPERATOR_LEFT(code) (((code) >> 3) & 3)
#define BTJIT_INT_OPERATOR_RIGHT(code) (((code) >> 5) & 3)

extern const uint8 btjit_int_operators[BTJIT_INT_OPERATOR_OIDS];

/* Key flags that keep a scan's keys from being bounds */
#define BTJIT_BOUNDS_REFUSED_FLAGS \
	(SK_ROW_HEADER | SK_ISNULL | SK_SEARCHNULL | SK_SEARCHNOTNULL)

static inline int
btjit_int_operator(Oid fn)
{
	return fn < BTJIT_INT_OPERATOR_OIDS ? btjit_int_operators[fn] : 0;
}

/*
 * Whether a read of scan's keys should try them as bounds: every key an
 * integer operator (the cheap first test of btjit_key_bounds), and the
 * last key not an = key.  Keys are in column order, so a scan whose last
 * key is = is a probe or a run of equal keys: it tests a tuple or two (the
 * page shortcut saves a long run untested), which would not pay for the
 * decoding.  The keys are looked at from the last: a key of another type
 * is most often on a later column (an int4 id and a timestamp), so a scan
 * the bounds do not take costs a key or two.  Made inline by the read's
 * dispatcher, and by verify, which reads as the fast path does.
 */
static inline bool
btjit_keys_may_bound(BTScanOpaque so)
{
	int			i = so->numberOfKeys - 1;

	if (i < 0 || so->keyData[i].sk_strategy == BTEqualStrategyNumber)
		return false;
	for (; i >= 0; i--)
		if (btjit_int_operator(so->keyData[i].sk_func.fn_oid) == 0)
			return false;
	return true;
}

/* The outcome of a tuple's test against the bounds */
typedef enum BtjitBoundsResult
{
	BTJIT_BOUNDS_FAIL = 0,		/* continuescan set as the failing key's */
	BTJIT_BOUNDS_PASS = 1,		/* continuescan set true */
	BTJIT_BOUNDS_NULLS = -1		/* the tuple has NULLs: not tested */
} BtjitBoundsResult;

/*
 * A column's value in a tuple without NULLs, at ptr, width bytes wide:
 * inline with a constant width, the one-column walk's (readpage.c).
 */
static pg_attribute_always_inline int64
btjit_bound_value(const char *ptr, int width)
{
	if (likely(width == sizeof(int32)))
		return *(const int32 *) ptr;
	if (width == sizeof(int64))
		return *(const int64 *) ptr;
	return *(const int16 *) ptr;
}

/*
 * What _bt_checkkeys answers for a leaf tuple, from the bounds (ncolumns >
 * 0).  The columns are in key order, the order in which the server tests
 * them; within a column a value fails at most one bound (lo <= hi), so the
 * first column that fails holds the key the server stops at.
 */
static pg_attribute_always_inline BtjitBoundsResult
btjit_bounds_test(const BtjitKeyBounds *bounds, IndexTuple itup,
				  bool *continuescan)
{
	const char *data = (const char *) itup + MAXALIGN(sizeof(IndexTupleData));
	int			c = 0;

	if (itup->t_info & INDEX_NULL_MASK)
		return BTJIT_BOUNDS_NULLS;
	do
	{
		const BtjitColumnBound *col = &bounds->columns[c];
		int64		value = btjit_bound_value(data + col->offset, col->width);

		if (value < col->lo)
		{
			*continuescan = col->lo_continues;
			return BTJIT_BOUNDS_FAIL;
		}
		if (value > col->hi)
		{
			*continuescan = col->hi_continues;
			return BTJIT_BOUNDS_FAIL;
		}
	} while (++c < bounds->ncolumns);
	*continuescan = true;
	return BTJIT_BOUNDS_PASS;
}

#endif							/* BTREE_JIT_KEYBOUNDS_H */
