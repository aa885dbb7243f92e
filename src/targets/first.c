/*-------------------------------------------------------------------------
 *
 * first.c
 *	  The redirected _bt_first (PostgreSQL 15, 17 and 18): the start of a
 *	  simple scan of an index with compiled code, from its scan keys to the
 *	  first item, on the module's descent and leaf read, with no call
 *	  through a redirect on the way.
 *
 * For a scan with one or more keys and nothing else (no row, NULL or
 * IS [NOT] NULL key, not parallel, on 18 no skip array), each primitive
 * scan of an array scan included (15: its keys hold the arrays' current
 * elements; 17, 18: the server preprocesses the arrays, the module starts
 * them as _bt_first does) the module does what the server's _bt_first
 * does, in the same order: the key preprocessing (the module's where the
 * outcome depends on the keys' kinds, not their values: per column one
 * key or a lower and an upper bound; else the server's
 * _bt_preprocess_keys, which compares the values of keys on one column),
 * the choice of the keys the scan starts from (each column's = key, else
 * its bound on the side the scan starts from, column by column while they
 * are =), the insertion scan key built from
 * them, the index scan counted, the descent (targets/descent.c, with no
 * stack: the server's frees it unread), the predicate lock of the leaf
 * (18: the leaf read's), the leaf's page search (compiled, called
 * directly) and its leaf read (targets/readpage.c).  A leaf with nothing
 * to return goes on with the server's _bt_next, which then does exactly
 * what _bt_first's own call of _bt_steppage would (18: _bt_readfirstpage's;
 * src/README, "The scan start").
 *
 * Everything else is the server's _bt_first, decided before anything is
 * done but the key preprocessing, which the server's function then repeats
 * (15) or keeps (17, 18) with the same result: no keys (_bt_endpoint), a
 * start the server takes from an implied NOT NULL key, keys the
 * preprocessing found contradictory, a cross-type key whose comparison
 * procedure is missing (the server raises the error), on 18 keys whose
 * preprocessing adds skip arrays (a column with no = key before a column
 * with a key), and every scan while the module is off.
 *
 * verify mode: the module's key preprocessing must be the server's, byte
 * for byte; the server's _bt_first, the module and the server's again
 * start the scan from the same state (each start's pin released and its
 * position undone before the next); where the two server runs agree (no
 * other backend changed the pages between them), the module's result,
 * returned TID and tuple and every byte of its scan position (and of the
 * saved tuples of an index-only scan) must be theirs.  The last start
 * stands (see "verify mode" below).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "targets/targets.h"

#ifndef BTJIT_SCAN_START
const BtjitTargetImpl btjit_target_first = {0};
#else

typedef bool (*BtjitFirstFn) (IndexScanDesc scan, ScanDirection dir);

#define BTJIT_STOCK_FIRST \
	((BtjitFirstFn) btjit_module.stock[BTJIT_TARGET_FIRST])

static bool btjit_dispatch_first(IndexScanDesc scan, ScanDirection dir);

const BtjitTargetImpl btjit_target_first = {
	.dispatcher = (void *) btjit_dispatch_first,
};

/* What the module's start of a scan came to. */
typedef enum FirstOutcome
{
	FIRST_SERVER,				/* not a start the module makes: the server's */
	FIRST_FOUND,				/* positioned on the first item */
	FIRST_NONE					/* nothing to return */
} FirstOutcome;

/* The keys a scan starts from, and how it positions itself with them. */
typedef struct FirstStart
{
	ScanKey		keys[INDEX_MAX_KEYS];
	int			nkeys;
	bool		nextkey;		/* start after the items equal to the keys */
	bool		backward;		/* start at the item before the one found */
} FirstStart;

/*
 * Key flags that make a scan one the module does not start.  An array
 * scan's (IN, = ANY) primitive scans are the module's: 15 starts each with
 * the arrays' current elements as ordinary keys, in a copy of the scan's
 * keys (so->arrayKeyData, which _bt_preprocess_keys reads instead); from
 * 17 on _bt_first sets the arrays up and starts them, and so does the
 * module's start (first_run).
 */
#define FIRST_KEYS_LEFT_TO_SERVER \
	(SK_ISNULL | SK_ROW_HEADER | SK_SEARCHNULL | SK_SEARCHNOTNULL)

#ifdef BTJIT_SCAN_START_SKIP_ARRAYS
/*
 * Whether 18's preprocessing adds skip arrays to these keys: one for each
 * column without an = key that comes before a column with a key (the keys
 * are in column order).  Such a scan is the server's, decided before any
 * preprocessing, so that its keys are preprocessed once, by the server.
 */
static inline bool
first_skips_columns(IndexScanDesc scan)
{
	AttrNumber	equal_through = 0;	/* columns 1 .. this have an = key */

	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		cur = &scan->keyData[i];

		if (cur->sk_attno > equal_through + 1)
			return true;
		if (cur->sk_attno == equal_through + 1 &&
			cur->sk_strategy == BTEqualStrategyNumber)
			equal_through++;
	}
	return false;
}
#endif

/* Whether the scan has array keys (17, 18: the module's start takes them) */
static inline bool
first_has_arrays(IndexScanDesc scan)
{
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	for (int i = 0; i < scan->numberOfKeys; i++)
		if (scan->keyData[i].sk_flags & SK_SEARCHARRAY)
			return true;
#endif
	return false;
}

static inline bool
first_simple(IndexScanDesc scan)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (scan->parallel_scan != NULL || scan->numberOfKeys < 1)
		return false;
#if PG_VERSION_NUM < 170000
	/* an array with no element but NULLs: btgettuple never starts it */
	if (so->numArrayKeys < 0)
		return false;
#endif
	for (int i = 0; i < scan->numberOfKeys; i++)
		if (scan->keyData[i].sk_flags & FIRST_KEYS_LEFT_TO_SERVER)
			return false;
#ifdef BTJIT_SCAN_START_SKIP_ARRAYS
	if (first_skips_columns(scan))
		return false;
#endif
	return true;
}

/*
 * The keys the scan starts from, out of the preprocessed keys (ordered by
 * column): per column from the first, its = key, else the first of its
 * bounds on the side the scan starts from (>, >= forward; <, <=
 * backward); the columns go on while each has a chosen key and the one
 * before it was =, >= or <=.  The last chosen key that is not = decides
 * where the scan starts (all =: the direction does).  false when a column
 * without a usable bound has one on the other side and keeps its NULLs at
 * the end the scan starts from: the server then starts from an implied NOT
 * NULL key, which the module leaves to it.
 */
static bool
first_choose(BTScanOpaque so, ScanDirection dir, FirstStart *start)
{
	ScanKey		keys = so->keyData;
	int			n = so->numberOfKeys;
	int			i = 0;
	StrategyNumber strat_total = BTEqualStrategyNumber;
	bool		forward = ScanDirectionIsForward(dir);

	start->nkeys = 0;
	for (AttrNumber attno = 1; i < n && keys[i].sk_attno == attno; attno++)
	{
		ScanKey		chosen = NULL;
		ScanKey		other_side = NULL;

		for (; i < n && keys[i].sk_attno == attno; i++)
		{
			ScanKey		cur = &keys[i];

#ifdef BTJIT_SCAN_START_SKIP_ARRAYS

			/*
			 * 18 starts from required keys only, the first of a column's on
			 * the scan's side (preprocessing leaves at most one): a key that
			 * is not required is the server's to place.
			 */
			if (!(cur->sk_flags & (SK_BT_REQFWD | SK_BT_REQBKWD)))
				return false;
#endif
			switch (cur->sk_strategy)
			{
				case BTEqualStrategyNumber:
					chosen = cur;
					break;
				case BTLessStrategyNumber:
				case BTLessEqualStrategyNumber:
					if (chosen == NULL)
					{
						if (forward)
							other_side = cur;
						else
							chosen = cur;
					}
					break;
				case BTGreaterEqualStrategyNumber:
				case BTGreaterStrategyNumber:
					if (chosen == NULL)
					{
						if (forward)
							chosen = cur;
						else
							other_side = cur;
					}
					break;
			}
		}
		if (chosen == NULL)
		{
			if (other_side != NULL &&
				((other_side->sk_flags & SK_BT_NULLS_FIRST) ? forward : !forward))
				return false;
			break;
		}
		start->keys[start->nkeys++] = chosen;
		if (chosen->sk_strategy != BTEqualStrategyNumber)
		{
			strat_total = chosen->sk_strategy;
			if (strat_total == BTLessStrategyNumber ||
				strat_total == BTGreaterStrategyNumber)
				break;
		}
	}

	switch (strat_total)
	{
		case BTLessStrategyNumber:
			start->nextkey = false;
			start->backward = true;
			break;
		case BTLessEqualStrategyNumber:
			start->nextkey = true;
			start->backward = true;
			break;
		case BTEqualStrategyNumber:
			start->nextkey = !forward;
			start->backward = !forward;
			break;
		case BTGreaterEqualStrategyNumber:
			start->nextkey = false;
			start->backward = false;
			break;
		case BTGreaterStrategyNumber:
			start->nextkey = true;
			start->backward = false;
			break;
		default:
			return false;
	}
	return start->nkeys > 0;
}

/* How the module's key preprocessing came out. */
typedef enum FirstPreprocess
{
	FIRST_PREPROCESSED,			/* so->keyData is the server's outcome */
	FIRST_PREPROCESS_BY_SERVER, /* values must be compared: the server's */
	FIRST_PREPROCESS_REFUSED	/* a key the server would reject */
} FirstPreprocess;

/* Strategy bits (1 << strategy) of a column's keys, and their groups */
#define FIRST_LOWER_BOUNDS \
	(1 << BTGreaterStrategyNumber | 1 << BTGreaterEqualStrategyNumber)
#define FIRST_UPPER_BOUNDS \
	(1 << BTLessStrategyNumber | 1 << BTLessEqualStrategyNumber)

/*
 * The keys _bt_preprocess_keys reads: on 15 an array scan's copy, with the
 * arrays' current elements (and an inequality array's extreme element).
 */
static inline ScanKey
first_input_keys(IndexScanDesc scan, BTScanOpaque so)
{
#if PG_VERSION_NUM < 170000
	if (so->arrayKeyData != NULL)
		return so->arrayKeyData;
#endif
	return scan->keyData;
}

/* A key the server's preprocessing would reject (it raises the error) */
static inline bool
first_key_invalid(ScanKey cur)
{
	return cur->sk_attno < 1 || cur->sk_strategy < BTLessStrategyNumber ||
		cur->sk_strategy > BTGreaterStrategyNumber;
}

/*
 * _bt_fix_scankey_strategy for a key of none of the kinds first_simple()
 * leaves to the server: the column's DESC and NULLS FIRST flags added, a
 * DESC column's strategy commuted, once (in the scan's own key).
 */
static inline void
first_fix_key(ScanKey cur, const int16 *indoption)
{
	int			addflags = indoption[cur->sk_attno - 1] << SK_BT_INDOPTION_SHIFT;

	if ((addflags & SK_BT_DESC) && !(cur->sk_flags & SK_BT_DESC))
		cur->sk_strategy = BTCommuteStrategyNumber(cur->sk_strategy);
	cur->sk_flags |= addflags;
}

/* _bt_mark_scankey_required: the directions a required key's strategy bounds */
static inline int
first_required_flags(StrategyNumber strategy)
{
	if (strategy == BTEqualStrategyNumber)
		return SK_BT_REQFWD | SK_BT_REQBKWD;
	return strategy < BTEqualStrategyNumber ? SK_BT_REQFWD : SK_BT_REQBKWD;
}

/* first_preprocess() of a single key, the commonest scan, in short */
static inline FirstPreprocess
first_preprocess_one(IndexScanDesc scan, BTScanOpaque so)
{
	ScanKey		cur = first_input_keys(scan, so);
	ScanKey		out = &so->keyData[0];

	if (first_key_invalid(cur))
		return FIRST_PREPROCESS_REFUSED;
	so->qual_ok = true;
	first_fix_key(cur, scan->indexRelation->rd_indoption);
	memcpy(out, cur, sizeof(ScanKeyData));
	so->numberOfKeys = 1;
	if (cur->sk_attno == 1)
		out->sk_flags |= first_required_flags(out->sk_strategy);
	return FIRST_PREPROCESSED;
}

/*
 * _bt_preprocess_keys for keys (of none of the kinds first_simple() leaves
 * to the server) whose outcome does not depend on their values: per
 * column one key, or one lower and one upper bound (a BETWEEN).  Any other
 * pair on one column (= with another key, < with <=, two keys of one
 * strategy) is compared by value, or found contradictory, by the server's
 * function.  The outcome, as the server's: each key takes its column's
 * DESC and NULLS FIRST flags (a DESC column's strategy commuted, once, in
 * the scan's own key, as _bt_fix_scankey_strategy does); the keys are
 * copied column by column, a column's in descending strategy number (>,
 * >=, =, <=, <); a column's keys are required, in the directions their
 * strategies bound, when every column before it has an = key.
 */
static pg_noinline FirstPreprocess
first_preprocess_several(IndexScanDesc scan, BTScanOpaque so)
{
	ScanKey		keys = first_input_keys(scan, so);
	int			n = scan->numberOfKeys;
	int16	   *indoption = scan->indexRelation->rd_indoption;
	int			nout = 0;
	int			equal_columns = 0;
	bool		required = false;

	/*
	 * One pass.  A key is fixed (its flags added, a DESC column's strategy
	 * commuted) once it is known to be valid, and before it is compared
	 * with its column's other key: keys fixed before the scan turns out to
	 * need the server's function are fixed as that function fixes them,
	 * and it does not fix them twice.
	 */
	for (int i = 0; i < n; i++)
	{
		ScanKey		cur = &keys[i];
		AttrNumber	attno = cur->sk_attno;
		ScanKey		out;

		if (first_key_invalid(cur))
			return FIRST_PREPROCESS_REFUSED;
		first_fix_key(cur, indoption);

		if (i > 0 && attno <= keys[i - 1].sk_attno)
		{
			int			strategies;

			/* out of order (the server raises the error), or a third key */
			if (attno < keys[i - 1].sk_attno ||
				(i > 1 && keys[i - 2].sk_attno == attno))
				return FIRST_PREPROCESS_BY_SERVER;
			/* two keys on one column: a lower and an upper bound only */
			strategies = 1 << cur->sk_strategy | 1 << keys[i - 1].sk_strategy;
			if ((strategies & FIRST_LOWER_BOUNDS) == 0 ||
				(strategies & FIRST_UPPER_BOUNDS) == 0)
				return FIRST_PREPROCESS_BY_SERVER;
		}
		else
			required = equal_columns == attno - 1;

		/* a column's keys in descending strategy number */
		out = &so->keyData[nout];
		if (nout > 0 && out[-1].sk_attno == attno &&
			cur->sk_strategy > out[-1].sk_strategy)
		{
			memcpy(out, out - 1, sizeof(ScanKeyData));
			out--;
		}
		memcpy(out, cur, sizeof(ScanKeyData));
		nout++;
		if (required)
			out->sk_flags |= first_required_flags(cur->sk_strategy);
		if (cur->sk_strategy == BTEqualStrategyNumber)
			equal_columns++;
	}
	so->qual_ok = true;
	so->numberOfKeys = nout;
	return FIRST_PREPROCESSED;
}

/*
 * The key preprocessing, a single key's inline (most scans have one); 17
 * keeps what an earlier call of the same scan preprocessed.
 */
static inline FirstPreprocess
first_preprocess(IndexScanDesc scan, BTScanOpaque so)
{
#if PG_VERSION_NUM >= 170000
	/* kept from the scan's first primitive scan (arrays) */
	if (so->numberOfKeys > 0)
		return FIRST_PREPROCESSED;
	/* arrays are set up only by the server's preprocessing */
	if (first_has_arrays(scan))
		return FIRST_PREPROCESS_BY_SERVER;
#endif
	if (scan->numberOfKeys == 1)
		return first_preprocess_one(scan, so);
	return first_preprocess_several(scan, so);
}

/*
 * An insertion scan key's entry for key cur with comparison procedure
 * proc, copied as ScanKeyEntryInitializeWithInfo copies it (and as
 * ScanKeyEntryInitialize's fmgr_info fills it).
 */
static inline void
first_key_entry(ScanKey cur, const FmgrInfo *proc, ScanKey entry)
{
	entry->sk_flags = cur->sk_flags;
	entry->sk_attno = cur->sk_attno;
	entry->sk_strategy = InvalidStrategy;
	entry->sk_subtype = cur->sk_subtype;
	entry->sk_collation = cur->sk_collation;
	entry->sk_argument = cur->sk_argument;
	memcpy(&entry->sk_func, proc, sizeof(FmgrInfo));
	entry->sk_func.fn_mcxt = CurrentMemoryContext;
	entry->sk_func.fn_extra = NULL;
}

/*
 * The column's own comparison procedure, as the index keeps it
 * (index_getprocinfo when it has not looked it up yet).
 */
static inline const FmgrInfo *
first_own_type_proc(Relation rel, AttrNumber attno)
{
	FmgrInfo   *proc = rel->rd_supportinfo +
		rel->rd_indam->amsupport * (attno - 1) + (BTORDER_PROC - 1);

	if (unlikely(proc->fn_oid == InvalidOid))
		proc = index_getprocinfo(rel, attno, BTORDER_PROC);
	return proc;
}

/*
 * The cross-type comparison procedures of the scans this backend started:
 * get_opfamily_proc's answer per (family, column type, key type), looked
 * up in the catalogs about 700 instructions a scan otherwise, and its
 * FmgrInfo, which a scan key gets a copy of (fmgr_info_copy's, the same
 * as fmgr_info's).  A few entries, replaced round robin; all forgotten
 * when pg_amproc or pg_proc changes (a procedure added to or dropped from
 * a family, a function replaced), as the catalog caches would be.
 */
typedef struct FirstCrossProc
{
	Oid			opfamily;
	uint64		types;			/* FIRST_CROSS_TYPES(lefttype, righttype) */
	FmgrInfo	proc;
} FirstCrossProc;

#define FIRST_CROSS_PROCS 16
#define FIRST_CROSS_TYPES(lefttype, righttype) \
	((uint64) (lefttype) << 32 | (uint64) (righttype))

static FirstCrossProc first_cross_procs[FIRST_CROSS_PROCS];
static int	first_cross_used;	/* entries filled */
static int	first_cross_next;	/* the entry replaced next */
static int	first_cross_last;	/* the entry found last */
static bool first_cross_watching;

static void
first_cross_forget(Datum arg, int cacheid, uint32 hashvalue)
{
	first_cross_used = 0;
	first_cross_next = 0;
	first_cross_last = 0;
}

/*
 * The procedure, or NULL when the family has none (not remembered).  The
 * search starts after the entry found last: the keys of one scan were
 * entered one after the other, and are looked up in that order.  That
 * entry is tried inline (first_cross_proc()), the rest out of line.
 */
static pg_noinline const FmgrInfo *
first_cross_proc_search(Oid opfamily, Oid lefttype, Oid righttype)
{
	uint64		types = FIRST_CROSS_TYPES(lefttype, righttype);
	FirstCrossProc *e;
	RegProcedure proc;
	FmgrInfo	finfo;

	for (int n = 0, i = first_cross_last + 1; n < first_cross_used; n++, i++)
	{
		if (i >= first_cross_used)
			i = 0;
		e = &first_cross_procs[i];
		if (e->types == types && e->opfamily == opfamily)
		{
			first_cross_last = i;
			return &e->proc;
		}
	}
	proc = get_opfamily_proc(opfamily, lefttype, righttype, BTORDER_PROC);
	if (!RegProcedureIsValid(proc))
		return NULL;
	if (!first_cross_watching)
	{
		CacheRegisterSyscacheCallback(AMPROCNUM, first_cross_forget, (Datum) 0);
		CacheRegisterSyscacheCallback(PROCOID, first_cross_forget, (Datum) 0);
		first_cross_watching = true;
	}
	/* looked up before the entry is chosen: the lookup may forget them all */
	fmgr_info_cxt(proc, &finfo, TopMemoryContext);
	e = &first_cross_procs[first_cross_next];
	e->opfamily = opfamily;
	e->types = types;
	e->proc = finfo;
	first_cross_last = first_cross_next;
	first_cross_next = (first_cross_next + 1) % FIRST_CROSS_PROCS;
	if (first_cross_used < FIRST_CROSS_PROCS)
		first_cross_used++;
	return &e->proc;
}

static inline const FmgrInfo *
first_cross_proc(Oid opfamily, Oid lefttype, Oid righttype)
{
	int			i = first_cross_last + 1 < first_cross_used ? first_cross_last + 1 : 0;
	FirstCrossProc *e = &first_cross_procs[i];

	if (likely(i < first_cross_used &&
			   e->types == FIRST_CROSS_TYPES(lefttype, righttype) &&
			   e->opfamily == opfamily))
	{
		first_cross_last = i;
		return &e->proc;
	}
	return first_cross_proc_search(opfamily, lefttype, righttype);
}

/*
 * A cross-type integer key whose value the column's type holds exactly,
 * as a key of the column's type: its value converted and the column's own
 * procedure.  The built-in cross-type procedures of integer_ops compare
 * both values widened to 64 bits, as the column's own compares two of its
 * values, so the sign of every comparison, and with it every page search
 * of the scan, is the same; the compiled page search then decodes the key
 * as it decodes a key of the column's type, with nothing to tell apart at
 * each level.  Only for the built-in procedures (a family changed by
 * ALTER OPERATOR FAMILY keeps its own); a value out of the column's range
 * keeps the cross-type key.
 */
static inline bool
first_int_narrow(const FmgrInfo *cross, const FmgrInfo *own, Datum arg,
				 Datum *narrowed)
{
	int64		v;
	Oid			ownproc;

	/* the key's value by the right type, the column's procedure by the left */
	switch (cross->fn_oid)
	{
		case F_BTINT24CMP:
			v = DatumGetInt32(arg);
			ownproc = F_BTINT2CMP;
			break;
		case F_BTINT28CMP:
			v = DatumGetInt64(arg);
			ownproc = F_BTINT2CMP;
			break;
		case F_BTINT42CMP:
			v = DatumGetInt16(arg);
			ownproc = F_BTINT4CMP;
			break;
		case F_BTINT48CMP:
			v = DatumGetInt64(arg);
			ownproc = F_BTINT4CMP;
			break;
		case F_BTINT82CMP:
			v = DatumGetInt16(arg);
			ownproc = F_BTINT8CMP;
			break;
		case F_BTINT84CMP:
			v = DatumGetInt32(arg);
			ownproc = F_BTINT8CMP;
			break;
		default:
			return false;
	}
	if (own->fn_oid != ownproc)
		return false;
	switch (ownproc)
	{
		case F_BTINT2CMP:
			if (v < PG_INT16_MIN || v > PG_INT16_MAX)
				return false;
			*narrowed = Int16GetDatum((int16) v);
			return true;
		case F_BTINT4CMP:
			if (v < PG_INT32_MIN || v > PG_INT32_MAX)
				return false;
			*narrowed = Int32GetDatum((int32) v);
			return true;
		default:
			*narrowed = Int64GetDatum(v);
			return true;
	}
}

/*
 * The insertion scan key of the chosen keys: the column's own comparison
 * procedure when the key's type is the column's, else the family's
 * cross-type one (or the column's own, for an integer value the column's
 * type holds: first_int_narrow).  false when the cross-type procedure is
 * missing (the server's _bt_first raises the error).
 */
static bool
first_insertion_key(Relation rel, const FirstStart *start, BTScanInsert key)
{
	BTMetaPageData *metad;

	for (int k = 0; k < start->nkeys; k++)
	{
		ScanKey		cur = start->keys[k];
		const FmgrInfo *proc;

		if (cur->sk_subtype == rel->rd_opcintype[k] ||
			cur->sk_subtype == InvalidOid)
			proc = first_own_type_proc(rel, cur->sk_attno);
		else if ((proc = first_cross_proc(rel->rd_opfamily[k],
										  rel->rd_opcintype[k],
										  cur->sk_subtype)) == NULL)
			return false;
		else if (!(cur->sk_flags & SK_ISNULL))
		{
			const FmgrInfo *own = first_own_type_proc(rel, cur->sk_attno);
			Datum		narrowed;

			if (first_int_narrow(proc, own, cur->sk_argument, &narrowed))
			{
				first_key_entry(cur, own, &key->scankeys[k]);
				key->scankeys[k].sk_subtype = rel->rd_opcintype[k];
				key->scankeys[k].sk_argument = narrowed;
				continue;
			}
		}
		first_key_entry(cur, proc, &key->scankeys[k]);
	}
	/* _bt_metaversion, from the metapage cache where there is one */
	metad = (BTMetaPageData *) rel->rd_amcache;
	if (likely(metad != NULL))
	{
		key->heapkeyspace = metad->btm_version > BTREE_NOVAC_VERSION;
		key->allequalimage = metad->btm_allequalimage;
	}
	else
		_bt_metaversion(rel, &key->heapkeyspace, &key->allequalimage);
	key->anynullkeys = false;
	key->nextkey = start->nextkey;
#if PG_VERSION_NUM >= 170000
	key->backward = start->backward;
#else
	key->pivotsearch = false;
#endif
	key->scantid = NULL;
	key->keysz = start->nkeys;
	return true;
}

/*
 * The scan's direction, and no items killed or marked yet.  A primitive
 * scan after the first (17, 18: the arrays asked for one) may go on in
 * both directions.
 */
static inline void
first_position_begin(BTScanOpaque so, ScanDirection dir)
{
#if PG_VERSION_NUM >= 170000
	if (so->needPrimScan)
	{
		so->currPos.moreLeft = true;
		so->currPos.moreRight = true;
		so->needPrimScan = false;
	}
	else
#endif
	{
		so->currPos.moreLeft = !ScanDirectionIsForward(dir);
		so->currPos.moreRight = ScanDirectionIsForward(dir);
	}
	so->numKilled = 0;
	so->markItemIndex = -1;
}

/* The index scan count of pg_stat's, in the relation's pending counts */
#if PG_VERSION_NUM >= 160000
#define FIRST_NUMSCANS(rel) ((rel)->pgstat_info->counts.numscans)
#else
#define FIRST_NUMSCANS(rel) ((rel)->pgstat_info->t_counts.t_numscans)
#endif

/*
 * The page's lock is released; so is its pin where no index-only scan
 * needs the page kept and the snapshot and WAL let the scan drop it (the
 * server's _bt_drop_lock_and_maybe_pin).  18 decides that once per scan
 * (so->dropPin, btrescan's) and takes the page's LSN only when it drops
 * the pin, for _bt_killitems to see whether the page changed since.
 */
static inline void
first_drop_lock(IndexScanDesc scan, BTScanOpaque so)
{
#if PG_VERSION_NUM >= 180000
	bool		drop_pin = so->dropPin;

	if (drop_pin)
		so->currPos.lsn = BufferGetLSNAtomic(so->currPos.buf);
#else
	bool		drop_pin = IsMVCCSnapshot(scan->xs_snapshot) &&
		RelationNeedsWAL(scan->indexRelation) && !scan->xs_want_itup;
#endif

	_bt_unlockbuf(scan->indexRelation, so->currPos.buf);
	if (drop_pin)
	{
		ReleaseBuffer(so->currPos.buf);
		so->currPos.buf = InvalidBuffer;
	}
}

/*
 * An index search counted in the relation's statistics and, from 18, in
 * the scan's instrumentation (EXPLAIN ANALYZE's "Index Searches").
 */
static inline void
first_count_search(IndexScanDesc scan)
{
	pgstat_count_index_scan(scan->indexRelation);
#if PG_VERSION_NUM >= 180000
	if (scan->instrument)
		scan->instrument->nsearches++;
#endif
}

/* The searches counted so far, for verify to take a start's count back */
typedef struct FirstSearchCounts
{
	int64		numscans;
	uint64		nsearches;
} FirstSearchCounts;

static inline void
first_search_counts_take(IndexScanDesc scan, FirstSearchCounts *c)
{
	Relation	rel = scan->indexRelation;

	c->numscans = rel->pgstat_info != NULL ? FIRST_NUMSCANS(rel) : 0;
#if PG_VERSION_NUM >= 180000
	c->nsearches = scan->instrument != NULL ? scan->instrument->nsearches : 0;
#else
	c->nsearches = 0;
#endif
}

static inline void
first_search_counts_restore(IndexScanDesc scan, const FirstSearchCounts *c)
{
	Relation	rel = scan->indexRelation;

	if (rel->pgstat_info != NULL)
		FIRST_NUMSCANS(rel) = c->numscans;
#if PG_VERSION_NUM >= 180000
	if (scan->instrument != NULL)
		scan->instrument->nsearches = c->nsearches;
#endif
}

/*
 * The module's start of a simple scan.  count: count the index scan in
 * the relation's statistics (verify mode leaves that to the server's run).
 */
static FirstOutcome
first_run(IndexScanDesc scan, ScanDirection dir, const BtjitDescentCode *dc,
		  bool count)
{
	Relation	rel = scan->indexRelation;
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	FirstStart	start;
	BTScanInsertData key;
	Buffer		buf;
	OffsetNumber offnum;
	BTScanPosItem *item;

	switch (first_preprocess(scan, so))
	{
		case FIRST_PREPROCESSED:
			break;
		case FIRST_PREPROCESS_BY_SERVER:
			_bt_preprocess_keys(scan);
			break;
		case FIRST_PREPROCESS_REFUSED:
			return FIRST_SERVER;
	}
	if (!so->qual_ok)
		return FIRST_SERVER;
#if PG_VERSION_NUM >= 170000
	if (so->numArrayKeys != 0)
	{
#ifdef BTJIT_SCAN_START_SKIP_ARRAYS
		/* (first_skips_columns() saw to it that no skip array was added) */
		if (unlikely(so->skipScan))
			return FIRST_SERVER;
#endif

		/*
		 * The arrays' first elements, on the first primitive scan only.  A
		 * start left to the server after this starts them again, the same.
		 */
		if (!so->needPrimScan)
			_bt_start_array_keys(scan, dir);
	}
#endif
	if (!first_choose(so, dir, &start) ||
		!first_insertion_key(rel, &start, &key))
		return FIRST_SERVER;
	if (count)
		first_count_search(scan);
	dc->ix->counts.jit_scan_starts++;

	btjit_descend_scan(dc, rel, &key, &buf, scan->xs_snapshot);
	if (!BufferIsValid(buf))
	{
		/* an empty index: a serializable scan locks the relation */
		if (IsolationIsSerializable())
		{
			PredicateLockRelation(rel, scan->xs_snapshot);
			btjit_descend_scan(dc, rel, &key, &buf, scan->xs_snapshot);
		}
		if (!BufferIsValid(buf))
		{
			BTScanPosInvalidate(so->currPos);
			return FIRST_NONE;
		}
	}
#if PG_VERSION_NUM < 180000
	/* 18's leaf read takes the lock */
	PredicateLockPage(rel, BufferGetBlockNumber(buf), scan->xs_snapshot);
#endif
	first_position_begin(so, dir);
	offnum = btjit_descent_leaf_search(dc, rel, &key, buf);
	if (!BTJIT_LEAF_BACKWARD && start.backward)
		offnum = OffsetNumberPrev(offnum);
	so->currPos.buf = buf;

	if (!btjit_readpage_first(scan, dir, offnum, dc->ix))
	{
		/*
		 * Nothing here: _bt_next steps to the next page, as _bt_first's
		 * _bt_steppage would, once it has moved itemIndex past the page's
		 * (empty) range of items; moved back first, so that the position
		 * is the server's also when no page follows.
		 */
		_bt_unlockbuf(rel, so->currPos.buf);
		if (ScanDirectionIsForward(dir))
			so->currPos.itemIndex--;
		else
			so->currPos.itemIndex++;
		return _bt_next(scan, dir) ? FIRST_FOUND : FIRST_NONE;
	}
	first_drop_lock(scan, so);
	item = &so->currPos.items[so->currPos.itemIndex];
	scan->xs_heaptid = item->heapTid;
	if (scan->xs_want_itup)
		scan->xs_itup = (IndexTuple) (so->currTuples + item->tupleOffset);
	return FIRST_FOUND;
}

/*
 * ---- verify mode ----
 *
 * The scan is started three times from the same state: by the server's
 * _bt_first, by the module, by the server's again, whose start stands.
 * Between the runs the locks are let go, so another backend may change
 * the pages (insert, split, mark items dead, which unlogged indexes do not
 * even show in the page's LSN): the two server runs must agree, every
 * byte, for the module's to be compared with them; when they do not, the
 * start is counted as not verified.  The index's counters and the index
 * scan count of pg_stat count one run, the last (the buffer statistics
 * count all three).
 */

/* What a start left: its result and the scan's position. */
typedef struct FirstResult
{
	bool		found;
	ItemPointerData tid;
	IndexTuple	itup;
	BTScanPosData *pos;
	char	   *tuples;			/* an index-only scan's saved tuples */
} FirstResult;

static void
first_result_init(IndexScanDesc scan, FirstResult *r)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	r->found = false;
	r->pos = palloc(sizeof(BTScanPosData));
	r->tuples = so->currTuples != NULL ? palloc(BLCKSZ) : NULL;
}

static void
first_result_take(IndexScanDesc scan, bool found, FirstResult *r)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	r->found = found;
	r->tid = scan->xs_heaptid;
	r->itup = scan->xs_itup;
	memcpy(r->pos, &so->currPos, sizeof(BTScanPosData));
	if (r->tuples != NULL)
		memcpy(r->tuples, so->currTuples, BLCKSZ);
}

static void
first_result_free(FirstResult *r)
{
	pfree(r->pos);
	if (r->tuples != NULL)
		pfree(r->tuples);
}

/* Back to the state before: the start's pin released, its position undone */
static void
first_rewind(IndexScanDesc scan, const FirstResult *before)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (BTScanPosIsPinned(so->currPos))
		ReleaseBuffer(so->currPos.buf);
	memcpy(&so->currPos, before->pos, sizeof(BTScanPosData));
	if (before->tuples != NULL)
		memcpy(so->currTuples, before->tuples, BLCKSZ);
}

/* The first thing two starts differ in, or NULL */
static const char *
first_difference(IndexScanDesc scan, const FirstResult *a,
				 const FirstResult *b)
{
	if (a->found != b->found)
		return "the result";
	if (a->found && !ItemPointerEquals((ItemPointer) &a->tid,
									   (ItemPointer) &b->tid))
		return "the heap TID returned";
	if (a->found && scan->xs_want_itup && a->itup != b->itup)
		return "the index tuple returned";
	return btjit_scanpos_difference(a->pos, b->pos, a->tuples, b->tuples);
}

/* A scan's preprocessed keys (so->keyData and what goes with them). */
typedef struct FirstKeys
{
	ScanKey		keys;
	int			nkeys;
	bool		qual_ok;
} FirstKeys;

static void
first_keys_take(IndexScanDesc scan, FirstKeys *k)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	k->nkeys = so->numberOfKeys;
	k->keys = palloc(sizeof(ScanKeyData) * Max(k->nkeys, 1));
	k->qual_ok = so->qual_ok;
	memcpy(k->keys, so->keyData, sizeof(ScanKeyData) * k->nkeys);
}

static void
first_keys_restore(IndexScanDesc scan, const FirstKeys *k)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	so->numberOfKeys = k->nkeys;
	so->qual_ok = k->qual_ok;
	memcpy(so->keyData, k->keys, sizeof(ScanKeyData) * k->nkeys);
}

/*
 * Every byte of the keys, both copies of the scan's own, but the cache a
 * comparison procedure keeps in fn_extra: the server's start has used its
 * copies (enum_cmp, record and array comparisons, PL functions fill it).
 */
static bool
first_keys_differ(IndexScanDesc scan, const FirstKeys *k)
{
	BTScanOpaque so = (BTScanOpaque) scan->opaque;

	if (so->numberOfKeys != k->nkeys || so->qual_ok != k->qual_ok)
		return true;
	for (int i = 0; i < k->nkeys; i++)
	{
		ScanKeyData a;
		ScanKeyData b;

		memcpy(&a, &so->keyData[i], sizeof(ScanKeyData));
		memcpy(&b, &k->keys[i], sizeof(ScanKeyData));
		a.sk_func.fn_extra = b.sk_func.fn_extra = NULL;
		if (memcmp(&a, &b, sizeof(ScanKeyData)) != 0)
			return true;
	}
	return false;
}

/* The server's start; with undo, taken back with its counts. */
static bool
first_verify_server(IndexScanDesc scan, ScanDirection dir, BtjitIndex *ix,
					const FirstResult *before, FirstResult *r, bool undo)
{
	BtjitIndexStats counts = ix->counts;
	FirstSearchCounts searches;
	bool		found;

	first_search_counts_take(scan, &searches);
	found = BTJIT_STOCK_FIRST(scan, dir);
	first_result_take(scan, found, r);
	if (undo)
	{
		first_rewind(scan, before);
		ix->counts = counts;
		first_search_counts_restore(scan, &searches);
	}
	return found;
}

#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
/*
 * 17 and 18: the array state the three starts of a primitive scan of an
 * array scan begin from.  The first primitive scan has no arrays before
 * the server's start has preprocessed the keys (each start sets the
 * arrays to their first elements, and only the flags need putting back);
 * a later one begins from the elements the last read advanced to.
 */
typedef struct FirstArrays
{
	bool		kept;			/* the keys and elements were saved */
	BtjitArrayState state;
} FirstArrays;

static void
first_arrays_take(BTScanOpaque so, FirstArrays *a)
{
	a->kept = so->numberOfKeys > 0 && so->numArrayKeys > 0;
	if (a->kept)
		btjit_array_state_save(so, &a->state);
	else
	{
		a->state.needPrimScan = so->needPrimScan;
		a->state.scanBehind = so->scanBehind;
#if PG_VERSION_NUM >= 180000
		a->state.oppositeDirCheck = so->oppositeDirCheck;
#endif
	}
}

static void
first_arrays_restore(BTScanOpaque so, const FirstArrays *a)
{
	if (a->kept)
		btjit_array_state_restore(so, &a->state);
	else
	{
		so->needPrimScan = a->state.needPrimScan;
		so->scanBehind = a->state.scanBehind;
#if PG_VERSION_NUM >= 180000
		so->oppositeDirCheck = a->state.oppositeDirCheck;
#endif
	}
}
#endif

static pg_noinline bool
first_verify(IndexScanDesc scan, ScanDirection dir, const BtjitDescentCode *dc)
{
	BtjitIndex *ix = dc->ix;
	BTScanOpaque so = (BTScanOpaque) scan->opaque;
	FirstResult before,
				server1,
				module,
				server2;
	FirstKeys	server_keys = {0};
	BtjitIndexStats counts;
	FirstOutcome outcome;
	const char *difference = NULL;
	bool		arrays = first_has_arrays(scan);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	FirstArrays arrays_before = {0};
	BtjitArrayState arrays_module = {0};
#endif

	first_result_init(scan, &before);
	first_result_init(scan, &server1);
	first_result_init(scan, &module);
	first_result_init(scan, &server2);
	first_result_take(scan, false, &before);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	if (arrays)
		first_arrays_take(so, &arrays_before);
#endif

	(void) first_verify_server(scan, dir, ix, &before, &server1, true);
	counts = ix->counts;
	if (!arrays)
	{
		/* the module's preprocessing (17: not the server's kept from S1) */
		first_keys_take(scan, &server_keys);
		so->numberOfKeys = 0;
		if (first_preprocess(scan, so) == FIRST_PREPROCESSED &&
			first_keys_differ(scan, &server_keys))
			difference = "the preprocessed scan keys";
	}
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF

	/*
	 * An array scan's keys are the server's preprocessing's, kept from S1
	 * (redone, it would free the arrays S1 set up)
	 */
	else
		first_arrays_restore(so, &arrays_before);
#endif
	outcome = first_run(scan, dir, dc, false);
	if (outcome != FIRST_SERVER)
	{
		first_result_take(scan, outcome == FIRST_FOUND, &module);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
		if (arrays)
			btjit_array_state_save(so, &arrays_module);
#endif
		first_rewind(scan, &before);
	}
	/* the server's second start from the server's keys */
	if (!arrays)
		first_keys_restore(scan, &server_keys);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	else
		first_arrays_restore(so, &arrays_before);
#endif
	ix->counts = counts;
	(void) first_verify_server(scan, dir, ix, &before, &server2, false);

	if (outcome != FIRST_SERVER && difference == NULL)
	{
		ix->counts.jit_scan_starts++;
		if (first_difference(scan, &server1, &server2) == NULL)
		{
			ix->counts.verified_scan_starts++;
			difference = first_difference(scan, &module, &server2);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
			if (difference == NULL && arrays)
				difference = btjit_array_state_difference(so, &arrays_module);
#endif
		}
	}
	if (unlikely(difference != NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: the scan start in index \"%s\" differs from the server's _bt_first",
						RelationGetRelationName(scan->indexRelation)),
				 errdetail("They differ in %s: the module's start %s, the server's %s; %d scan keys, %s scan%s.",
						   difference,
						   module.found ? "found an item" : "found none",
						   server2.found ? "found an item" : "found none",
						   scan->numberOfKeys,
						   ScanDirectionIsForward(dir) ? "forward" : "backward",
						   arrays ? ", with array keys" : ""),
				 errhint(BTJIT_VERIFY_HINT)));
	first_result_free(&before);
	first_result_free(&server1);
	first_result_free(&module);
	first_result_free(&server2);
	if (server_keys.keys != NULL)
		pfree(server_keys.keys);
#ifdef BTJIT_READPAGE_ARRAY_HANDOFF
	btjit_array_state_free(&arrays_before.state);
	btjit_array_state_free(&arrays_module);
#endif
	return server2.found;
}

static pg_noinline bool
first_scan(IndexScanDesc scan, ScanDirection dir)
{
	BtjitDescentCode dc;
	FirstOutcome outcome;

	if (!first_simple(scan) || !btjit_descent_code(scan->indexRelation, &dc))
		return BTJIT_STOCK_FIRST(scan, dir);
	if (unlikely(!dc.fast))
		return first_verify(scan, dir, &dc);
	outcome = first_run(scan, dir, &dc, true);
	if (outcome == FIRST_SERVER)
		return BTJIT_STOCK_FIRST(scan, dir);
	return outcome == FIRST_FOUND;
}

static bool
btjit_dispatch_first(IndexScanDesc scan, ScanDirection dir)
{
	if (likely(btjit_code_active))
		return first_scan(scan, dir);
	return BTJIT_STOCK_FIRST(scan, dir);
}
#endif							/* BTJIT_SCAN_START */
