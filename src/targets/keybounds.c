/*-------------------------------------------------------------------------
 *
 * keybounds.c
 *	  Decode a scan's keys into one integer interval per column, once per
 *	  leaf page the module reads (keybounds.h).
 *
 * The bounds stand for the keys only where they give every tuple the
 * answer and continuescan the server's _bt_checkkeys gives: each key's
 * function is one of integer_ops' built-in comparison operators, whose
 * result is the comparison of the two values widened to int64; the key's
 * column is stored at a fixed place in a tuple without NULLs, with the
 * width of the operator's left argument; a column has at most one lower
 * and one upper key (an = key being both), with lo <= hi, so that a value
 * fails one key at most; and the keys are in column order, as the server
 * tests them.  Anything else (other types, row comparisons, NULL tests, a
 * key the server's preprocessing left redundant, contradictory bounds)
 * leaves every tuple to the compiled check.
 *
 * A key the server skips on a page (17's precheck, 18's startikey) is in
 * the bounds all the same: the server skips it because every tuple the
 * walk reaches passes it, so testing it changes no answer.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "targets/keybounds.h"

/*
 * The integer operators by function OID (all below 2048 in every version's
 * fmgroids.h): each entry the operator's comparison and its arguments'
 * widths (keybounds.h), 0 for any other function.
 */
#define KEYBOUNDS_MEMBER(lt, le, eq, ge, gt, l, r) \
	[lt] = BTJIT_INT_OPERATOR(BTJIT_INT_LT, l, r), \
	[le] = BTJIT_INT_OPERATOR(BTJIT_INT_LE, l, r), \
	[eq] = BTJIT_INT_OPERATOR(BTJIT_INT_EQ, l, r), \
	[ge] = BTJIT_INT_OPERATOR(BTJIT_INT_GE, l, r), \
	[gt] = BTJIT_INT_OPERATOR(BTJIT_INT_GT, l, r)
const uint8 btjit_int_operators[BTJIT_INT_OPERATOR_OIDS] = {
	KEYBOUNDS_MEMBER(F_INT2LT, F_INT2LE, F_INT2EQ, F_INT2GE, F_INT2GT, 1, 1),
	KEYBOUNDS_MEMBER(F_INT24LT, F_INT24LE, F_INT24EQ, F_INT24GE, F_INT24GT, 1, 2),
	KEYBOUNDS_MEMBER(F_INT28LT, F_INT28LE, F_INT28EQ, F_INT28GE, F_INT28GT, 1, 3),
	KEYBOUNDS_MEMBER(F_INT4LT, F_INT4LE, F_INT4EQ, F_INT4GE, F_INT4GT, 2, 2),
	KEYBOUNDS_MEMBER(F_INT42LT, F_INT42LE, F_INT42EQ, F_INT42GE, F_INT42GT, 2, 1),
	KEYBOUNDS_MEMBER(F_INT48LT, F_INT48LE, F_INT48EQ, F_INT48GE, F_INT48GT, 2, 3),
	KEYBOUNDS_MEMBER(F_INT8LT, F_INT8LE, F_INT8EQ, F_INT8GE, F_INT8GT, 3, 3),
	KEYBOUNDS_MEMBER(F_INT82LT, F_INT82LE, F_INT82EQ, F_INT82GE, F_INT82GT, 3, 1),
	KEYBOUNDS_MEMBER(F_INT84LT, F_INT84LE, F_INT84EQ, F_INT84GE, F_INT84GT, 3, 2),
};
#undef KEYBOUNDS_MEMBER

/*
 * Where column attno is in a tuple without NULLs, from the end of its
 * IndexTupleData, or -1 when a column before it has no fixed length.
 */
int
btjit_column_offset(TupleDesc desc, AttrNumber attno)
{
	int			off = 0;

	for (int i = 0; i < attno; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attlen <= 0)
			return -1;
		off = att_align_nominal(off, att->attalign);
		if (i == attno - 1)
			return off;
		off += att->attlen;
	}
	return -1;
}

/*
 * Start column attno's bound in col: false when the column is not stored
 * by value at a fixed offset.
 */
static inline bool
keybounds_column(Relation rel, AttrNumber attno, BtjitColumnBound *col)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Form_pg_attribute att = TupleDescAttr(desc, attno - 1);
	int			offset = 0;

	if (!att->attbyval || att->attlen <= 0)
		return false;
	if (attno > 1)
	{
		offset = btjit_column_offset(desc, attno);
		if (offset < 0 || offset > PG_UINT16_MAX)
			return false;
	}
	col->lo = PG_INT64_MIN;
	col->hi = PG_INT64_MAX;
	col->offset = (uint16) offset;
	col->width = (uint8) att->attlen;
	col->lo_continues = col->hi_continues = true;
	return true;
}

/* Which of a column's bounds its keys have set so far */
#define KEYBOUNDS_LO_SET 1
#define KEYBOUNDS_HI_SET 2

/*
 * Set column col's lower (upper) bound to the inclusive value, failing a
 * key to continuescan continues: false when a key set it already.
 */
static inline bool
keybounds_set_lo(BtjitColumnBound *col, int *set, int64 value, bool continues)
{
	if (*set & KEYBOUNDS_LO_SET)
		return false;
	col->lo = value;
	col->lo_continues = continues;
	*set |= KEYBOUNDS_LO_SET;
	return true;
}

static inline bool
keybounds_set_hi(BtjitColumnBound *col, int *set, int64 value, bool continues)
{
	if (*set & KEYBOUNDS_HI_SET)
		return false;
	col->hi = value;
	col->hi_continues = continues;
	*set |= KEYBOUNDS_HI_SET;
	return true;
}

/*
 * The bounds of scan's keys for a read in direction dir; false when they
 * do not stand for the keys.  Each key writes its bound as an inclusive
 * one; one that would write a bound its column has already, or cannot
 * write (> the greatest int64, < the least), refuses them.
 */
bool
btjit_key_bounds(IndexScanDesc scan, ScanDirection dir, BtjitKeyBounds *bounds)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	ScanKey		sk = so->keyData;
	ScanKey		end = sk + so->numberOfKeys;
	/* the flag of the keys whose failure stops the scan */
	int			required = ScanDirectionIsForward(dir) ? SK_BT_REQFWD :
		SK_BT_REQBKWD;
	BtjitColumnBound *col = bounds->columns - 1;
	AttrNumber	attno = 0;
	int			set = 0;

	if (sk == end)
		return false;
	for (; sk < end; sk++)
	{
		int			opr = btjit_int_operator(sk->sk_func.fn_oid);
		int64		a;
		bool		continues;

		if (opr == 0 || (sk->sk_flags & BTJIT_BOUNDS_REFUSED_FLAGS))
			return false;
		if (sk->sk_attno != attno)
		{
			if (sk->sk_attno < attno ||
				col == &bounds->columns[BTJIT_BOUNDED_COLUMNS - 1] ||
				!keybounds_column(scan->indexRelation, sk->sk_attno, ++col))
				return false;
			attno = sk->sk_attno;
			set = 0;
		}
		if (col->width != 1 << BTJIT_INT_OPERATOR_LEFT(opr))
			return false;
		a = btjit_int_argument(sk->sk_argument, BTJIT_INT_OPERATOR_RIGHT(opr));
		continues = (sk->sk_flags & required) == 0;
		switch (BTJIT_INT_OPERATOR_OP(opr))
		{
			case BTJIT_INT_LT:
				if (a == PG_INT64_MIN ||
					!keybounds_set_hi(col, &set, a - 1, continues))
					return false;
				break;
			case BTJIT_INT_LE:
				if (!keybounds_set_hi(col, &set, a, continues))
					return false;
				break;
			case BTJIT_INT_EQ:
				if (!keybounds_set_lo(col, &set, a, continues) ||
					!keybounds_set_hi(col, &set, a, continues))
					return false;
				break;
			case BTJIT_INT_GE:
				if (!keybounds_set_lo(col, &set, a, continues))
					return false;
				break;
			default:
				if (a == PG_INT64_MAX ||
					!keybounds_set_lo(col, &set, a + 1, continues))
					return false;
				break;
		}
		if (col->lo > col->hi)
			return false;
	}
	bounds->ncolumns = col - bounds->columns + 1;
	return true;
}
