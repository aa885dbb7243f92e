/*-------------------------------------------------------------------------
 *
 * keyshape.c
 *	  Derive an index's key shape from its relcache entry.
 *
 * The shape is what the compiled code may assume: per key column, how the
 * stored value is read, its place in a tuple without NULLs, its DESC and
 * NULLS FIRST options, and which comparison procs a scankey may carry for it
 * (the column's own BTORDER_PROC and the cross-type procs of the same
 * family whose semantics are an exact integer comparison).  Anything else
 * is refused with a reason.
 *
 * Only the relcache entry is read, never the catalogs: this runs inside a
 * page search, with a buffer content lock held.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type_d.h"
#include "lib/stringinfo.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "btree_jit.h"

/* A comparison proc the compiled code can evaluate inline. */
typedef struct BtjitProcInfo
{
	Oid			proc;
	BtjitValueKind left;		/* the stored (index column) value */
	BtjitValueKind right;		/* the scankey argument */
	const char *name;			/* of the left type, for signatures */
} BtjitProcInfo;

static const BtjitProcInfo btjit_procs[] = {
	{F_BTINT2CMP, BTJIT_KIND_INT16, BTJIT_KIND_INT16, "int2"},
	{F_BTINT24CMP, BTJIT_KIND_INT16, BTJIT_KIND_INT32, "int2"},
	{F_BTINT28CMP, BTJIT_KIND_INT16, BTJIT_KIND_INT64, "int2"},
	{F_BTINT4CMP, BTJIT_KIND_INT32, BTJIT_KIND_INT32, "int4"},
	{F_BTINT42CMP, BTJIT_KIND_INT32, BTJIT_KIND_INT16, "int4"},
	{F_BTINT48CMP, BTJIT_KIND_INT32, BTJIT_KIND_INT64, "int4"},
	{F_BTINT8CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT64, "int8"},
	{F_BTINT82CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT16, "int8"},
	{F_BTINT84CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT32, "int8"},
	{F_BTOIDCMP, BTJIT_KIND_UINT32, BTJIT_KIND_UINT32, "oid"},
	{F_BTBOOLCMP, BTJIT_KIND_BOOL, BTJIT_KIND_BOOL, "bool"},
	{F_BTCHARCMP, BTJIT_KIND_UINT8, BTJIT_KIND_UINT8, "char"},
	{F_DATE_CMP, BTJIT_KIND_INT32, BTJIT_KIND_INT32, "date"},
	{F_TIME_CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT64, "time"},
	{F_TIMESTAMP_CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT64, "timestamp"},
	{F_TIMESTAMPTZ_CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT64, "timestamptz"},
};

static const BtjitProcInfo *
btjit_proc_info(Oid proc)
{
	for (int i = 0; i < lengthof(btjit_procs); i++)
		if (btjit_procs[i].proc == proc)
			return &btjit_procs[i];
	return NULL;
}

/* Width in bytes of a stored value of this kind. */
static int
btjit_kind_width(BtjitValueKind kind)
{
	switch (kind)
	{
		case BTJIT_KIND_INT16:
			return 2;
		case BTJIT_KIND_INT32:
		case BTJIT_KIND_UINT32:
			return 4;
		case BTJIT_KIND_INT64:
			return 8;
		case BTJIT_KIND_BOOL:
		case BTJIT_KIND_UINT8:
			return 1;
		default:
			return 0;
	}
}

static int
btjit_align_bytes(char attalign)
{
	switch (attalign)
	{
		case TYPALIGN_CHAR:
			return 1;
		case TYPALIGN_SHORT:
			return ALIGNOF_SHORT;
		case TYPALIGN_INT:
			return ALIGNOF_INT;
		case TYPALIGN_DOUBLE:
			return ALIGNOF_DOUBLE;
		default:
			return 0;
	}
}

/*
 * Fill *shape for rel.  Returns false with why[] when the index has anything
 * the compiled code does not reproduce exactly.
 */
bool
btjit_shape_from_relation(Relation rel, BtjitShape *shape, char *why,
						  size_t whylen)
{
	int			nkeys;
	int			offset;

	memset(shape, 0, sizeof(BtjitShape));

	if (rel->rd_rel->relam != BTREE_AM_OID)
	{
		snprintf(why, whylen, "not a btree index");
		return false;
	}
	nkeys = IndexRelationGetNumberOfKeyAttributes(rel);
	if (nkeys < 1 || nkeys > BTJIT_MAX_KEYS)
	{
		snprintf(why, whylen, "%d key columns (at most %d are supported)",
				 nkeys, BTJIT_MAX_KEYS);
		return false;
	}
	shape->nkeys = nkeys;

	/* Key columns come first in an index tuple; data starts MAXALIGNed. */
	offset = MAXALIGN(sizeof(IndexTupleData));
	for (int i = 0; i < nkeys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), i);
		BtjitColumnShape *col = &shape->cols[i];
		Oid			proc = index_getprocid(rel, i + 1, BTORDER_PROC);
		const BtjitProcInfo *info = btjit_proc_info(proc);
		int			align = btjit_align_bytes(att->attalign);
		int16		option = rel->rd_indoption[i];

		if (info == NULL)
		{
			snprintf(why, whylen,
					 "key column %d: comparison proc %u is not supported (type %u)",
					 i + 1, proc, att->atttypid);
			return false;
		}
		if (!att->attbyval || att->attlen != btjit_kind_width(info->left) ||
			align == 0 || align > att->attlen)
		{
			snprintf(why, whylen,
					 "key column %d: storage (len %d, byval %d, align '%c') does not match %s",
					 i + 1, att->attlen, (int) att->attbyval, att->attalign,
					 info->name);
			return false;
		}

		col->kind = info->left;
		col->attlen = att->attlen;
		col->attalign = align;
		col->desc = (option & INDOPTION_DESC) != 0;
		col->nulls_first = (option & INDOPTION_NULLS_FIRST) != 0;
		offset = TYPEALIGN(align, offset);
		col->fixed_offset = offset;
		offset += att->attlen;

		/*
		 * The column's own proc first, then every known proc that reads the
		 * same stored kind (the cross-type members of the integer family).
		 * A scankey carrying any other proc is declined at run time.
		 */
		col->procs[0] = proc;
		col->argkinds[0] = info->right;
		col->nprocs = 1;
		for (int p = 0; p < lengthof(btjit_procs); p++)
		{
			const BtjitProcInfo *other = &btjit_procs[p];

			if (other->proc == proc || other->left != info->left ||
				strcmp(other->name, info->name) != 0)
				continue;
			if (col->nprocs >= BTJIT_MAX_PROCS)
				break;
			col->procs[col->nprocs] = other->proc;
			col->argkinds[col->nprocs] = other->right;
			col->nprocs++;
		}
	}
	return true;
}

static const char *
btjit_kind_name(const BtjitColumnShape *col)
{
	const BtjitProcInfo *info = btjit_proc_info(col->procs[0]);

	return info ? info->name : "?";
}

/*
 * Print a shape readably, e.g. "(int4, int8 DESC NULLS LAST)".  Options are
 * shown only where they differ from the default (ASC NULLS LAST; DESC
 * NULLS FIRST).
 */
void
btjit_shape_signature(const BtjitShape *shape, char *buf, size_t buflen)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoChar(&s, '(');
	for (int i = 0; i < shape->nkeys; i++)
	{
		const BtjitColumnShape *col = &shape->cols[i];

		if (i > 0)
			appendStringInfoString(&s, ", ");
		appendStringInfoString(&s, btjit_kind_name(col));
		if (col->desc)
			appendStringInfoString(&s, " DESC");
		if (col->nulls_first != col->desc)
			appendStringInfoString(&s, col->nulls_first ? " NULLS FIRST" : " NULLS LAST");
	}
	appendStringInfoChar(&s, ')');
	strlcpy(buf, s.data, buflen);
	pfree(s.data);
}
