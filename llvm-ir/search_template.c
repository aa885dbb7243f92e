/*-------------------------------------------------------------------------
 *
 * search_template.c
 *	  The template of everything a key shape compiles to: the page search
 *	  (_bt_binsrch) fused with its comparator, _bt_compare, the insertion
 *	  search (_bt_binsrch_insert), up to PostgreSQL 18 the scan-key checks
 *	  (_bt_checkkeys), and the comparator of a build's sort, generic over
 *	  a constant key shape.
 *
 * Compiled to bitcode at build time by the clang the server's own JIT was
 * built with (PGXS's CLANG), against the server's headers, so struct
 * layouts and the headers' inline accessors are the server's own.  It is
 * never linked into the module: at run time llvm/specialise.c loads the
 * bitcode, gives btjit_shape_param a constant initializer describing one
 * index's key shape, and optimises.  Every test on the shape then folds
 * away, the per-column loops unroll, and what is left is the code for
 * exactly that shape: fixed-offset loads of the key columns up to the first
 * variable-length one, then a walk over the tuple as index_getattr does it;
 * inline compares for the kinds that have them (integers, floats, uuid,
 * byte-ordered strings), and for any other column a direct call of the
 * scankey's own comparison proc, or, when the compiler imported that proc's
 * body from the server's bitcode (llvm/bcimport.c), the inlined body behind
 * a guard on the scankey's fn_addr.  The entry points and the module's
 * callbacks are declared once, in include/code_abi.h.
 *
 * Each entry must return what the server's function returns for every
 * input the server can give it, or decline (BTJIT_DECLINE, or a call of the
 * module's callback) for a call outside the shape, which then runs the
 * stock path.  The rules, per PostgreSQL version, are in src/README, "The
 * contract".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/tupmacs.h"
#include "catalog/pg_collation_d.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/sortsupport.h"

#include "pg_compat.h"
#include "code_abi.h"
#include "shape.h"
#include "sortmirror.h"

/* Bound by the specialiser; never defined in C. */
extern const BtjitShape btjit_shape_param;

#define SHAPE btjit_shape_param

/*
 * Whether key column i is DESC, from a mask of the shape's DESC columns.
 * The mask folds to a constant, and so does the test wherever i does; where
 * unrolled columns share one exit block (i is then a phi), the test stays a
 * shift of that constant, or vanishes when no column is DESC, instead of a
 * load of SHAPE.cols[i].desc at a run-time index in every bisection step.
 */
static inline __attribute__((always_inline)) uint32
btjit_desc_mask(void)
{
	uint32		mask = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		if (i < SHAPE.nkeys && SHAPE.cols[i].desc)
			mask |= (uint32) 1 << i;
	}
	return mask;
}

static inline __attribute__((always_inline)) bool
btjit_col_desc(int i)
{
	return ((btjit_desc_mask() >> i) & 1) != 0;
}

/*
 * One scankey argument, decoded once per page search for the column's
 * inline comparison.  Returned by value from the out-of-line cross-type
 * decoder, so that the decoded key never escapes and stays in registers.
 */
typedef struct BtjitArg
{
	int64		value;			/* integer kinds; uuid and byte strings of
								 * 8 bytes or more: first 8 bytes, big
								 * endian */
	uint64		value2;			/* uuid: last 8 bytes, big endian */
	double		fvalue;			/* float kinds, widened */
	const char *ptr;			/* byte-string kinds: the bytes compared;
								 * numeric: its digits */
	int32		len;			/* ... and their number */
	int32		weight;			/* numeric: weight of the first digit */
	uint16		nheader;		/* numeric: n_header (special values) */
	bool		negative;		/* numeric: sign */
	bool		ok;				/* the inline comparison applies */
	bool		diff;			/* the proc returns a difference */
} BtjitArg;

/* The scankey, decoded once per page search. */
typedef struct BtjitKey
{
	int			keysz;
	bool		nextkey;
	bool		backward;		/* pivotsearch up to 16 (pg_compat.h) */
	ItemPointer scantid;
	BTScanInsert key;			/* for the scankeys of called columns */
	BtjitArg	arg[BTJIT_MAX_KEYS];
	bool		argnull[BTJIT_MAX_KEYS];
	bool		argcall[BTJIT_MAX_KEYS];	/* call the proc for this column */
} BtjitKey;

/*
 * Sign of one attribute's comparison when the proc returned NULL: the
 * search declines, and the stock path raises the server's own error.
 */
#define BTJIT_SIGN_DECLINE 2

int			btjit_search(void *scankey, const char *page);
uint16		btjit_entry(void *rel, void *scankey, int buf, uint64 *counters);
int32		btjit_compare_entry(void *rel, void *scankey, const char *page,
								uint32 offnum, uint64 *counters);
uint16		btjit_insert_entry(void *rel, void *insertstate, uint64 *counters);
bool		btjit_check_entry(void *scan, void *tuple, int tupnatts, int dir,
							  bool *continuescan, uint64 *counters);
int			btjit_build_comparetup(const void *a, const void *b, void *state);
bool		btjit_build_presort(void *memtuples, int32 n, void *state);
int32		btjit_keep_natts_entry(void *rel, void *lastleft, void *firstright,
								   uint64 *counters);

/*
 * A function called from many places whose body holds every column kind's
 * code until the shape is bound: clang must not inline it when it builds
 * the template (each copy would carry all the kinds, and every compile
 * would parse, optimise and throw them away), but the specialiser makes it
 * always_inline once the shape has folded it to the shape's few
 * instructions.  Each such function is listed in
 * btjit_inline_after_bind[] (at the end of this file), which the
 * specialiser reads and deletes.
 */
#define BTJIT_INLINE_AFTER_BIND __attribute__((noinline))

/*
 * A stored value widened to int64 the way the comparison proc sees it:
 * every integer-family proc compares these exactly (oid and "char"
 * unsigned, bool as zero or not).
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

/* Eight bytes at p (any alignment) as a big-endian number. */
static inline __attribute__((always_inline)) uint64
btjit_load_be64(const char *p)
{
	uint64		v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap64(v);
}

/*
 * Unsigned byte order of two byte strings, then length: the sign of what
 * memcmp() over the common length, then the length test, gives (as
 * varstr_cmp in a C collation, byteacmp, the pattern procs and namecmp).
 * Eight bytes at a time; never reads past either string.
 */
static __attribute__((noinline)) int
btjit_bytes_cmp(const char *a, int32 alen, const char *b, int32 blen)
{
	int32		n = Min(alen, blen);
	int32		i = 0;

	for (; i + 8 <= n; i += 8)
	{
		uint64		x = btjit_load_be64(a + i);
		uint64		y = btjit_load_be64(b + i);

		if (x != y)
			return x > y ? 1 : -1;
	}
	for (; i < n; i++)
	{
		uint8		x = (uint8) a[i];
		uint8		y = (uint8) b[i];

		if (x != y)
			return x > y ? 1 : -1;
	}
	return (alen > blen) - (alen < blen);
}

/*
 * btjit_bytes_cmp(a, alen, arg), with the first eight bytes compared in
 * line when both strings have them (the argument's are decoded once, in
 * arg->value): most probes of distinct keys are decided there.
 */
static inline __attribute__((always_inline)) int
btjit_bytes_cmp_arg(const char *a, int32 alen, const BtjitArg *arg)
{
	if (alen >= 8 && arg->len >= 8)
	{
		uint64		x = btjit_load_be64(a);

		if (x != (uint64) arg->value)
			return x > (uint64) arg->value ? 1 : -1;
	}
	return btjit_bytes_cmp(a, alen, arg->ptr, arg->len);
}

/* Length of a bpchar's bytes without its trailing blanks (bpchartruelen). */
static inline __attribute__((always_inline)) int32
btjit_bpchar_truelen(const char *p, int32 len)
{
	while (len > 0 && p[len - 1] == ' ')
		len--;
	return len;
}

/* Length of a NUL-terminated string of at most max bytes. */
static inline __attribute__((always_inline)) int32
btjit_strnlen(const char *p, int32 max)
{
	int32		n = 0;

	while (n < max && p[n] != '\0')
		n++;
	return n;
}

/*
 * The bytes of a varlena value stored in place (1-byte or 4-byte header,
 * not compressed, not external), or false for any other form: those are
 * left to the proc.
 */
static inline __attribute__((always_inline)) bool
btjit_varlena_plain(const char *p, const char **data, int32 *len)
{
	if (VARATT_IS_1B(p))
	{
		if (VARATT_IS_1B_E(p))
			return false;
		*data = p + VARHDRSZ_SHORT;
		*len = VARSIZE_1B(p) - VARHDRSZ_SHORT;
		return true;
	}
	if (VARATT_IS_4B_U(p))
	{
		*data = p + VARHDRSZ;
		*len = VARSIZE_4B(p) - VARHDRSZ;
		return true;
	}
	return false;
}

/*
 * float8_cmp_internal's result for two values widened to double (exact for
 * float4 too, so it serves btfloat4cmp, btfloat48cmp and btfloat84cmp):
 * NaN equals NaN and sorts above everything else; -0 equals 0.
 */
static inline __attribute__((always_inline)) int
btjit_float_cmp(double a, double b)
{
	if (unlikely(isnan(a)))
		return isnan(b) ? 0 : 1;
	if (unlikely(isnan(b)))
		return -1;
	return (a > b) - (a < b);
}

/*
 * numeric, read in place.  The stored form (numeric.c's NumericShort and
 * NumericLong, after the varlena header): a uint16 n_header whose top two
 * bits say short (10), long (00 positive, 01 negative) or special (11: NaN
 * 0xC000, +Infinity 0xD000, -Infinity 0xF000, no digits); a short header
 * holds the sign (0x2000) and a 7-bit weight (sign 0x0040); a long one is
 * followed by an int16 weight; then base-10000 int16 digits, the first of
 * weight "weight".  Values are often at odd addresses (1-byte varlena
 * headers), so every field is read with memcpy.  The comparison is
 * cmp_numerics' exactly, without the detoasted copies numeric_cmp makes.
 */
#define BTJIT_NUMERIC_NAN	0xC000
#define BTJIT_NUMERIC_PINF	0xD000
#define BTJIT_NUMERIC_NINF	0xF000

static inline __attribute__((always_inline)) uint16
btjit_load16(const char *p)
{
	uint16		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Decode a numeric's bytes (after the varlena header) into a. */
static inline __attribute__((always_inline)) void
btjit_numeric_decode(const char *data, int32 len, BtjitArg *a)
{
	uint16		h = btjit_load16(data);

	a->nheader = h;
	if ((h & 0xC000) == 0xC000)
	{
		/* special: compared by n_header alone */
		a->ptr = data;
		a->len = 0;
		a->negative = false;
		a->weight = 0;
	}
	else if (h & 0x8000)
	{
		a->negative = (h & 0x2000) != 0;
		a->weight = (int32) ((h & 0x0040) ? (~0x003F | (h & 0x003F)) : (h & 0x003F));
		a->ptr = data + sizeof(uint16);
		a->len = (len - (int32) sizeof(uint16)) / (int32) sizeof(int16);
	}
	else
	{
		a->negative = (h & 0xC000) == 0x4000;
		a->weight = (int16) btjit_load16(data + sizeof(uint16));
		a->ptr = data + 2 * sizeof(uint16);
		a->len = (len - 2 * (int32) sizeof(uint16)) / (int32) sizeof(int16);
	}
}

/* cmp_abs_common over digit arrays read in place */
static __attribute__((noinline)) int
btjit_numeric_cmp_abs(const char *d1, int32 n1, int32 w1,
					  const char *d2, int32 n2, int32 w2)
{
	int32		i1 = 0;
	int32		i2 = 0;

	/* digits of one before the first weight the other has */
	while (w1 > w2 && i1 < n1)
	{
		if (btjit_load16(d1 + 2 * i1++) != 0)
			return 1;
		w1--;
	}
	while (w2 > w1 && i2 < n2)
	{
		if (btjit_load16(d2 + 2 * i2++) != 0)
			return -1;
		w2--;
	}
	if (w1 == w2)
	{
		while (i1 < n1 && i2 < n2)
		{
			int16		x = (int16) btjit_load16(d1 + 2 * i1++);
			int16		y = (int16) btjit_load16(d2 + 2 * i2++);

			if (x != y)
				return x > y ? 1 : -1;
		}
	}
	/* the longer one is larger if any of its remaining digits is not 0 */
	while (i1 < n1)
		if (btjit_load16(d1 + 2 * i1++) != 0)
			return 1;
	while (i2 < n2)
		if (btjit_load16(d2 + 2 * i2++) != 0)
			return -1;
	return 0;
}

/* cmp_numerics(stored, argument), both decoded */
static inline __attribute__((always_inline)) int
btjit_numeric_cmp(const BtjitArg *x, const BtjitArg *y)
{
	bool		xspecial = (x->nheader & 0xC000) == 0xC000;
	bool		yspecial = (y->nheader & 0xC000) == 0xC000;

	if (unlikely(xspecial))
	{
		if (x->nheader == BTJIT_NUMERIC_NAN)
			return y->nheader == BTJIT_NUMERIC_NAN ? 0 : 1;
		if (x->nheader == BTJIT_NUMERIC_PINF)
		{
			if (y->nheader == BTJIT_NUMERIC_NAN)
				return -1;
			return y->nheader == BTJIT_NUMERIC_PINF ? 0 : 1;
		}
		/* -Infinity */
		return y->nheader == BTJIT_NUMERIC_NINF ? 0 : -1;
	}
	if (unlikely(yspecial))
		return y->nheader == BTJIT_NUMERIC_NINF ? 1 : -1;

	/* cmp_var_common: zero has no digits, whatever its sign bit */
	if (x->len == 0)
	{
		if (y->len == 0)
			return 0;
		return y->negative ? 1 : -1;
	}
	if (y->len == 0)
		return x->negative ? -1 : 1;
	if (!x->negative)
	{
		if (y->negative)
			return 1;
		return btjit_numeric_cmp_abs(x->ptr, x->len, x->weight,
									 y->ptr, y->len, y->weight);
	}
	if (!y->negative)
		return -1;
	return btjit_numeric_cmp_abs(y->ptr, y->len, y->weight,
								 x->ptr, x->len, x->weight);
}

/* cmp_numerics(stored at ptr, argument), or false for a compressed value */
static inline __attribute__((always_inline)) bool
btjit_numeric_exact(const char *ptr, const BtjitArg *a, int32 *c)
{
	const char *data;
	int32		len;
	BtjitArg	stored;

	if (unlikely(!btjit_varlena_plain(ptr, &data, &len)))
		return false;
	btjit_numeric_decode(data, len, &stored);
	*c = btjit_numeric_cmp(&stored, a);
	return true;
}

/*
 * Whether the server compares in byte order under this scankey collation,
 * as far as the shape knows (see BTJIT_COLL_*).
 */
static inline __attribute__((always_inline)) bool
btjit_collation_ok(const BtjitColumnShape *col, Oid coll)
{
	if (col->collmode == BTJIT_COLL_ANY)
		return true;
	if (coll == C_COLLATION_OID || coll == POSIX_COLLATION_OID)
		return true;
	return col->collmode == BTJIT_COLL_C_DEFAULT &&
		coll == DEFAULT_COLLATION_OID;
}

/*
 * Where attribute i starts, given the offset (from the tuple's data) just
 * past the previous present attribute, as nocache_index_getattr works it
 * out: aligned nominally, except that a varlena at an unaligned offset
 * whose first byte is not zero (padding is zero) has a 1-byte header and
 * is not aligned.  When off is a constant, as up to the first
 * variable-length column of a tuple without NULLs, this folds.
 */
static inline __attribute__((always_inline)) uint32
btjit_att_start(const BtjitColumnShape *col, const char *data, uint32 off)
{
	if (col->attlen == -1)
	{
		if ((off & (col->attalign - 1)) == 0)
			return off;
		if (*(const uint8 *) (data + off) != 0)
			return off;
	}
	return TYPEALIGN(col->attalign, off);
}

/* The offset just past attribute i stored at ptr (att_addlength_pointer). */
static inline __attribute__((always_inline)) uint32
btjit_att_end(const BtjitColumnShape *col, const char *ptr, uint32 off)
{
	if (col->attlen > 0)
		return off + col->attlen;
	if (col->attlen == -1)
		return off + VARSIZE_ANY(ptr);
	return off + strlen(ptr) + 1;
}

/*
 * fn called as FunctionCall2Coll would call scankey sk's function (its
 * comparison proc, or in a scan key its operator): fn(stored, argument)
 * with the scankey's collation and its FmgrInfo (so that what fn caches in
 * flinfo->fn_extra is shared by every path).  Returns false if it returned
 * NULL (the caller declines: the stock path then raises the server's own
 * error).
 */
static inline __attribute__((always_inline)) bool
btjit_call_datum(PGFunction fn, ScanKey sk, Datum stored, Datum *result)
{
	LOCAL_FCINFO(fcinfo, 2);

	fcinfo->flinfo = &sk->sk_func;
	fcinfo->context = NULL;
	fcinfo->resultinfo = NULL;
	fcinfo->fncollation = sk->sk_collation;
	fcinfo->isnull = false;
	fcinfo->nargs = 2;
	fcinfo->args[0].value = stored;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = sk->sk_argument;
	fcinfo->args[1].isnull = false;
	*result = fn(fcinfo);
	return !fcinfo->isnull;
}

/* A comparison proc's result, as btjit_call_datum. */
static inline __attribute__((always_inline)) bool
btjit_call_fn(PGFunction fn, ScanKey sk, Datum stored, int32 *result)
{
	Datum		r;

	if (!btjit_call_datum(fn, sk, stored, &r))
		return false;
	*result = DatumGetInt32(r);
	return true;
}

/* The proc of scankey sk called directly, out of line. */
static __attribute__((noinline)) bool
btjit_call_proc(ScanKey sk, Datum stored, int32 *result)
{
	return btjit_call_fn(sk->sk_func.fn_addr, sk, stored, result);
}

/*
 * Tier 2: a called column whose proc's body the compiler imported from the
 * server's bitcode (SHAPE.cols[i].bcsym).  The compiler replaces, for such
 * a column i, btjit_bc_server<i> by the server's own function of that name
 * and btjit_bc_proc<i> by the imported copy of its body (internal, so it
 * inlines); for every other column these placeholders are unreachable once
 * the shape is bound, and are removed.
 */
#define BTJIT_BC_PLACEHOLDERS(n) \
	extern Datum btjit_bc_proc##n(FunctionCallInfo fcinfo); \
	extern Datum btjit_bc_server##n(FunctionCallInfo fcinfo)
BTJIT_BC_PLACEHOLDERS(0);
BTJIT_BC_PLACEHOLDERS(1);
BTJIT_BC_PLACEHOLDERS(2);
BTJIT_BC_PLACEHOLDERS(3);
BTJIT_BC_PLACEHOLDERS(4);
BTJIT_BC_PLACEHOLDERS(5);
BTJIT_BC_PLACEHOLDERS(6);
BTJIT_BC_PLACEHOLDERS(7);
StaticAssertDecl(BTJIT_MAX_KEYS == 8, "one placeholder pair per key column");

/* Column i's imported body, and the server function it was imported from. */
static inline __attribute__((always_inline)) PGFunction
btjit_bc_function(int i, bool server)
{
	switch (i)
	{
#define BTJIT_BC_CASE(n) \
		case n: return server ? btjit_bc_server##n : btjit_bc_proc##n
			BTJIT_BC_CASE(0);
			BTJIT_BC_CASE(1);
			BTJIT_BC_CASE(2);
			BTJIT_BC_CASE(3);
			BTJIT_BC_CASE(4);
			BTJIT_BC_CASE(5);
			BTJIT_BC_CASE(6);
			BTJIT_BC_CASE(7);
#undef BTJIT_BC_CASE
	}
	return NULL;
}

/*
 * Whether the imported body of column i may stand for scankey sk's proc:
 * the column names an import and sk's fn_addr is the very server function
 * it was imported from (a cross-type proc, or any other, is not).
 */
static inline __attribute__((always_inline)) bool
btjit_bc_applies(int i, ScanKey sk)
{
	return SHAPE.cols[i].bcsym[0] != '\0' &&
		sk->sk_func.fn_addr == btjit_bc_function(i, true);
}

/*
 * Column i's proc for scankey sk, exact by construction: the imported body
 * runs only where btjit_bc_applies, the proc is called otherwise.
 */
static inline __attribute__((always_inline)) bool
btjit_call_column(int i, ScanKey sk, Datum stored, int32 *result)
{
	if (btjit_bc_applies(i, sk))
		return btjit_call_fn(btjit_bc_function(i, false), sk, stored,
								   result);
	return btjit_call_proc(sk, stored, result);
}

/*
 * Sign of the proc's result for column i, stored value at ptr;
 * BTJIT_SIGN_DECLINE if it returned NULL.  The stored value is passed as
 * index_getattr would return it (fetch_att).  call false for a column that
 * names an import says that decoding found btjit_bc_applies true for this
 * scankey: the imported body is run with no test and no call on the path,
 * so that the optimiser may hoist the argument's share of the comparison
 * out of the search loop.  Otherwise the proc is called.
 */
static inline __attribute__((always_inline)) int
btjit_call_sign(int i, const BtjitKey *k, const char *ptr, bool call)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	ScanKey		sk = &k->key->scankeys[i];
	Datum		stored = fetch_att(ptr, col->attbyval, col->attlen);
	int32		r;
	bool		ok;

	if (col->kind == BTJIT_KIND_CALL && col->bcsym[0] != '\0' && !call)
		ok = btjit_call_fn(btjit_bc_function(i, false), sk, stored, &r);
	else
		ok = btjit_call_proc(sk, stored, &r);
	if (!ok)
		return BTJIT_SIGN_DECLINE;
	return (r > 0) - (r < 0);
}

/*
 * Sign of the comparison proc of column col for the stored value at ptr
 * against decoded argument a (positive when the stored value is greater),
 * for the kinds compared inline.  False when the inline comparison does
 * not apply to this value (a called column, a compressed or external
 * varlena): the caller then calls a function of the server's.
 */
static inline __attribute__((always_inline)) bool
btjit_inline_sign(const BtjitColumnShape *col, const BtjitArg *a,
				  const char *ptr, int *sign)
{
	int			c;

	if (col->kind == BTJIT_KIND_CALL)
		return false;
	else if (BTJIT_KIND_IS_INT(col->kind))
	{
		int64		v = btjit_stored_value(ptr, col->kind);

		c = (v > a->value) - (v < a->value);
	}
	else if (col->kind == BTJIT_KIND_FLOAT4)
	{
		float4		f;

		memcpy(&f, ptr, sizeof(f));
		c = btjit_float_cmp((double) f, a->fvalue);
	}
	else if (col->kind == BTJIT_KIND_FLOAT8)
	{
		float8		f;

		memcpy(&f, ptr, sizeof(f));
		c = btjit_float_cmp(f, a->fvalue);
	}
	else if (col->kind == BTJIT_KIND_UUID)
	{
		uint64		hi = btjit_load_be64(ptr);
		uint64		lo;

		if (hi != (uint64) a->value)
			c = hi > (uint64) a->value ? 1 : -1;
		else
		{
			lo = btjit_load_be64(ptr + 8);
			c = (lo > a->value2) - (lo < a->value2);
		}
	}
	else if (col->kind == BTJIT_KIND_NUMERIC)
	{
		const char *data;
		int32		len;
		BtjitArg	stored;

		if (unlikely(!btjit_varlena_plain(ptr, &data, &len)))
			return false;		/* compressed: the proc's job */
		btjit_numeric_decode(data, len, &stored);
		c = btjit_numeric_cmp(&stored, a);
	}
	else
	{
		const char *data;
		int32		len;

		if (col->kind == BTJIT_KIND_CSTRING)
		{
			data = ptr;
			if (col->attlen > 0)
				len = btjit_strnlen(ptr, col->attlen);
			else
				len = strlen(ptr);
		}
		else if (unlikely(!btjit_varlena_plain(ptr, &data, &len)))
			return false;		/* compressed or external: the proc's job */
		if (col->kind == BTJIT_KIND_BPCHAR)
			len = btjit_bpchar_truelen(data, len);
		c = btjit_bytes_cmp_arg(data, len, a);
	}
	*sign = c;
	return true;
}

/*
 * Sign of _bt_compare's result for one attribute, both sides non-NULL:
 * positive when the scankey is greater.  The proc's sign (stored value
 * against argument) comes from the inline comparison of the column's kind,
 * or from calling the proc (call, or a form the inline code leaves to the
 * proc); then it is negated unless the column is DESC.  Only the sign:
 * INVERT_COMPARE_RESULT's care for INT_MIN is about the value.
 */
static inline __attribute__((always_inline)) int
btjit_attr_sign(int i, const BtjitKey *k, const char *ptr, bool call)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	int			c;

	if (call || col->kind == BTJIT_KIND_CALL)
		c = btjit_call_sign(i, k, ptr, call);
	else if (!btjit_inline_sign(col, &k->arg[i], ptr, &c))
		c = btjit_call_sign(i, k, ptr, true);
	if (c == BTJIT_SIGN_DECLINE)
		return c;
	return btjit_col_desc(i) ? c : -c;
}

/*
 * _bt_compare's result for one attribute with a NULL on either side: NULL
 * equals NULL, and sorts first or last as the column says.
 */
static inline __attribute__((always_inline)) int
btjit_null_result(const BtjitColumnShape *col, bool argnull, bool stored_null)
{
	if (argnull)
	{
		if (stored_null)
			return 0;
		return col->nulls_first ? -1 : 1;
	}
	return col->nulls_first ? 1 : -1;
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
 * applies it): 1 to go right, 0 not, -1 to decline (a called proc returned
 * NULL).  Key columns up to the first variable-length one sit at constant
 * offsets; later ones are found by walking over the earlier ones.  The
 * caller works out the tuple's attribute count, cheaply for the kind of
 * tuple it expects on the page; with full true the scankey is known to
 * cover every key column.
 *
 * Returning the branch decision rather than the three-way result lets a
 * differing integer column decide with one comparison of the two values:
 * for a result of +1 or -1 and cmpval of 0 or 1, result >= cmpval means +1.
 */
static inline __attribute__((always_inline)) int
btjit_goright_fast(const BtjitKey *k, IndexTuple itup, int ntupatts, bool full,
				   bool leafplain, int cmpval, int skip, int *eqcols)
{
	int			keysz = full ? SHAPE.nkeys : k->keysz;
	const char *data = (const char *) itup + MAXALIGN(sizeof(IndexTupleData));
	uint32		off = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		const char *ptr;

		if (i >= SHAPE.nkeys || i >= keysz || i >= ntupatts)
			break;
		off = btjit_att_start(col, data, off);
		ptr = data + off;
		*eqcols = i;
		if (i < skip)
		{
			/* known equal: the items on both sides of this one are */
		}
		else if (BTJIT_KIND_IS_INT(col->kind))
		{
			int64		value = btjit_stored_value(ptr, col->kind);
			int64		arg = k->arg[i].value;

			/*
			 * Two branches on one comparison, not "differ, then which
			 * way": the latter lets the optimiser sink every column's
			 * "which way" into one shared block, which then needs each
			 * column's operands moved into common registers.
			 */
			if (btjit_col_desc(i) ? value > arg : arg > value)
				return 1;
			if (value != arg)
				return 0;
		}
		else
		{
			int			sign = btjit_attr_sign(i, k, ptr, false);

			if (unlikely(sign == BTJIT_SIGN_DECLINE))
				return -1;
			if (sign != 0)
				return sign > 0;
		}
		if (i + 1 < SHAPE.nkeys)
			off = btjit_att_end(col, ptr, off);
		*eqcols = i + 1;
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
 * The sign of _bt_compare in full generality (NULLs in the tuple or the
 * scankey, any keysz, columns whose scankey makes the proc be called),
 * minus the internal-page first-item rule; BTJIT_SIGN_DECLINE if a called
 * proc returned NULL.  Walks the null bitmap and the present attributes as
 * nocache_index_getattr does.
 */
static inline __attribute__((always_inline)) int
btjit_compare_general(const BtjitKey *k, IndexTuple itup)
{
	int			keysz = k->keysz;
	int			ntupatts = btjit_tuple_natts(itup);
	int			ncmp = Min(ntupatts, keysz);
	bool		hasnulls = (itup->t_info & INDEX_NULL_MASK) != 0;
	const uint8 *bitmap = (const uint8 *) ((const char *) itup + sizeof(IndexTupleData));
	const char *data = (const char *) itup + IndexInfoFindDataOffset(itup->t_info);
	uint32		off = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		const char *ptr = NULL;
		bool		isnull;
		int			result;

		if (i >= SHAPE.nkeys || i >= ncmp)
			break;
		isnull = hasnulls && !(bitmap[i >> 3] & (1 << (i & 7)));
		if (!isnull)
		{
			off = btjit_att_start(col, data, off);
			ptr = data + off;
		}
		if (k->argnull[i] || isnull)
			result = btjit_null_result(col, k->argnull[i], isnull);
		else
		{
			result = btjit_attr_sign(i, k, ptr, k->argcall[i]);
			if (unlikely(result == BTJIT_SIGN_DECLINE))
				return result;
		}
		if (result != 0)
			return result;
		if (!isnull && i + 1 < SHAPE.nkeys)
			off = btjit_att_end(col, ptr, off);
	}
	return btjit_tiebreak(itup, keysz, ntupatts, k->backward, k->scantid);
}

static __attribute__((noinline)) int btjit_search_general(void *scankey,
														  const char *page);

/*
 * Whether the page search of this shape skips the leading key columns known
 * equal at both bounds ("dynamic prefix truncation"): items between two
 * items that both equal the scankey on their first n columns equal it
 * there too, since the page is sorted on the columns in order and each
 * column's equality is that of its opclass's order.  Only where a compare
 * costs more than the test that skips it: some column but the last is not
 * an integer or a float, which compare in a load and a branch.
 */
static inline __attribute__((always_inline)) bool
btjit_prefix_skip(void)
{
#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		if (i + 1 >= SHAPE.nkeys)
			break;
		if (!BTJIT_KIND_IS_INT(SHAPE.cols[i].kind) &&
			SHAPE.cols[i].kind != BTJIT_KIND_FLOAT4 &&
			SHAPE.cols[i].kind != BTJIT_KIND_FLOAT8)
			return true;
	}
	return false;
}

/*
 * Overlapping the misses of a leaf's bisection.  Each bisection step is two
 * dependent loads, the line pointer of the middle item and then its tuple,
 * and on a leaf that is not in the CPU's cache each is a likely miss, one
 * after the other.  Whatever the step decides, the next step probes the
 * middle of [low, mid) or of [mid + 1, high), so while the current tuple is
 * compared, the search prefetches both candidates' tuples (their line
 * pointers were prefetched a step earlier) and the line pointers of the
 * four candidates of the step after.  Prefetches read nothing the search
 * depends on: only the line pointers of items within [low, high) and the
 * tuples they point to, all inside the page the caller has locked (the
 * offset is masked to the page), so the result cannot change.  Only while
 * the range is wide: once it spans a few cache lines the loads are hits,
 * and the prefetches would only cost instructions.  Leaf pages only (the
 * upper levels of an index mostly stay cached; the internal instances stay
 * as they were).
 *
 * BTJIT_PREFETCH selects what is built (bench/README.md, "Overlapping a
 * leaf's cache misses", has the figures of each): 0 nothing, 1 the lookahead above, 2
 * the lookahead and, on entering a leaf, a prefetch of every cache line of
 * its line-pointer array, 3 only that.
 */
#ifndef BTJIT_PREFETCH
#define BTJIT_PREFETCH 1
#endif
#define BTJIT_PREFETCH_MIN_RANGE 16

static inline __attribute__((always_inline)) const char *
btjit_item_addr(const char *page, uint32 off)
{
	ItemId		iid = PageGetItemId((Page) page, off);

	return page + (ItemIdGetOffset(iid) & (BLCKSZ - 1));
}

/*
 * The offset the bisection probes after probing mid of [low, high), if the
 * answer lies left of mid and if it lies right: the lookahead and the block
 * hints both name offsets the search will probe, so both take them from
 * here.
 */
static inline __attribute__((always_inline)) uint32
btjit_probe_left(uint32 low, uint32 mid)
{
	return (low + mid) >> 1;
}

static inline __attribute__((always_inline)) uint32
btjit_probe_right(uint32 mid, uint32 high)
{
	return (mid + 1 + high) >> 1;
}

static inline __attribute__((always_inline)) void
btjit_prefetch_step(const char *page, uint32 low, uint32 mid, uint32 high)
{
	uint32		ml = btjit_probe_left(low, mid);
	uint32		mr = btjit_probe_right(mid, high);

	if ((BTJIT_PREFETCH != 1 && BTJIT_PREFETCH != 2) ||
		high - low <= BTJIT_PREFETCH_MIN_RANGE)
		return;
	__builtin_prefetch(btjit_item_addr(page, ml));
	__builtin_prefetch(btjit_item_addr(page, mr));
	__builtin_prefetch(PageGetItemId((Page) page, btjit_probe_left(low, ml)));
	__builtin_prefetch(PageGetItemId((Page) page, btjit_probe_right(ml, mid)));
	__builtin_prefetch(PageGetItemId((Page) page, btjit_probe_left(mid + 1, mr)));
	__builtin_prefetch(PageGetItemId((Page) page, btjit_probe_right(mr, high)));
}

/* The line pointers of items [low, high), a cache line at a time. */
static inline __attribute__((always_inline)) void
btjit_prefetch_linp(const char *page, uint32 low, uint32 high)
{
	const char *p;
	const char *end;

	if ((BTJIT_PREFETCH != 2 && BTJIT_PREFETCH != 3) ||
		high - low <= BTJIT_PREFETCH_MIN_RANGE)
		return;
	p = (const char *) PageGetItemId((Page) page, low);
	end = (const char *) PageGetItemId((Page) page, high - 1);
	for (; p <= end; p += 64)
		__builtin_prefetch(p);
	__builtin_prefetch(end);
}

/*
 * Across levels: the page search of an internal page knows which child the
 * descent reads next, but the buffer manager finds that child's buffer only
 * after the search has returned, a chain of dependent misses (the mapping
 * table, the buffer descriptor, the page's header and special space, the
 * high key, the first probe) on an index larger than the cache.  Each
 * backend keeps a hint of where it last saw each leaf (code_abi.h,
 * BtjitBlockHint): written by the searches of a leaf, read for the
 * downlink the search of a level-1 page returns, and used only as prefetch
 * addresses, so the misses of the leaf overlap the buffer manager's.  The
 * hint is never read as data: a stale one (the buffer since evicted, the
 * page split) costs a useless prefetch.  Shared buffers only.
 *
 * Leaves only: the levels above hold a few hundred pages for every hundred
 * thousand leaves and stay cached under any probe pattern, so hints for
 * them would cost their instructions on every descent and save nothing.
 *
 * An index's hints are consecutive slots from a base its OID hashes to, so
 * that the leaves of one index never evict each other until it has more
 * blocks than the table has slots; indexes share the table as a hash
 * would.
 */
static inline __attribute__((always_inline)) BtjitBlockHint *
btjit_hint_slot(Oid relid, BlockNumber block)
{
	uint32		base = relid * 0x9E3779B1U;

	return &btjit_block_hints[(base + block) & (BTJIT_BLOCK_HINTS - 1)];
}

/*
 * The first two bisection steps of a page with items [low, high): the
 * offsets they probe (the second step probes one of two), as btjit_binsrch
 * computes them.
 */
static inline __attribute__((always_inline)) void
btjit_first_probes(uint32 low, uint32 high, uint32 *mid, uint32 *left,
				   uint32 *right)
{
	*mid = (low + high) >> 1;
	*left = btjit_probe_left(low, *mid);
	*right = btjit_probe_right(*mid, high);
}

/* A tuple's offset in BTJIT_HINT_OFFSET_BITS, as its line pointer gives it. */
static inline __attribute__((always_inline)) uint64
btjit_hint_tuple(const char *page, uint32 off)
{
	return (ItemIdGetOffset(PageGetItemId((Page) page, off)) & (BLCKSZ - 1)) >>
		BTJIT_HINT_OFFSET_SHIFT;
}

/*
 * Remember where leaf 'page' is (buffer buf's, locked by the caller).  With
 * 'insert' (the insertion search, about to add an item) an entry naming the
 * same block in the same buffer is kept even if the item count moved: an
 * insertion shifts the line pointers by one and moves no tuple, so the
 * offsets it holds still point at the tuples the first steps will probe,
 * and rewriting them on every insertion would cost more than they lose.
 */
static inline __attribute__((always_inline)) void
btjit_hint_record(const void *rel, int buf, const char *page, bool insert)
{
	BTPageOpaque opaque = BTPageGetOpaque((Page) page);
	Oid			relid = ((const RelationData *) rel)->rd_id;
	uint32		low = P_FIRSTDATAKEY(opaque);
	uint32		nitems = PageGetMaxOffsetNumber((Page) page);
	uint64		layout;
	BlockNumber block;
	BtjitBlockHint *hint;

	if (btjit_block_hints == NULL || buf <= 0 ||
		nitems >= (1 << BTJIT_HINT_NITEMS_BITS))
		return;
	block = GetBufferDescriptor(buf - 1)->tag.blockNum;
	hint = btjit_hint_slot(relid, block);
	layout = (uint64) nitems | (uint64) (relid & BTJIT_HINT_RELTAG_MASK) << BTJIT_HINT_RELTAG_SHIFT;

	/*
	 * Unchanged since it was written (same buffer and item count, so most
	 * likely no insertion): keep it, rather than read four line pointers.
	 */
	if (hint->block == block && hint->buffer == buf &&
		(insert || (hint->layout & BTJIT_HINT_KEY_MASK) == layout))
		return;
	if (!P_RIGHTMOST(opaque))
		layout |= btjit_hint_tuple(page, P_HIKEY) << BTJIT_HINT_HIKEY_SHIFT;
	if (nitems >= low + 2)
	{
		uint32		mid,
					left,
					right;

		btjit_first_probes(low, nitems + 1, &mid, &left, &right);
		layout |= btjit_hint_tuple(page, mid) << BTJIT_HINT_MID_SHIFT |
			btjit_hint_tuple(page, left) << BTJIT_HINT_LEFT_SHIFT |
			btjit_hint_tuple(page, right) << BTJIT_HINT_RIGHT_SHIFT;
	}
	hint->block = block;
	hint->buffer = buf;
	hint->layout = layout;
}

static inline __attribute__((always_inline)) void
btjit_hint_prefetch_tuple(const char *page, uint64 layout, int shift)
{
	uint32		off = (layout >> shift) & ((1 << BTJIT_HINT_OFFSET_BITS) - 1);

	if (off != 0)
		__builtin_prefetch(page + (off << BTJIT_HINT_OFFSET_SHIFT));
}

/*
 * After the search of a level-1 page returned 'offnum': prefetch what the
 * descent will read of the leaf, if this backend has seen it.
 */
static inline __attribute__((always_inline)) void
btjit_hint_descend(const void *rel, const char *page, uint32 offnum)
{
	Oid			relid = ((const RelationData *) rel)->rd_id;
	ItemId		iid;
	IndexTuple	itup;
	BlockNumber child;
	const BtjitBlockHint *hint;
	const char *leaf;
	uint64		layout;
	uint32		nitems,
				low,
				mid,
				left,
				right;

	if (btjit_block_hints == NULL ||
		offnum < 1 || offnum > PageGetMaxOffsetNumber((Page) page))
		return;
	iid = PageGetItemId((Page) page, offnum);
	itup = (IndexTuple) (page + (ItemIdGetOffset(iid) & (BLCKSZ - 1)));
	child = ItemPointerGetBlockNumberNoCheck(&itup->t_tid);
	hint = btjit_hint_slot(relid, child);
	layout = hint->layout;
	if (hint->block != child || hint->buffer <= 0 || hint->buffer > NBuffers ||
		((layout >> BTJIT_HINT_RELTAG_SHIFT) & BTJIT_HINT_RELTAG_MASK) !=
		(relid & BTJIT_HINT_RELTAG_MASK))
		return;
	leaf = (const char *) BufferBlocks + (Size) (hint->buffer - 1) * BLCKSZ;
	__builtin_prefetch(GetBufferDescriptor(hint->buffer - 1));
	__builtin_prefetch(leaf);	/* header, high key's line pointer */
	__builtin_prefetch(leaf + BLCKSZ - 1);	/* special space */
	btjit_hint_prefetch_tuple(leaf, layout, BTJIT_HINT_HIKEY_SHIFT);
	btjit_hint_prefetch_tuple(leaf, layout, BTJIT_HINT_MID_SHIFT);
	btjit_hint_prefetch_tuple(leaf, layout, BTJIT_HINT_LEFT_SHIFT);
	btjit_hint_prefetch_tuple(leaf, layout, BTJIT_HINT_RIGHT_SHIFT);
	nitems = layout & ((1 << BTJIT_HINT_NITEMS_BITS) - 1);
	low = ((layout >> BTJIT_HINT_HIKEY_SHIFT) & ((1 << BTJIT_HINT_OFFSET_BITS) - 1)) != 0 ?
		P_FIRSTKEY : P_HIKEY;
	if (nitems < low + 2)
		return;
	btjit_first_probes(low, nitems + 1, &mid, &left, &right);
	__builtin_prefetch(PageGetItemId((Page) leaf, mid));
	__builtin_prefetch(PageGetItemId((Page) leaf, left));
	__builtin_prefetch(PageGetItemId((Page) leaf, right));
}

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
	bool		prefix = !general && btjit_prefix_skip();
	int			lowprefix = 0;	/* leading columns equal at item low - 1 */
	int			highprefix = 0; /* ... and at item high */

	if (high < low)
		return low;
	high++;
	if (leaf)
		btjit_prefetch_linp(page, low, high);

	/* Offsets are below MaxOffsetNumber: plain 32-bit arithmetic is exact. */
	while (high > low)
	{
		uint32		mid = (low + high) >> 1;
		int			goright;
		int			skip = prefix ? Min(lowprefix, highprefix) : 0;
		int			eqcols = 0;

		if (leaf)
			btjit_prefetch_step(page, low, mid, high);

		/* On internal pages the first data item is minus infinity. */
		if (!leaf && mid == firstkey)
			goright = 1;
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
			{
				int			result = btjit_compare_general(k, itup);

				if (unlikely(result == BTJIT_SIGN_DECLINE))
					return BTJIT_DECLINE;
				goright = result >= cmpval;
			}
			else if (leaf && likely(kind == 0))
				goright = btjit_goright_fast(k, itup, SHAPE.nkeys, full, true,
											 cmpval, skip, &eqcols);
			else if (!leaf && likely(kind == INDEX_ALT_TID_MASK &&
									 (tidoff & BT_IS_POSTING) == 0))
				goright = btjit_goright_fast(k, itup, tidoff & BT_OFFSET_MASK,
											 full, false, cmpval, skip, &eqcols);
			else if (kind & INDEX_NULL_MASK)
				return btjit_search_general(scankey, page);
			else
				goright = btjit_goright_fast(k, itup, btjit_tuple_natts(itup),
											 full, false, cmpval, skip, &eqcols);
			/* a called proc returned NULL */
			if (unlikely(goright < 0))
				return BTJIT_DECLINE;
		}

		if (goright)
		{
			low = mid + 1;
			lowprefix = eqcols;
		}
		else
		{
			high = mid;
			highprefix = eqcols;
		}
	}

	/* From 17 a backward leaf search returns the item before (pg_compat.h). */
	if (leaf)
		return (BTJIT_LEAF_BACKWARD && k->backward) ? low - 1 : low;
	return low - 1;
}

/*
 * Whether a column of this kind has a proc that returns a difference of
 * its arguments rather than -1/0/+1: btint2cmp, btboolcmp and btcharcmp
 * (their own type on both sides) do; the cross-type procs of their
 * families do not.
 */
static inline __attribute__((always_inline)) bool
btjit_kind_may_diff(int kind)
{
	return kind == BTJIT_KIND_INT16 || kind == BTJIT_KIND_BOOL ||
		kind == BTJIT_KIND_UINT8;
}

/* Whether the proc reading the argument as argkind is such a proc. */
static inline __attribute__((always_inline)) bool
btjit_proc_is_difference(const BtjitColumnShape *col, int argkind)
{
	return argkind == col->kind && btjit_kind_may_diff(col->kind);
}

/*
 * Decode a scankey argument read as argkind for column col's inline
 * comparison.  ok is false when the inline comparison does not apply (a
 * collation it does not know, a toasted argument): the column's proc is
 * then called.
 */
static BTJIT_INLINE_AFTER_BIND BtjitArg
btjit_decode_arg(const BtjitColumnShape *col, ScanKey sk, int argkind)
{
	BtjitArg	a;
	Datum		d = sk->sk_argument;
	const char *p;

	memset(&a, 0, sizeof(a));
	if (!btjit_collation_ok(col, sk->sk_collation))
		return a;
	a.ok = true;
	switch (argkind)
	{
		case BTJIT_KIND_INT16:
		case BTJIT_KIND_INT32:
		case BTJIT_KIND_INT64:
		case BTJIT_KIND_UINT32:
		case BTJIT_KIND_BOOL:
		case BTJIT_KIND_UINT8:
			a.value = btjit_arg_value(d, argkind);
			a.diff = btjit_proc_is_difference(col, argkind);
			break;
		case BTJIT_KIND_FLOAT4:
			a.fvalue = DatumGetFloat4(d);
			break;
		case BTJIT_KIND_FLOAT8:
			a.fvalue = DatumGetFloat8(d);
			break;
		case BTJIT_KIND_UUID:
			p = DatumGetPointer(d);
			a.value = (int64) btjit_load_be64(p);
			a.value2 = btjit_load_be64(p + 8);
			break;
		case BTJIT_KIND_VARBYTES:
		case BTJIT_KIND_BPCHAR:
			if (!btjit_varlena_plain(DatumGetPointer(d), &a.ptr, &a.len))
				a.ok = false;
			else if (argkind == BTJIT_KIND_BPCHAR)
				a.len = btjit_bpchar_truelen(a.ptr, a.len);
			break;
		case BTJIT_KIND_NAME:
			a.ptr = DatumGetPointer(d);
			a.len = btjit_strnlen(a.ptr, NAMEDATALEN);
			break;
		case BTJIT_KIND_NUMERIC:
			{
				const char *data;
				int32		len;

				/* a compressed or toasted argument: the proc's job */
				if (!btjit_varlena_plain(DatumGetPointer(d), &data, &len))
					a.ok = false;
				else
					btjit_numeric_decode(data, len, &a);
			}
			break;
		default:
			a.ok = false;
			break;
	}
	if (BTJIT_KIND_IS_BYTES(argkind) && a.ok && a.len >= 8)
		a.value = (int64) btjit_load_be64(a.ptr);
	return a;
}

/* The argument kind of an integer family member's comparison proc. */
static inline __attribute__((always_inline)) int
btjit_int_argkind(Oid cmpproc)
{
	switch (cmpproc)
	{
		case F_BTINT2CMP:
		case F_BTINT42CMP:
		case F_BTINT82CMP:
			return BTJIT_KIND_INT16;
		case F_BTINT4CMP:
		case F_BTINT24CMP:
		case F_BTINT84CMP:
			return BTJIT_KIND_INT32;
		case F_BTINT8CMP:
		case F_BTINT28CMP:
		case F_BTINT48CMP:
			return BTJIT_KIND_INT64;
		default:
			return BTJIT_KIND_NONE;
	}
}

/* Whether column i's shape compares cmpproc's operators inline. */
static inline __attribute__((always_inline)) bool
btjit_col_has_proc(int i, Oid cmpproc)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];

	if (cmpproc == InvalidOid)
		return false;
#pragma clang loop unroll(full)
	for (int p = 0; p < BTJIT_MAX_PROCS; p++)
		if (p < col->nprocs && col->procs[p] == cmpproc)
			return true;
	return false;
}

/*
 * A scankey attribute with a cross-type proc of column i, or with a proc
 * the shape does not know (ok false), for a constant i: each member is
 * decoded with its own argument kind, a constant.
 */
static inline __attribute__((always_inline)) BtjitArg
btjit_decode_crosstype_col(int i, ScanKey sk)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	BtjitArg	a;

#pragma clang loop unroll(full)
	for (int p = 1; p < BTJIT_MAX_PROCS; p++)
	{
		if (p < col->nprocs && sk->sk_func.fn_oid == col->procs[p])
			return btjit_decode_arg(col, sk, col->argkinds[p]);
	}
	memset(&a, 0, sizeof(a));
	return a;
}

/*
 * The same out of line, so that the optimiser cannot merge it with the
 * column's own proc into a table lookup on the hot path.  The switch gives
 * every column its own copy with constant kinds: with i a run-time value,
 * the column's procs and kinds were loads of the shape and the argument's
 * decoding a switch on them.
 */
static __attribute__((noinline)) BtjitArg
btjit_decode_crosstype(int i, ScanKey sk)
{
	BtjitArg	a;

	StaticAssertStmt(BTJIT_MAX_KEYS == 8, "one case per key column");
	switch (i)
	{
#define BTJIT_DECODE_CASE(n) \
		case n: \
			return btjit_decode_crosstype_col(n, sk)
			BTJIT_DECODE_CASE(0);
			BTJIT_DECODE_CASE(1);
			BTJIT_DECODE_CASE(2);
			BTJIT_DECODE_CASE(3);
			BTJIT_DECODE_CASE(4);
			BTJIT_DECODE_CASE(5);
			BTJIT_DECODE_CASE(6);
			BTJIT_DECODE_CASE(7);
#undef BTJIT_DECODE_CASE
		default:
			break;
	}
	/* not reached: i < SHAPE.nkeys <= BTJIT_MAX_KEYS */
	memset(&a, 0, sizeof(a));
	return a;
}

/*
 * The same inline for an integer family column: its two cross-type members
 * named (see btjit_check_int_column for why not from procs[] in a loop),
 * each decoded with its argument kind a constant; anything else out of
 * line.  A call with a returned struct cost more than the decoding.
 */
static inline __attribute__((always_inline)) BtjitArg
btjit_decode_int_members(int i, ScanKey sk, Oid c1, Oid c2)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];

	if (btjit_col_has_proc(i, c1) && sk->sk_func.fn_oid == c1)
		return btjit_decode_arg(col, sk, btjit_int_argkind(c1));
	if (btjit_col_has_proc(i, c2) && sk->sk_func.fn_oid == c2)
		return btjit_decode_arg(col, sk, btjit_int_argkind(c2));
	return btjit_decode_crosstype(i, sk);
}

static inline __attribute__((always_inline)) BtjitArg
btjit_decode_other(int i, ScanKey sk)
{
	switch (SHAPE.cols[i].procs[0])
	{
		case F_BTINT2CMP:
			return btjit_decode_int_members(i, sk, F_BTINT24CMP, F_BTINT28CMP);
		case F_BTINT4CMP:
			return btjit_decode_int_members(i, sk, F_BTINT48CMP, F_BTINT42CMP);
		case F_BTINT8CMP:
			return btjit_decode_int_members(i, sk, F_BTINT84CMP, F_BTINT82CMP);
		default:
			return btjit_decode_crosstype(i, sk);
	}
}

/*
 * Decode a scankey into k, checking that the shape covers it.  Returns
 * false to decline.  With general false, a scankey the fast instance does
 * not handle (a NULL attribute, a column whose proc must be called for
 * this scankey) also returns false, with *needgeneral set: the caller
 * hands such keys to the general instance.
 */
static inline __attribute__((always_inline)) bool
btjit_decode_key(BTScanInsert key, BtjitKey *k, bool general, bool *needgeneral)
{
	k->keysz = key->keysz;
	if (!key->heapkeyspace || k->keysz < 1 || k->keysz > SHAPE.nkeys)
		return false;
	k->scantid = key->scantid;
	k->backward = BTJIT_KEY_BACKWARD(key);
	k->nextkey = key->nextkey;
	k->key = key;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		ScanKey		sk = &key->scankeys[i];
		int			flags = col->desc ? SK_BT_DESC : 0;
		BtjitArg	a;

		if (i >= SHAPE.nkeys)
			break;
		memset(&k->arg[i], 0, sizeof(BtjitArg));
		k->argnull[i] = false;
		k->argcall[i] = false;
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
				*needgeneral = true;
				return false;
			}
			k->argnull[i] = true;
			continue;
		}

		/*
		 * A called column needs nothing decoded: the proc reads it.  One
		 * that names an import is called (argcall) when the scankey's proc
		 * is not the imported function; the fast instance leaves such keys
		 * to the general one, so that its loop runs the imported body only.
		 */
		if (col->kind == BTJIT_KIND_CALL)
		{
			if (col->bcsym[0] != '\0' && !btjit_bc_applies(i, sk))
			{
				if (!general)
				{
					*needgeneral = true;
					return false;
				}
				k->argcall[i] = true;
			}
			continue;
		}

		/*
		 * The column's own proc reads the argument with a constant kind;
		 * cross-type procs go out of line, so that the optimiser cannot
		 * merge the two into a table lookup on the hot path.
		 */
		if (likely(sk->sk_func.fn_oid == col->procs[0]))
			a = btjit_decode_arg(col, sk, col->argkinds[0]);
		else
			a = btjit_decode_other(i, sk);
		if (!a.ok)
		{
			if (!general)
			{
				*needgeneral = true;
				return false;
			}
			k->argcall[i] = true;
			continue;
		}
		k->arg[i] = a;
	}
	return true;
}

/*
 * Decode the scankey once per page search and run the page search.  The
 * fast instance (general false) declines nothing the general one accepts:
 * it hands scankeys with NULLs or with columns to call, and pages with
 * NULLs in probed tuples, to btjit_search_general, which decodes the key again.  Keeping the decoded
 * key private to each instance lets it live in registers.
 */
static inline __attribute__((always_inline)) int
btjit_search_impl(void *scankey, const char *page, bool general)
{
	BTScanInsert key = (BTScanInsert) scankey;
	BtjitKey	k;
	bool		needgeneral = false;
	bool		leaf = P_ISLEAF(BTPageGetOpaque((Page) page));

	/* scantid searches of leaf pages belong to _bt_binsrch_insert */
	if (key->scantid != NULL && (key->nextkey || leaf))
		return BTJIT_DECLINE;
	if (!btjit_decode_key(key, &k, general, &needgeneral))
		return needgeneral ? btjit_search_general(scankey, page) : BTJIT_DECLINE;

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
		BTPageOpaque opaque = BTPageGetOpaque((Page) page);

		counters[0]++;
		if (P_ISLEAF(opaque))
			btjit_hint_record(rel, buf, page, false);
		else if (opaque->btpo_level == 1)
			btjit_hint_descend(rel, page, (uint32) result);
		return (uint16) result;
	}
	return btjit_declined(rel, scankey, buf, counters);
}

/*
 * _bt_compare's exact value for one attribute, both sides non-NULL: the
 * proc's own result, inverted as INVERT_COMPARE_RESULT does unless DESC.
 * Callers of _bt_compare other than the page search may look at more than
 * the sign, so the value must match, not just its sign: inline only where
 * the value is known (the integer procs return -1/0/+1 or, for int2, bool
 * and "char" against their own type, a difference; the float procs
 * -1/0/+1); every other proc is called, since memcmp()-based procs return
 * whatever the C library's memcmp() returns.  Returns false if a called
 * proc returned NULL.
 */
static BTJIT_INLINE_AFTER_BIND bool
btjit_exact_attr(int i, const BtjitKey *k, const char *ptr, int32 *result)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	const BtjitArg *a = &k->arg[i];
	int32		c;

	if (!k->argcall[i] && BTJIT_KIND_IS_INT(col->kind))
	{
		int64		stored = btjit_stored_value(ptr, col->kind);

		if (btjit_kind_may_diff(col->kind) && a->diff)
			c = (int32) stored - (int32) a->value;
		else
			c = stored > a->value ? 1 : (stored < a->value ? -1 : 0);
	}
	else if (!k->argcall[i] && col->kind == BTJIT_KIND_FLOAT4)
	{
		float4		f;

		memcpy(&f, ptr, sizeof(f));
		c = btjit_float_cmp((double) f, a->fvalue);
	}
	else if (!k->argcall[i] && col->kind == BTJIT_KIND_FLOAT8)
	{
		float8		f;

		memcpy(&f, ptr, sizeof(f));
		c = btjit_float_cmp(f, a->fvalue);
	}
	else if (!k->argcall[i] && col->kind == BTJIT_KIND_NUMERIC &&
			 btjit_numeric_exact(ptr, a, &c))
	{
		/* numeric_cmp returns cmp_numerics' -1, 0 or 1 */
	}
	else if (!btjit_call_column(i, &k->key->scankeys[i],
								fetch_att(ptr, col->attbyval, col->attlen), &c))
		return false;
	if (!btjit_col_desc(i))
		c = c < 0 ? 1 : -c;
	*result = c;
	return true;
}

static __attribute__((noinline)) int32 btjit_compare_one_general(void *scankey,
																 const char *page,
																 uint32 offnum,
																 bool *declined);

/*
 * _bt_compare(rel, scankey, page, offnum) with its exact value; *declined
 * set when the scankey is outside the shape or a called proc returned
 * NULL.
 */
static inline __attribute__((always_inline)) int32
btjit_compare_one(void *scankey, const char *page, uint32 offnum,
				  bool *declined, bool general)
{
	BTScanInsert key = (BTScanInsert) scankey;
	BTPageOpaque opaque = BTPageGetOpaque((Page) page);
	BtjitKey	k;
	bool		needgeneral = false;
	IndexTuple	itup;
	int			ntupatts;
	int			ncmp;
	bool		hasnulls;
	const uint8 *bitmap;
	const char *data;
	uint32		off = 0;

	*declined = true;
	if (!btjit_decode_key(key, &k, general, &needgeneral))
		return needgeneral ? btjit_compare_one_general(scankey, page, offnum,
												   declined) : 0;

	/* On internal pages the first data item is minus infinity. */
	if (!P_ISLEAF(opaque) && offnum == P_FIRSTDATAKEY(opaque))
	{
		*declined = false;
		return 1;
	}

	itup = (IndexTuple) (page + ItemIdGetOffset(PageGetItemId((Page) page, offnum)));
	ntupatts = btjit_tuple_natts(itup);
	ncmp = Min(ntupatts, k.keysz);
	hasnulls = (itup->t_info & INDEX_NULL_MASK) != 0;
	bitmap = (const uint8 *) ((const char *) itup + sizeof(IndexTupleData));
	data = (const char *) itup + IndexInfoFindDataOffset(itup->t_info);

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		const char *ptr = NULL;
		bool		isnull;
		int32		result;

		if (i >= SHAPE.nkeys || i >= ncmp)
			break;
		isnull = hasnulls && !(bitmap[i >> 3] & (1 << (i & 7)));
		if (!isnull)
		{
			off = btjit_att_start(col, data, off);
			ptr = data + off;
		}
		if (k.argnull[i] || isnull)
			result = btjit_null_result(col, k.argnull[i], isnull);
		else if (!k.argcall[i] && BTJIT_KIND_IS_INT(col->kind) &&
				 !btjit_kind_may_diff(col->kind))
		{
			/*
			 * The integer procs other than the difference ones return -1,
			 * 0 or +1: two branches on one comparison, inverted unless
			 * DESC, and on to the next column when equal.
			 */
			int64		stored = btjit_stored_value(ptr, col->kind);

			if (stored > k.arg[i].value)
			{
				*declined = false;
				return btjit_col_desc(i) ? 1 : -1;
			}
			if (stored < k.arg[i].value)
			{
				*declined = false;
				return btjit_col_desc(i) ? -1 : 1;
			}
			result = 0;
		}
		else if (!btjit_exact_attr(i, &k, ptr, &result))
			return 0;
		if (result != 0)
		{
			*declined = false;
			return result;
		}
		if (!isnull && i + 1 < SHAPE.nkeys)
			off = btjit_att_end(col, ptr, off);
	}
	*declined = false;
	return btjit_tiebreak(itup, k.keysz, ntupatts, k.backward, k.scantid);
}

/*
 * The instance for scankeys with NULLs or columns whose proc is called;
 * the fast one (general false) hands those here before it has done
 * anything, so that its own decoded key has no such cases to test.
 */
static __attribute__((noinline)) int32
btjit_compare_one_general(void *scankey, const char *page, uint32 offnum,
					  bool *declined)
{
	return btjit_compare_one(scankey, page, offnum, declined, true);
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
	int32		result = btjit_compare_one(scankey, page, offnum, &declined,
										   false);

	if (likely(!declined))
	{
		counters[0]++;
		return result;
	}
	return btjit_compare_declined(rel, scankey, page, offnum, counters);
}

/*
 * ---- The insertion search: _bt_binsrch_insert ----
 *
 * _bt_binsrch_insert(rel, insertstate) searches the leaf page an insertion
 * goes to, for the first item >= the insertion scankey, and caches the
 * bounds of the search in insertstate (low, and stricthigh: the first item
 * known to be strictly greater) so that a second call on the same page
 * (after a unique check, say) restarts from them.  The compiled version
 * reproduces that, probe for probe, with the scankey decoded once instead
 * of once per _bt_compare call.
 *
 * One case is left to the stock function: a comparison that comes out
 * equal while the scankey carries a heap TID, which means the new tuple's
 * TID falls inside a posting list (the caller must split it; the stock
 * function finds the position in the list, and raises the corruption error
 * when that happens twice).  The compiled search then declines before it
 * has written anything, so the stock function sees exactly the
 * insertstate it would have seen, and the result is its own.
 */

/*
 * _bt_compare's sign for a plain leaf tuple (no NULLs, every attribute, a
 * heap TID of its own) against a scankey without NULLs or called columns.
 */
static inline __attribute__((always_inline)) int
btjit_sign_leafplain(const BtjitKey *k, IndexTuple itup, bool full)
{
	int			keysz = full ? SHAPE.nkeys : k->keysz;
	const char *data = (const char *) itup + MAXALIGN(sizeof(IndexTupleData));
	uint32		off = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		const char *ptr;

		if (i >= SHAPE.nkeys || i >= keysz)
			break;
		off = btjit_att_start(col, data, off);
		ptr = data + off;
		if (BTJIT_KIND_IS_INT(col->kind))
		{
			int64		value = btjit_stored_value(ptr, col->kind);
			int64		arg = k->arg[i].value;

			/* two branches on one comparison, as in btjit_goright_fast */
			if (btjit_col_desc(i) ? value > arg : arg > value)
				return 1;
			if (value != arg)
				return -1;
		}
		else
		{
			/* BTJIT_SIGN_DECLINE (a called proc returned NULL) included */
			int			sign = btjit_attr_sign(i, k, ptr, false);

			if (sign != 0)
				return sign;
		}
		if (i + 1 < SHAPE.nkeys)
			off = btjit_att_end(col, ptr, off);
	}
	/* every key attribute present and equal: the heap TID decides */
	if (k->scantid == NULL)
		return 0;
	return btjit_tid_compare(k->scantid, &itup->t_tid);
}

/*
 * The search loop of _bt_binsrch_insert over [low, high), with its bounds
 * cached in state on success.  general: the scankey has NULLs or columns
 * whose proc is called; full: it covers every key column.
 */
static inline __attribute__((always_inline)) int
btjit_insert_loop(const BtjitKey *k, BTInsertState state, const char *page,
				  uint32 low, uint32 high, bool general, bool full)
{
	uint32		stricthigh = high;

	if (high > low)
		btjit_prefetch_linp(page, low, high);
	while (high > low)
	{
		uint32		mid = low + ((high - low) >> 1);
		ItemId		iid = PageGetItemId((Page) page, mid);
		IndexTuple	itup = (IndexTuple) (page + ItemIdGetOffset(iid));
		int			result;

		btjit_prefetch_step(page, low, mid, high);
		if (!general &&
			likely((itup->t_info & (INDEX_NULL_MASK | INDEX_ALT_TID_MASK)) == 0))
			result = btjit_sign_leafplain(k, itup, full);
		else
			result = btjit_compare_general(k, itup);
		if (unlikely(result == BTJIT_SIGN_DECLINE))
			return BTJIT_DECLINE;

		/* the scankey's heap TID is inside a posting list: stock path */
		if (unlikely(result == 0 && k->scantid != NULL))
			return BTJIT_DECLINE;
		if (result >= 1)
			low = mid + 1;
		else
		{
			high = mid;
			if (result != 0)
				stricthigh = high;
		}
	}
	state->low = (OffsetNumber) low;
	state->stricthigh = (OffsetNumber) stricthigh;
	state->bounds_valid = true;
	return low;
}

static __attribute__((noinline)) int btjit_insert_search_general(BTInsertState state,
																 const char *page);

/*
 * What _bt_binsrch_insert returns for this insertstate and its (leaf)
 * page, with insertstate's bounds updated as it updates them; or
 * BTJIT_DECLINE, with insertstate untouched.
 */
static inline __attribute__((always_inline)) int
btjit_insert_search_impl(BTInsertState state, const char *page, bool general)
{
	BTScanInsert key = state->itup_key;
	BTPageOpaque opaque = BTPageGetOpaque((Page) page);
	BtjitKey	k;
	bool		needgeneral = false;
	uint32		low,
				high;

	/* only what the server ever passes: a leaf, !nextkey, no posting yet */
	if (!P_ISLEAF(opaque) || key->nextkey || state->postingoff != 0)
		return BTJIT_DECLINE;
	if (!btjit_decode_key(key, &k, general, &needgeneral))
		return needgeneral ? btjit_insert_search_general(state, page) : BTJIT_DECLINE;

	if (!state->bounds_valid)
	{
		low = P_FIRSTDATAKEY(opaque);
		high = PageGetMaxOffsetNumber((Page) page);
	}
	else
	{
		low = state->low;
		high = state->stricthigh;
	}
	if (unlikely(high < low))
	{
		/* nothing to search: the bounds cannot be reused */
		state->low = InvalidOffsetNumber;
		state->stricthigh = InvalidOffsetNumber;
		state->bounds_valid = false;
		return low;
	}
	/* a fresh search's high starts one past the last item */
	if (!state->bounds_valid)
		high++;

	if (general)
		return btjit_insert_loop(&k, state, page, low, high, true, false);
	if (k.keysz == SHAPE.nkeys)
		return btjit_insert_loop(&k, state, page, low, high, false, true);
	return btjit_insert_loop(&k, state, page, low, high, false, false);
}

static __attribute__((noinline)) int
btjit_insert_search_general(BTInsertState state, const char *page)
{
	return btjit_insert_search_impl(state, page, true);
}

/*
 * Fused entry for the redirected _bt_binsrch_insert (BtjitInsertEntryFn):
 * counts in counters[0], hands declined calls to btjit_insert_declined.
 */
uint16
btjit_insert_entry(void *rel, void *insertstate, uint64 *counters)
{
	BTInsertState state = (BTInsertState) insertstate;
	int			result;

	result = btjit_insert_search_impl(state,
									  (const char *) BufferGetPage(state->buf),
									  false);
	if (likely(result != BTJIT_DECLINE))
	{
		counters[0]++;
		btjit_hint_record(rel, state->buf,
						  (const char *) BufferGetPage(state->buf), true);
		return (uint16) result;
	}
	return btjit_insert_declined(rel, insertstate, counters);
}

/*
 * ---- Scan-key checks: _bt_checkkeys (PostgreSQL 15, 17 and 18) ----
 *
 * _bt_checkkeys tests one index tuple against the scan's preprocessed keys
 * (so->keyData; 17 and 18 pass the direction and continuescan in a
 * BTReadPageState, which the dispatcher unpacks: pg_compat.h): each key's
 * operator is called on the tuple's attribute and the key's argument, and
 * the first that fails ends the test, stopping the scan (continuescan
 * false) when that key is required in the scan's direction.  The compiled
 * version does the same with the attribute read at its known place and,
 * for the operators of the column's own B-tree family whose order the
 * template reproduces, the operator replaced by the inline comparison
 * (a B-tree family's operators are its comparison proc's sign tested
 * against zero: that is what makes them a B-tree family).  The operator is
 * recognised by the key's fn_oid, which for these built-in functions
 * names the very function; any other operator is called as the stock
 * function calls it.  Keys on a DESC column keep their operator (only the
 * strategy number is commuted), so nothing here depends on the direction
 * of the column.
 *
 * Declined, with nothing written: a tuple with NULLs, row comparisons and
 * IS [NOT] NULL keys, and an operator that returned NULL (the stock
 * function raises the server's error).  On 17 and 18 the dispatcher calls
 * this only for scans without array keys, whose test is 15's except that
 * the server skips the keys that 17's precheck or 18's startikey found to
 * hold for the whole page; the compiled walk skips the same keys
 * (btjit_page_skip, src/README).  19's _bt_checkkeys is static: there the
 * module's own leaf read is this entry's only caller, with no key skipped,
 * and the module tests a declined tuple itself (pg_compat.h,
 * BTJIT_READPAGE_OWNS_CHECKS).
 */

#ifdef BTJIT_CHECKS_COMPILED

#define BTJIT_OP_NONE	0
#define BTJIT_OP_LT		1
#define BTJIT_OP_LE		2
#define BTJIT_OP_EQ		3
#define BTJIT_OP_GE		4
#define BTJIT_OP_GT		5

/*
 * The functions of the five operators (< <= = >= >) of comparison proc
 * cmpproc's family member (same left and right types), in ops[BTJIT_OP_*],
 * or false when the template does not know cmpproc.  cmpproc is a constant
 * of the shape, so this folds to five constants.
 */
static inline __attribute__((always_inline)) bool
btjit_ops_of(Oid cmpproc, Oid *ops)
{
	switch (cmpproc)
	{
#define BTJIT_OPS(proc, l1, l2, e, g2, g1) \
		case proc: \
			ops[BTJIT_OP_LT] = l1; ops[BTJIT_OP_LE] = l2; ops[BTJIT_OP_EQ] = e; \
			ops[BTJIT_OP_GE] = g2; ops[BTJIT_OP_GT] = g1; \
			return true
			BTJIT_OPS(F_BTINT2CMP, F_INT2LT, F_INT2LE, F_INT2EQ, F_INT2GE, F_INT2GT);
			BTJIT_OPS(F_BTINT24CMP, F_INT24LT, F_INT24LE, F_INT24EQ, F_INT24GE, F_INT24GT);
			BTJIT_OPS(F_BTINT28CMP, F_INT28LT, F_INT28LE, F_INT28EQ, F_INT28GE, F_INT28GT);
			BTJIT_OPS(F_BTINT4CMP, F_INT4LT, F_INT4LE, F_INT4EQ, F_INT4GE, F_INT4GT);
			BTJIT_OPS(F_BTINT42CMP, F_INT42LT, F_INT42LE, F_INT42EQ, F_INT42GE, F_INT42GT);
			BTJIT_OPS(F_BTINT48CMP, F_INT48LT, F_INT48LE, F_INT48EQ, F_INT48GE, F_INT48GT);
			BTJIT_OPS(F_BTINT8CMP, F_INT8LT, F_INT8LE, F_INT8EQ, F_INT8GE, F_INT8GT);
			BTJIT_OPS(F_BTINT82CMP, F_INT82LT, F_INT82LE, F_INT82EQ, F_INT82GE, F_INT82GT);
			BTJIT_OPS(F_BTINT84CMP, F_INT84LT, F_INT84LE, F_INT84EQ, F_INT84GE, F_INT84GT);
			BTJIT_OPS(F_BTOIDCMP, F_OIDLT, F_OIDLE, F_OIDEQ, F_OIDGE, F_OIDGT);
			BTJIT_OPS(F_BTBOOLCMP, F_BOOLLT, F_BOOLLE, F_BOOLEQ, F_BOOLGE, F_BOOLGT);
			BTJIT_OPS(F_BTCHARCMP, F_CHARLT, F_CHARLE, F_CHAREQ, F_CHARGE, F_CHARGT);
			BTJIT_OPS(F_DATE_CMP, F_DATE_LT, F_DATE_LE, F_DATE_EQ, F_DATE_GE, F_DATE_GT);
			BTJIT_OPS(F_TIME_CMP, F_TIME_LT, F_TIME_LE, F_TIME_EQ, F_TIME_GE, F_TIME_GT);
			BTJIT_OPS(F_TIMESTAMP_CMP, F_TIMESTAMP_LT, F_TIMESTAMP_LE, F_TIMESTAMP_EQ, F_TIMESTAMP_GE, F_TIMESTAMP_GT);
			BTJIT_OPS(F_TIMESTAMPTZ_CMP, F_TIMESTAMPTZ_LT, F_TIMESTAMPTZ_LE, F_TIMESTAMPTZ_EQ, F_TIMESTAMPTZ_GE, F_TIMESTAMPTZ_GT);
			BTJIT_OPS(F_BTFLOAT4CMP, F_FLOAT4LT, F_FLOAT4LE, F_FLOAT4EQ, F_FLOAT4GE, F_FLOAT4GT);
			BTJIT_OPS(F_BTFLOAT48CMP, F_FLOAT48LT, F_FLOAT48LE, F_FLOAT48EQ, F_FLOAT48GE, F_FLOAT48GT);
			BTJIT_OPS(F_BTFLOAT8CMP, F_FLOAT8LT, F_FLOAT8LE, F_FLOAT8EQ, F_FLOAT8GE, F_FLOAT8GT);
			BTJIT_OPS(F_BTFLOAT84CMP, F_FLOAT84LT, F_FLOAT84LE, F_FLOAT84EQ, F_FLOAT84GE, F_FLOAT84GT);
			BTJIT_OPS(F_UUID_CMP, F_UUID_LT, F_UUID_LE, F_UUID_EQ, F_UUID_GE, F_UUID_GT);
			BTJIT_OPS(F_NUMERIC_CMP, F_NUMERIC_LT, F_NUMERIC_LE, F_NUMERIC_EQ, F_NUMERIC_GE, F_NUMERIC_GT);
			/* in C and POSIX (the argument's decoding checks the collation) */
			BTJIT_OPS(F_BTTEXTCMP, F_TEXT_LT, F_TEXT_LE, F_TEXTEQ, F_TEXT_GE, F_TEXT_GT);
			BTJIT_OPS(F_BYTEACMP, F_BYTEALT, F_BYTEALE, F_BYTEAEQ, F_BYTEAGE, F_BYTEAGT);
#undef BTJIT_OPS
		default:
			return false;
	}
}

/*
 * Which operator of comparison proc cmpproc's family member fn is:
 * BTJIT_OP_*, at most five tests of fn.
 */
static inline __attribute__((always_inline)) int
btjit_op_of(Oid cmpproc, Oid fn)
{
	Oid			ops[BTJIT_OP_GT + 1];

	if (!btjit_ops_of(cmpproc, ops))
		return BTJIT_OP_NONE;
	for (int op = BTJIT_OP_LT; op <= BTJIT_OP_GT; op++)
		if (fn == ops[op])
			return op;
	return BTJIT_OP_NONE;
}

/* Whether operator op holds for a comparison of sign c. */
static inline __attribute__((always_inline)) bool
btjit_op_holds(int op, int c)
{
	switch (op)
	{
		case BTJIT_OP_LT:
			return c < 0;
		case BTJIT_OP_LE:
			return c <= 0;
		case BTJIT_OP_EQ:
			return c == 0;
		case BTJIT_OP_GE:
			return c >= 0;
		default:
			return c > 0;
	}
}

/*
 * Scan key sk's operator called on the stored value, as FunctionCall2Coll
 * calls it: 1 true, 0 false, -1 it returned NULL (declined: the stock
 * function raises the error).
 */
static __attribute__((noinline)) int
btjit_call_operator(ScanKey sk, Datum stored)
{
	Datum		r;

	if (!btjit_call_datum(sk->sk_func.fn_addr, sk, stored, &r))
		return -1;
	return DatumGetBool(r) ? 1 : 0;
}

/*
 * Scan key sk's operator, of comparison proc procs[p] of column i's family,
 * tested inline on the value at ptr (1 passes, 0 fails); -2 when the inline
 * comparison does not apply (the operator is not one of that proc's, an
 * argument or value the inline code leaves to the server).
 */
static inline __attribute__((always_inline)) int
btjit_check_inline(int i, int p, ScanKey sk, const char *ptr)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	int			op = btjit_op_of(col->procs[p], sk->sk_func.fn_oid);
	BtjitArg	a;
	int			c;

	if (op == BTJIT_OP_NONE)
		return -2;
	a = btjit_decode_arg(col, sk, col->argkinds[p]);

	/*
	 * Integer kinds test the values themselves: the same answer as the sign
	 * through btjit_op_holds, in two instructions instead of six.
	 */
	if (BTJIT_KIND_IS_INT(col->kind) && a.ok)
	{
		int64		v = btjit_stored_value(ptr, col->kind);

		switch (op)
		{
			case BTJIT_OP_LT:
				return v < a.value;
			case BTJIT_OP_LE:
				return v <= a.value;
			case BTJIT_OP_EQ:
				return v == a.value;
			case BTJIT_OP_GE:
				return v >= a.value;
			default:
				return v > a.value;
		}
	}
	if (!a.ok || !btjit_inline_sign(col, &a, ptr, &c))
		return -2;
	return btjit_op_holds(op, c) ? 1 : 0;
}

/*
 * Operator op of member cmpproc of integer column i's family, tested on
 * the value at ptr (stored as storedkind): 1 passes, 0 fails, -2 it is not
 * the key's operator.  own marks the column's own member, whose test is
 * the likely one (so that the optimiser tests it first).  The stored value and the argument are each widened
 * to int64 from their own type (an int4 argument of an int2 column is
 * never narrowed), and compared by the operator itself.
 */
static inline __attribute__((always_inline)) int
btjit_int_member_op(int i, int op, Oid cmpproc, bool own, int storedkind,
					ScanKey sk, const char *ptr)
{
	Oid			ops[BTJIT_OP_GT + 1];
	int			argkind;
	int64		v;
	int64		a;

	if (!btjit_col_has_proc(i, cmpproc) || !btjit_ops_of(cmpproc, ops))
		return -2;
	if (own ? unlikely(sk->sk_func.fn_oid != ops[op]) :
		sk->sk_func.fn_oid != ops[op])
		return -2;
	argkind = btjit_int_argkind(cmpproc);
	v = btjit_stored_value(ptr, storedkind);
	a = btjit_arg_value(sk->sk_argument, argkind);
	switch (op)
	{
		case BTJIT_OP_LT:
			return v < a;
		case BTJIT_OP_LE:
			return v <= a;
		case BTJIT_OP_EQ:
			return v == a;
		case BTJIT_OP_GE:
			return v >= a;
		default:
			return v > a;
	}
}

/* Operator op of any of the members c0, c1, c2, in that order. */
static inline __attribute__((always_inline)) int
btjit_int_family_op(int i, int op, Oid c0, Oid c1, Oid c2, int storedkind,
					ScanKey sk, const char *ptr)
{
	int			r = btjit_int_member_op(i, op, c0, true, storedkind, sk, ptr);

	if (r == -2)
		r = btjit_int_member_op(i, op, c1, false, storedkind, sk, ptr);
	if (r == -2)
		r = btjit_int_member_op(i, op, c2, false, storedkind, sk, ptr);
	return r;
}

/*
 * A key on integer column i of family members c0 (the column's own), c1
 * and c2 (cross-type, or InvalidOid): 1 passes, 0 fails, -2 not compared
 * inline.
 *
 * The key's strategy number says which operator to look for, so that the
 * tests are one per member whatever the operator, the column's own type
 * first and then the cross-type members (int2 = int4, int8 = int4, ...).
 * Searching every member's five operators instead made a cross-type key
 * cost a dozen instructions more than a same-type one, through jump tables.
 * The strategy is only a hint: the function is what is compared, and a key
 * whose function is not the hinted operator of a member (none the server
 * makes for these families) returns -2 and has its operator called, as
 * any operator the shape does not know.
 * Preprocessing commutes the strategy of a key on a DESC column and keeps
 * its operator (_bt_fix_scankey_strategy), so the hint is commuted back.
 *
 * The members are constants of the caller, not read from the shape's
 * procs[] in a loop: the template is optimised before any shape is known,
 * and clang merges the iterations of such a loop into one block indexed by
 * the member (the argument's width then a load from the shape and a jump
 * table).  The shape still decides which members are inline
 * (btjit_col_has_proc).
 */
static inline __attribute__((always_inline)) int
btjit_int_family(int i, Oid c0, Oid c1, Oid c2, int storedkind, ScanKey sk,
				 const char *ptr)
{
	int			hint = sk->sk_strategy;
	int			r;

	if (btjit_col_desc(i))
		hint = BTCommuteStrategyNumber(hint);
	if (likely(hint == BTJIT_OP_EQ))
		return btjit_int_family_op(i, BTJIT_OP_EQ, c0, c1, c2, storedkind, sk, ptr);
	if (hint < BTJIT_OP_EQ)
		r = hint == BTJIT_OP_LT ?
			btjit_int_family_op(i, BTJIT_OP_LT, c0, c1, c2, storedkind, sk, ptr) :
			btjit_int_family_op(i, BTJIT_OP_LE, c0, c1, c2, storedkind, sk, ptr);
	else
		r = hint == BTJIT_OP_GE ?
			btjit_int_family_op(i, BTJIT_OP_GE, c0, c1, c2, storedkind, sk, ptr) :
			btjit_int_family_op(i, BTJIT_OP_GT, c0, c1, c2, storedkind, sk, ptr);
	return r;
}

/*
 * A key on integer column i (BTJIT_KIND_IS_INT): the integer family's
 * three comparison procs by name, in the order the application's types
 * are likeliest (the column's own, then int4, then the other); any other
 * integer-kind column (oid, date, timestamp, bool, "char") has its own
 * proc alone, tested as before.
 */
static inline __attribute__((always_inline)) int
btjit_check_int_column(int i, ScanKey sk, const char *ptr)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];

	switch (col->procs[0])
	{
		case F_BTINT2CMP:
			return btjit_int_family(i, F_BTINT2CMP, F_BTINT24CMP, F_BTINT28CMP,
									BTJIT_KIND_INT16, sk, ptr);
		case F_BTINT4CMP:
			return btjit_int_family(i, F_BTINT4CMP, F_BTINT48CMP, F_BTINT42CMP,
									BTJIT_KIND_INT32, sk, ptr);
		case F_BTINT8CMP:
			return btjit_int_family(i, F_BTINT8CMP, F_BTINT84CMP, F_BTINT82CMP,
									BTJIT_KIND_INT64, sk, ptr);
		default:
			return btjit_check_inline(i, 0, sk, ptr);
	}
}

/*
 * Scan key sk tested on column i's value at ptr: 1 passes, 0 fails, -1
 * declined; in the fast instance (general false) also -2, for a key whose
 * operator is not inline-compared: the general instance then takes the
 * tuple, so that the fast one calls nothing and needs no frame to speak
 * of.  An integer column's cross-type operators are compared in the fast
 * instance (btjit_check_int_column); those of the float and string
 * families in the general one.
 */
static BTJIT_INLINE_AFTER_BIND int
btjit_check_column(int i, ScanKey sk, const char *ptr, bool general)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	int			r;

	if (BTJIT_KIND_IS_INT(col->kind))
	{
		r = btjit_check_int_column(i, sk, ptr);
		if (likely(r != -2))
			return r;
	}
	else if (col->kind != BTJIT_KIND_CALL)
	{
		r = btjit_check_inline(i, 0, sk, ptr);
		if (likely(r != -2))
			return r;
		if (!general)
			return -2;

		/*
		 * The cross-type members of the other families with any (float4 =
		 * float8, text = name), inline in the general instance.
		 */
#pragma clang loop unroll(full)
		for (int p = 1; p < BTJIT_MAX_PROCS; p++)
		{
			if (p >= col->nprocs)
				break;
			r = btjit_check_inline(i, p, sk, ptr);
			if (r != -2)
				return r;
		}
	}
	if (!general)
		return -2;
	return btjit_call_operator(sk, fetch_att(ptr, col->attbyval, col->attlen));
}

/*
 * Whether key sk fails, and if so what _bt_checkkeys sets continuescan to:
 * false when the key is required in the scan's direction.
 */
static inline __attribute__((always_inline)) bool
btjit_key_continues(ScanKey sk, ScanDirection dir)
{
	return !(((sk->sk_flags & SK_BT_REQFWD) && ScanDirectionIsForward(dir)) ||
			 ((sk->sk_flags & SK_BT_REQBKWD) && ScanDirectionIsBackward(dir)));
}

/*
 * The keys the server's walk skips for this tuple (pg_compat.h): those
 * before first, and those whose sk_flags meet flags.  The compiled walk
 * skips the same ones, so that it costs what the server's does on the
 * pages where the server knows them to hold; and it returns what the
 * server returns by construction, whatever the reason the server had.
 */
typedef struct BtjitKeySkip
{
	int			first;
	uint32		flags;
} BtjitKeySkip;

/*
 * The skip for the page being read, from the BTReadPageState whose
 * continuescan the dispatcher passed (runtime/dispatch.c always passes a
 * pstate's, or verify's copy of one).  False declines the call: 18's
 * forcenonrequired, which only scans with array keys set, and those never
 * reach compiled code.
 */
static inline __attribute__((always_inline)) bool
btjit_page_skip(bool *continuescan, ScanDirection dir, BtjitKeySkip *skip)
{
#if defined(BTJIT_READPAGE_SKIPS_PRECHECKED) || defined(BTJIT_READPAGE_SKIPS_STARTIKEY)
	const BTReadPageState *pstate = BTJIT_READPAGE_STATE_OF(continuescan);
#endif

	skip->first = 0;
	skip->flags = 0;
#if defined(BTJIT_READPAGE_SKIPS_PRECHECKED)
	/* SK_BT_REQBKWD is SK_BT_REQFWD's next bit */
	if (pstate->prechecked)
		skip->flags = pstate->firstmatch ? (SK_BT_REQFWD | SK_BT_REQBKWD) :
			SK_BT_REQFWD << (ScanDirectionIsBackward(dir) ? 1 : 0);
#elif defined(BTJIT_READPAGE_SKIPS_STARTIKEY)
	if (pstate->forcenonrequired)
		return false;
	skip->first = pstate->startikey;
#else
	(void) continuescan;
	(void) dir;
#endif
	return true;
}

/*
 * What _bt_checkkeys returns (1 or 0) with *continuescan set as it sets
 * it, or -1 to decline with *continuescan untouched.
 *
 * The keys are walked column by column, the tuple's attributes found as
 * index_getattr finds them (fixed offsets up to the first variable-length
 * column): the loop over the columns unrolls, so each column's tests are
 * specialised to its kind.  That takes the keys in _bt_checkkeys' order
 * because _bt_preprocess_keys leaves them ordered by attribute; keys out
 * of that order (none the server makes) are declined.
 */
static inline __attribute__((always_inline)) int
btjit_checkkeys(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
				ScanDirection dir, bool *continuescan, BtjitKeySkip skip,
				bool general)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	ScanKey		sk = so->keyData + skip.first;
	ScanKey		end = so->keyData + so->numberOfKeys;
	const char *data;
	uint32		off = 0;

	if (tuple->t_info & INDEX_NULL_MASK)
		return -1;
	data = (const char *) tuple + MAXALIGN(sizeof(IndexTupleData));

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		const char *ptr;

		if (i >= SHAPE.nkeys || sk >= end)
			break;
		if (sk->sk_attno != i + 1)
		{
			/* no key on this column */
			if (i + 1 < SHAPE.nkeys && i + 1 < tupnatts)
			{
				off = btjit_att_start(col, data, off);
				off = btjit_att_end(col, data + off, off);
			}
			continue;
		}
		/* a truncated attribute of a high key passes its keys */
		if (i >= tupnatts)
		{
			while (sk < end && sk->sk_attno == i + 1)
				sk++;
			continue;
		}
		off = btjit_att_start(col, data, off);
		ptr = data + off;
		do
		{
			int			r;

			if (sk->sk_flags & (SK_ROW_HEADER | SK_ISNULL))
				return -1;
			if (!(sk->sk_flags & skip.flags))
			{
				r = btjit_check_column(i, sk, ptr, general);
				if (r < 0)
					return r;
				if (r == 0)
				{
					*continuescan = btjit_key_continues(sk, dir);
					return 0;
				}
			}
			sk++;
		} while (sk < end && sk->sk_attno == i + 1);
		if (i + 1 < SHAPE.nkeys)
			off = btjit_att_end(col, ptr, off);
	}
	/* a key left over is out of order, or beyond the key columns */
	if (sk < end)
		return -1;
	*continuescan = true;
	return 1;
}

/*
 * What the fast instance left to the general instance (result -2: a key it
 * does not compare inline), which starts over; the server takes what that
 * declines.  Out of line, and with the entry's own arguments, so that the
 * entry reaches it by a jump and its fast path needs no frame (and it
 * works the page's skip out again rather than take a seventh argument).
 */
static __attribute__((noinline)) bool
btjit_checkkeys_slow(IndexScanDesc scan, IndexTuple tuple, int tupnatts,
					 ScanDirection dir, bool *continuescan, uint64 *counters)
{
	BtjitKeySkip skip;
	int			result = -1;

	if (btjit_page_skip(continuescan, dir, &skip))
		result = btjit_checkkeys(scan, tuple, tupnatts, dir, continuescan,
								 skip, true);
	if (result >= 0)
	{
		counters[0]++;
		return result != 0;
	}
	return btjit_check_declined(scan, tuple, tupnatts, (int) dir,
								continuescan, counters);
}

#endif							/* BTJIT_CHECKS_COMPILED */

/*
 * Fused entry for the redirected _bt_checkkeys and the module's leaf read
 * (BtjitCheckEntryFn): counts in counters[0], hands declined calls to
 * btjit_check_declined.
 */
bool
btjit_check_entry(void *scan, void *tuple, int tupnatts, int dir,
				  bool *continuescan, uint64 *counters)
{
#ifdef BTJIT_CHECKS_COMPILED
	BtjitKeySkip skip;
	int			result = -1;

	if (btjit_page_skip(continuescan, (ScanDirection) dir, &skip))
	{
		/*
		 * Two copies of the walk: without the flag test for the pages the
		 * server reads without skipping by flags (every page on 15 and 18;
		 * a scan's first page, and any page not prechecked, on 17), so
		 * that a LIMIT 1 probe does not pay a test per key for nothing.
		 */
		if (skip.flags == 0)
		{
			BtjitKeySkip by_position = {.first = skip.first,.flags = 0};

			result = btjit_checkkeys((IndexScanDesc) scan, (IndexTuple) tuple,
									 tupnatts, (ScanDirection) dir,
									 continuescan, by_position, false);
		}
		else
			result = btjit_checkkeys((IndexScanDesc) scan, (IndexTuple) tuple,
									 tupnatts, (ScanDirection) dir,
									 continuescan, skip, false);
	}
	if (likely(result >= 0))
	{
		counters[0]++;
		return result != 0;
	}
	if (result == -2)
		return btjit_checkkeys_slow((IndexScanDesc) scan, (IndexTuple) tuple,
									tupnatts, (ScanDirection) dir,
									continuescan, counters);
	return btjit_check_declined(scan, tuple, tupnatts, dir, continuescan,
								counters);
#else
	return btjit_check_declined(scan, tuple, tupnatts, dir, continuescan,
								counters);
#endif
}

/*
 * The build comparator's comparison of two index tuples of the index
 * being built on their key columns from firstcol on, as the server's sort
 * compares them (tuplesort's comparetup for index tuples).
 *
 * Per column: NULLs first or last as the column says and never reversed,
 * then the sign of the two values' order, reversed for DESC: what
 * ApplySortComparator gives.  The inline comparisons are the opclass's
 * order (the same code the search compares a scankey with); any other
 * column, a collation the inline code does not cover, or a value stored
 * compressed calls the column's sort support comparator, the leading
 * column's full comparator when its keys are abbreviated.
 */

/* Sign of the order of two stored values of an inline kind, if it applies. */
static BTJIT_INLINE_AFTER_BIND bool
btjit_stored_sign(const BtjitColumnShape *col, const char *p1, const char *p2,
				  int *sign)
{
	if (col->kind == BTJIT_KIND_CALL)
		return false;
	else if (BTJIT_KIND_IS_INT(col->kind))
	{
		int64		v1 = btjit_stored_value(p1, col->kind);
		int64		v2 = btjit_stored_value(p2, col->kind);

		*sign = (v1 > v2) - (v1 < v2);
	}
	else if (col->kind == BTJIT_KIND_FLOAT4)
	{
		float4		f1,
					f2;

		memcpy(&f1, p1, sizeof(f1));
		memcpy(&f2, p2, sizeof(f2));
		*sign = btjit_float_cmp((double) f1, (double) f2);
	}
	else if (col->kind == BTJIT_KIND_FLOAT8)
	{
		float8		f1,
					f2;

		memcpy(&f1, p1, sizeof(f1));
		memcpy(&f2, p2, sizeof(f2));
		*sign = btjit_float_cmp(f1, f2);
	}
	else if (col->kind == BTJIT_KIND_UUID)
	{
		uint64		h1 = btjit_load_be64(p1);
		uint64		h2 = btjit_load_be64(p2);

		if (h1 == h2)
		{
			h1 = btjit_load_be64(p1 + 8);
			h2 = btjit_load_be64(p2 + 8);
		}
		*sign = (h1 > h2) - (h1 < h2);
	}
	else if (col->kind == BTJIT_KIND_NUMERIC)
	{
		const char *d1,
				   *d2;
		int32		l1,
					l2;
		BtjitArg	x,
					y;

		if (unlikely(!btjit_varlena_plain(p1, &d1, &l1) ||
					 !btjit_varlena_plain(p2, &d2, &l2)))
			return false;
		btjit_numeric_decode(d1, l1, &x);
		btjit_numeric_decode(d2, l2, &y);
		*sign = btjit_numeric_cmp(&x, &y);
	}
	else if (col->kind == BTJIT_KIND_CSTRING)
	{
		int32		l1 = col->attlen > 0 ? btjit_strnlen(p1, col->attlen) : (int32) strlen(p1);
		int32		l2 = col->attlen > 0 ? btjit_strnlen(p2, col->attlen) : (int32) strlen(p2);

		*sign = btjit_bytes_cmp(p1, l1, p2, l2);
	}
	else if (BTJIT_KIND_IS_BYTES(col->kind))
	{
		const char *d1,
				   *d2;
		int32		l1,
					l2;

		if (unlikely(!btjit_varlena_plain(p1, &d1, &l1) ||
					 !btjit_varlena_plain(p2, &d2, &l2)))
			return false;
		if (col->kind == BTJIT_KIND_BPCHAR)
		{
			l1 = btjit_bpchar_truelen(d1, l1);
			l2 = btjit_bpchar_truelen(d2, l2);
		}
		*sign = btjit_bytes_cmp(d1, l1, d2, l2);
	}
	else
		return false;
	return true;
}

/*
 * Sign of the order of two stored values by column i's sort support, before
 * DESC (the caller applies the shape's): the full comparator of the leading
 * column when the sort abbreviates it.
 */
static __attribute__((noinline)) int
btjit_build_call(int i, SortSupport ssup, const char *p1, const char *p2)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	Datum		d1 = fetch_att(p1, col->attbyval, col->attlen);
	Datum		d2 = fetch_att(p2, col->attbyval, col->attlen);
	int			c;

	if (i == 0 && ssup->abbrev_converter != NULL)
		c = ssup->abbrev_full_comparator(d1, d2, ssup);
	else
		c = ssup[i].comparator(d1, d2, &ssup[i]);
	return (c > 0) - (c < 0);
}

/* Sign of column i's order for two present values, DESC applied. */
static inline __attribute__((always_inline)) int
btjit_build_column(int i, SortSupport ssup, const char *p1, const char *p2)
{
	const BtjitColumnShape *col = &SHAPE.cols[i];
	int			c;

	if (!btjit_collation_ok(col, ssup[i].ssup_collation) ||
		!btjit_stored_sign(col, p1, p2, &c))
		c = btjit_build_call(i, ssup, p1, p2);
	return btjit_col_desc(i) ? -c : c;
}

/* Both tuples without NULLs: key columns at the same offsets up to the
 * first variable-length one. */
static inline __attribute__((always_inline)) int32
btjit_build_compare_plain(IndexTuple t1, IndexTuple t2, SortSupport ssup,
						  int32 firstcol)
{
	const char *data1 = (const char *) t1 + MAXALIGN(sizeof(IndexTupleData));
	const char *data2 = (const char *) t2 + MAXALIGN(sizeof(IndexTupleData));
	uint32		off1 = 0,
				off2 = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		const char *p1;
		const char *p2;

		if (i >= SHAPE.nkeys)
			break;
		off1 = btjit_att_start(col, data1, off1);
		off2 = btjit_att_start(col, data2, off2);
		p1 = data1 + off1;
		p2 = data2 + off2;
		if (i >= firstcol)
		{
			if (BTJIT_KIND_IS_INT(col->kind))
			{
				int64		v1 = btjit_stored_value(p1, col->kind);
				int64		v2 = btjit_stored_value(p2, col->kind);

				if (v1 != v2)
					return (btjit_col_desc(i) ? v1 > v2 : v1 < v2) ? -1 : 1;
			}
			else
			{
				int			c = btjit_build_column(i, ssup, p1, p2);

				if (c != 0)
					return c;
			}
		}
		if (i + 1 < SHAPE.nkeys)
		{
			off1 = btjit_att_end(col, p1, off1);
			off2 = btjit_att_end(col, p2, off2);
		}
	}
	return 0;
}

/* Either tuple with NULLs: each walks its own null bitmap and offsets. */
static __attribute__((noinline)) int32
btjit_build_compare_nulls(IndexTuple t1, IndexTuple t2, SortSupport ssup,
						  int32 firstcol)
{
	bool		hasnulls1 = (t1->t_info & INDEX_NULL_MASK) != 0;
	bool		hasnulls2 = (t2->t_info & INDEX_NULL_MASK) != 0;
	const uint8 *bitmap1 = (const uint8 *) ((const char *) t1 + sizeof(IndexTupleData));
	const uint8 *bitmap2 = (const uint8 *) ((const char *) t2 + sizeof(IndexTupleData));
	const char *data1 = (const char *) t1 + IndexInfoFindDataOffset(t1->t_info);
	const char *data2 = (const char *) t2 + IndexInfoFindDataOffset(t2->t_info);
	uint32		off1 = 0,
				off2 = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		const char *p1 = NULL;
		const char *p2 = NULL;
		bool		null1;
		bool		null2;

		if (i >= SHAPE.nkeys)
			break;
		null1 = hasnulls1 && !(bitmap1[i >> 3] & (1 << (i & 7)));
		null2 = hasnulls2 && !(bitmap2[i >> 3] & (1 << (i & 7)));
		if (!null1)
		{
			off1 = btjit_att_start(col, data1, off1);
			p1 = data1 + off1;
		}
		if (!null2)
		{
			off2 = btjit_att_start(col, data2, off2);
			p2 = data2 + off2;
		}
		if (i >= firstcol)
		{
			int			c;

			if (null1 || null2)
				c = btjit_null_result(col, null1, null2);
			else
				c = btjit_build_column(i, ssup, p1, p2);
			if (c != 0)
				return c;
		}
		if (i + 1 < SHAPE.nkeys)
		{
			if (!null1)
				off1 = btjit_att_end(col, p1, off1);
			if (!null2)
				off2 = btjit_att_end(col, p2, off2);
		}
	}
	return 0;
}

/*
 * The build comparator (BtjitBuildComparetupFn), the sort's comparetup and
 * from 17 its comparetup_tiebreak too (which the sort calls with the
 * leading keys found equal: comparing them again gives 0 and goes on).
 *
 * The leading key is compared on the SortTuple's datum1, as the server
 * does: an integer kind's value inline (the sort never abbreviates those,
 * and datum1 is then the value as the opclass's proc reads it), any other
 * kind through the sort's SortSupport, which may compare abbreviations;
 * those equal, the full value is compared from the tuples.  Then the other
 * key columns from the tuples; with every key equal, a unique index's sort
 * hands the pair to the module (the server's duplicate check), any other
 * sort orders it by heap TID.
 */
/*
 * What btjit_build_order returns for two tuples of a unique index's sort
 * whose keys are all equal: the server's comparator decides those (its
 * duplicate check), never the compiled code.
 */
#define BTJIT_BUILD_EQUAL_UNIQUE INT_MIN

static __attribute__((noinline)) int
btjit_build_order_general(const BtjitSortTuple *x, const BtjitSortTuple *y,
						  void *state)
{
	SortSupport ssup = BTJIT_SORT_KEYS(state);
	const BtjitColumnShape *col0 = &SHAPE.cols[0];
	IndexTuple	t1;
	IndexTuple	t2;
	int32		firstcol = 1;
	int			c;

	if (BTJIT_KIND_IS_INT(col0->kind) && likely(ssup->abbrev_converter == NULL))
	{
		if (x->isnull1 || y->isnull1)
			c = btjit_null_result(col0, x->isnull1, y->isnull1);
		else
		{
			int64		v1 = btjit_arg_value(x->datum1, col0->kind);
			int64		v2 = btjit_arg_value(y->datum1, col0->kind);

			c = (v1 > v2) - (v1 < v2);
			if (btjit_col_desc(0))
				c = -c;
		}
	}
	else
	{
		c = ApplySortComparator(x->datum1, x->isnull1,
								y->datum1, y->isnull1, ssup);
		if (ssup->abbrev_converter != NULL)
			firstcol = 0;
	}
	if (c != 0)
		return c > 0 ? 1 : -1;

	t1 = (IndexTuple) x->tuple;
	t2 = (IndexTuple) y->tuple;
	if (SHAPE.nkeys > 1 || firstcol == 0)
	{
		if (((t1->t_info | t2->t_info) & INDEX_NULL_MASK) == 0)
			c = btjit_build_compare_plain(t1, t2, ssup, firstcol);
		else
			c = btjit_build_compare_nulls(t1, t2, ssup, firstcol);
		if (c != 0)
			return c;
	}
	if (BTJIT_SORT_UNIQUE(state))
		return BTJIT_BUILD_EQUAL_UNIQUE;
	/* the heap TID, the last key of every B-tree tuple */
	return btjit_tid_compare(&t1->t_tid, &t2->t_tid);
}

/*
 * The order of two SortTuples of a build's sort (-1, 0, 1), or
 * BTJIT_BUILD_EQUAL_UNIQUE.  The common case first, with nothing called, so
 * that it needs no saved registers: an integer leading key, no NULLs.
 */
static inline __attribute__((always_inline)) int
btjit_build_order(const BtjitSortTuple *x, const BtjitSortTuple *y,
				  void *state)
{
	const BtjitColumnShape *col0 = &SHAPE.cols[0];

	(*btjit_build_compares)++;
	if (BTJIT_KIND_IS_INT(col0->kind) &&
		likely(!x->isnull1 && !y->isnull1 &&
			   BTJIT_SORT_KEYS(state)->abbrev_converter == NULL))
	{
		int64		v1 = btjit_arg_value(x->datum1, col0->kind);
		int64		v2 = btjit_arg_value(y->datum1, col0->kind);
		IndexTuple	t1;
		IndexTuple	t2;

		if (v1 != v2)
			return (btjit_col_desc(0) ? v1 > v2 : v1 < v2) ? -1 : 1;
		t1 = (IndexTuple) x->tuple;
		t2 = (IndexTuple) y->tuple;
		if (likely(((t1->t_info | t2->t_info) & INDEX_NULL_MASK) == 0))
		{
			int			c = 0;

			if (SHAPE.nkeys > 1)
				c = btjit_build_compare_plain(t1, t2, BTJIT_SORT_KEYS(state), 1);
			if (c != 0)
				return c;
			if (BTJIT_SORT_UNIQUE(state))
				return BTJIT_BUILD_EQUAL_UNIQUE;
			return btjit_tid_compare(&t1->t_tid, &t2->t_tid);
		}
	}
	return btjit_build_order_general(x, y, state);
}

int
btjit_build_comparetup(const void *a, const void *b, void *state)
{
	int			c = btjit_build_order((const BtjitSortTuple *) a,
									  (const BtjitSortTuple *) b, state);

	if (unlikely(c == BTJIT_BUILD_EQUAL_UNIQUE))
		return btjit_build_equal_keys(a, b, state);
	return c;
}

/*
 * The build's presort (BtjitBuildPresortFn): sort the n SortTuples at
 * memtuples in the order of btjit_build_order before the server's sort
 * runs, which then only finds them sorted (its quicksort checks that
 * first).  A quicksort with the comparison inline: the pivot the median of
 * three (of three medians of three on large ranges), the range partitioned
 * with the pivot's equals on both sides, the smaller side recursed into and
 * the larger looped on, short ranges by insertion.  It gives up, leaving a
 * permutation for the server's sort to order, when the recursion runs too
 * deep (an input that defeats the pivot choice) or two tuples of a unique
 * sort have equal keys (the server's sort must find and report those).
 * Returns whether it sorted them all.
 */
typedef struct BtjitPresort
{
	void	   *state;
	SortSupport ssup;
	bool		int_leading;	/* an integer leading key, not abbreviated */
	bool		unique;
	bool		gave_up;
} BtjitPresort;

#define BTJIT_PRESORT_SMALL 12

/*
 * A partition of more tuples than this touches more index tuples than the
 * caches hold: each comparison whose leading keys tie reads both tuples,
 * and the tuples lie in the heap's order, so its scan prefetches the tuple
 * BTJIT_PRESORT_AHEAD places ahead of each side.  Smaller partitions find
 * their tuples cached by the partitioning above them.
 */
#define BTJIT_PRESORT_PREFETCH_MIN 16384
#define BTJIT_PRESORT_AHEAD 8

/*
 * btjit_build_order with what is fixed for the whole sort read once
 * (btjit_build_presort), recording a pair the presort must not decide.  It
 * does not count: the presort counts as one.
 */
static BTJIT_INLINE_AFTER_BIND int
btjit_presort_cmp(BtjitPresort *p, const BtjitSortTuple *x,
				  const BtjitSortTuple *y)
{
	int			c;

	if (BTJIT_KIND_IS_INT(SHAPE.cols[0].kind) && p->int_leading &&
		likely(!x->isnull1 && !y->isnull1))
	{
		int64		v1 = btjit_arg_value(x->datum1, SHAPE.cols[0].kind);
		int64		v2 = btjit_arg_value(y->datum1, SHAPE.cols[0].kind);
		IndexTuple	t1;
		IndexTuple	t2;

		if (v1 != v2)
			return (btjit_col_desc(0) ? v1 > v2 : v1 < v2) ? -1 : 1;
		t1 = (IndexTuple) x->tuple;
		t2 = (IndexTuple) y->tuple;
		if (likely(((t1->t_info | t2->t_info) & INDEX_NULL_MASK) == 0))
		{
			c = 0;
			if (SHAPE.nkeys > 1)
				c = btjit_build_compare_plain(t1, t2, p->ssup, 1);
			if (c != 0)
				return c;
			if (!p->unique)
				return btjit_tid_compare(&t1->t_tid, &t2->t_tid);
			c = BTJIT_BUILD_EQUAL_UNIQUE;
		}
		else
			c = btjit_build_order_general(x, y, p->state);
	}
	else
		c = btjit_build_order_general(x, y, p->state);
	if (unlikely(c == BTJIT_BUILD_EQUAL_UNIQUE))
	{
		p->gave_up = true;
		return 0;
	}
	return c;
}

static inline __attribute__((always_inline)) void
btjit_presort_swap(BtjitSortTuple *x, BtjitSortTuple *y)
{
	BtjitSortTuple t = *x;

	*x = *y;
	*y = t;
}

static inline __attribute__((always_inline)) size_t
btjit_presort_med3(BtjitPresort *p, BtjitSortTuple *a, size_t i, size_t j,
				   size_t k)
{
	if (btjit_presort_cmp(p, &a[i], &a[j]) < 0)
	{
		if (btjit_presort_cmp(p, &a[j], &a[k]) < 0)
			return j;
		return btjit_presort_cmp(p, &a[i], &a[k]) < 0 ? k : i;
	}
	if (btjit_presort_cmp(p, &a[j], &a[k]) > 0)
		return j;
	return btjit_presort_cmp(p, &a[i], &a[k]) > 0 ? k : i;
}

static void
btjit_presort_insertion(BtjitPresort *p, BtjitSortTuple *a, size_t n)
{
	for (size_t i = 1; i < n && !p->gave_up; i++)
	{
		BtjitSortTuple t = a[i];
		size_t		j = i;

		while (j > 0 && btjit_presort_cmp(p, &a[j - 1], &t) > 0)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = t;
	}
}

/*
 * Partition a[0 .. n) around the pivot a[0], stopping on equal keys on
 * both sides; returns the pivot's place.  With prefetch, each scan asks
 * for the tuple BTJIT_PRESORT_AHEAD places ahead of it, within a[0 .. n).
 */
static inline __attribute__((always_inline)) size_t
btjit_presort_partition(BtjitPresort *p, BtjitSortTuple *a, size_t n,
						bool prefetch)
{
	size_t		i = 0;
	size_t		j = n;

	for (;;)
	{
		do
		{
			if (prefetch)
				__builtin_prefetch(a[Min(i + 1 + BTJIT_PRESORT_AHEAD, n - 1)].tuple);
		} while (btjit_presort_cmp(p, &a[++i], &a[0]) < 0 && i < n - 1);
		do
		{
			if (prefetch)
				__builtin_prefetch(a[j > BTJIT_PRESORT_AHEAD ?
									 j - 1 - BTJIT_PRESORT_AHEAD : 0].tuple);
		} while (btjit_presort_cmp(p, &a[0], &a[--j]) < 0 && j > 0);
		if (i >= j)
			return j;
		btjit_presort_swap(&a[i], &a[j]);
	}
}

static void
btjit_presort_range(BtjitPresort *p, BtjitSortTuple *a, size_t n, int depth)
{
	while (n > BTJIT_PRESORT_SMALL)
	{
		size_t		m;
		size_t		j;

		if (depth-- == 0 || p->gave_up)
		{
			p->gave_up = true;
			return;
		}
		CHECK_FOR_INTERRUPTS();

		if (n > 1000)
		{
			size_t		d = n / 8;

			m = btjit_presort_med3(p,
								   a, btjit_presort_med3(p, a, 0, d, 2 * d),
								   btjit_presort_med3(p, a, n / 2 - d, n / 2, n / 2 + d),
								   btjit_presort_med3(p, a, n - 1 - 2 * d, n - 1 - d, n - 1));
		}
		else
			m = btjit_presort_med3(p, a, 0, n / 2, n - 1);
		btjit_presort_swap(&a[0], &a[m]);

		/* one instance of the partitioning prefetches, one does not */
		if (n > BTJIT_PRESORT_PREFETCH_MIN)
			j = btjit_presort_partition(p, a, n, true);
		else
			j = btjit_presort_partition(p, a, n, false);
		btjit_presort_swap(&a[0], &a[j]);

		/* [0, j) <= pivot at j <= [j + 1, n) */
		if (j < n - 1 - j)
		{
			btjit_presort_range(p, a, j, depth);
			a += j + 1;
			n -= j + 1;
		}
		else
		{
			btjit_presort_range(p, a + j + 1, n - 1 - j, depth);
			n = j;
		}
	}
	btjit_presort_insertion(p, a, n);
}

bool
btjit_build_presort(void *memtuples, int32 n, void *state)
{
	BtjitPresort p = {.state = state,.gave_up = false};
	int			depth = 0;

	p.ssup = BTJIT_SORT_KEYS(state);
	p.int_leading = p.ssup->abbrev_converter == NULL;
	p.unique = BTJIT_SORT_UNIQUE(state);

	/*
	 * Only where it pays: an integer leading key the server's quicksort
	 * compares inline but whose ties it hands the comparator, one call a
	 * pair.  A single key column leaves it ties of the heap TID alone, and
	 * any other leading key (an abbreviation, compared inline by the
	 * server's quicksort) would cost a call a pair here.
	 */
	if (!BTJIT_KIND_IS_INT(SHAPE.cols[0].kind) || SHAPE.nkeys == 1 ||
		!p.int_leading)
		return false;

	/* input already in order: the server's sort finds it so as cheaply */
	for (int32 i = 1; i <= n; i++)
	{
		if (i == n)
			return !p.gave_up;
		if (btjit_presort_cmp(&p, &((BtjitSortTuple *) memtuples)[i - 1],
							  &((BtjitSortTuple *) memtuples)[i]) > 0 ||
			p.gave_up)
			break;
	}
	if (p.gave_up)
		return false;

	for (size_t k = (size_t) n; k > 1; k >>= 1)
		depth += 2;
	btjit_presort_range(&p, (BtjitSortTuple *) memtuples, (size_t) n,
						depth + 8);
	return !p.gave_up;
}

/*
 * ---- Key images: _bt_keep_natts_fast ----
 *
 * _bt_keep_natts_fast(rel, lastleft, firstright) returns one more than the
 * number of leading key attributes the two tuples hold as equal images
 * (datum_image_eq: the same bytes, a varlena's once detoasted).  The
 * build's deduplication calls it for every tuple it loads; an insertion's
 * deduplication, suffix truncation and the choice of a split point call it
 * too.  The compiled version walks both tuples with the shape's offsets and
 * compares bytes.  It hands the server's function a tuple with NULLs, a
 * pivot tuple (whose truncated attributes the server's loop reads as it
 * reads them) and a compressed or external value, whose image is the
 * detoasted one.
 */
static inline __attribute__((always_inline)) bool
btjit_tuple_is_pivot(IndexTuple itup)
{
	return (itup->t_info & INDEX_ALT_TID_MASK) != 0 &&
		(ItemPointerGetOffsetNumberNoCheck(&itup->t_tid) & BT_IS_POSTING) == 0;
}

/* Image equality of two fixed-length values of attlen bytes. */
static inline __attribute__((always_inline)) bool
btjit_fixed_image_eq(const char *p1, const char *p2, int attlen)
{
	uint64		v1 = 0;
	uint64		v2 = 0;

	if (attlen != 1 && attlen != 2 && attlen != 4 && attlen != 8)
		return btjit_bytes_cmp(p1, attlen, p2, attlen) == 0;
	memcpy(&v1, p1, attlen);
	memcpy(&v2, p2, attlen);
	return v1 == v2;
}

int32
btjit_keep_natts_entry(void *rel, void *lastleft, void *firstright,
					   uint64 *counters)
{
	IndexTuple	t1 = (IndexTuple) lastleft;
	IndexTuple	t2 = (IndexTuple) firstright;
	const char *data1 = (const char *) t1 + MAXALIGN(sizeof(IndexTupleData));
	const char *data2 = (const char *) t2 + MAXALIGN(sizeof(IndexTupleData));
	uint32		off1 = 0,
				off2 = 0;
	int32		keep = 1;

	if (unlikely(((t1->t_info | t2->t_info) & INDEX_NULL_MASK) != 0 ||
				 btjit_tuple_is_pivot(t1) || btjit_tuple_is_pivot(t2)))
		return btjit_keep_natts_declined(rel, lastleft, firstright, counters);

#pragma clang loop unroll(full)
	for (int i = 0; i < BTJIT_MAX_KEYS; i++)
	{
		const BtjitColumnShape *col = &SHAPE.cols[i];
		const char *p1;
		const char *p2;

		if (i >= SHAPE.nkeys)
			break;
		off1 = btjit_att_start(col, data1, off1);
		off2 = btjit_att_start(col, data2, off2);
		p1 = data1 + off1;
		p2 = data2 + off2;
		if (col->attlen > 0)
		{
			if (!btjit_fixed_image_eq(p1, p2, col->attlen))
				break;
		}
		else if (col->attlen == -1)
		{
			const char *d1;
			const char *d2;
			int32		len1;
			int32		len2;

			if (!btjit_varlena_plain(p1, &d1, &len1) ||
				!btjit_varlena_plain(p2, &d2, &len2))
				return btjit_keep_natts_declined(rel, lastleft, firstright,
												 counters);
			if (len1 != len2 || btjit_bytes_cmp(d1, len1, d2, len2) != 0)
				break;
		}
		else
			return btjit_keep_natts_declined(rel, lastleft, firstright,
											 counters);
		keep++;
		if (i + 1 < SHAPE.nkeys)
		{
			off1 = btjit_att_end(col, p1, off1);
			off2 = btjit_att_end(col, p2, off2);
		}
	}
	counters[0]++;
	return keep;
}

/* The functions the specialiser inlines once the shape is bound. */
void	   *const btjit_inline_after_bind[] = {
	(void *) btjit_decode_arg,
	(void *) btjit_exact_attr,
	(void *) btjit_check_column,
	(void *) btjit_stored_sign,
	(void *) btjit_presort_cmp,
};
