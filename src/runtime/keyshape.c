/*-------------------------------------------------------------------------
 *
 * keyshape.c
 *	  Derive an index's key shape from its relcache entry.
 *
 * The shape is what the compiled code may assume: per key column, its
 * storage (length, alignment, by value or not), its DESC and NULLS FIRST
 * options, and how it is compared.  A column whose comparison proc has an
 * exact inline equivalent in the template (the integer family, float4/8,
 * uuid, and byte-ordered strings) lists the procs a scankey may carry for
 * it (the column's own BTORDER_PROC and the cross-type procs of the same
 * family) and the collations under which the inline order is the proc's;
 * a scankey with anything else makes the compiled code call the proc for
 * that column.  Every other column is of the "call" kind: the compiled loop
 * calls the scankey's own proc, so one shape serves every type and operator
 * class with the same storage layout, and no proc is assumed at all.  When
 * the column's own proc is a built-in function, the shape also names it,
 * and the compiler may import its body from the server's bitcode (tier 2,
 * see src/README): it runs only when the scankey's proc is that function.
 *
 * Only the relcache entry is read, never the catalogs: this runs inside a
 * page search, with a buffer content lock held, possibly of a catalog index
 * while a relcache entry is being built.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_type_d.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/fmgrtab.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"

#include "runtime/runtime.h"

/* A comparison proc the compiled code can evaluate inline. */
typedef struct BtjitProcInfo
{
	Oid			proc;
	BtjitValueKind left;		/* the stored (index column) value */
	BtjitValueKind right;		/* the scankey argument */
	bool		bytecoll;		/* order is byte order only in C/POSIX */
	const char *name;			/* of the opclass family member, for
								 * signatures; cross-type procs share it */
} BtjitProcInfo;

static const BtjitProcInfo btjit_procs[] = {
	{F_BTINT2CMP, BTJIT_KIND_INT16, BTJIT_KIND_INT16, false, "int2"},
	{F_BTINT24CMP, BTJIT_KIND_INT16, BTJIT_KIND_INT32, false, "int2"},
	{F_BTINT28CMP, BTJIT_KIND_INT16, BTJIT_KIND_INT64, false, "int2"},
	{F_BTINT4CMP, BTJIT_KIND_INT32, BTJIT_KIND_INT32, false, "int4"},
	{F_BTINT42CMP, BTJIT_KIND_INT32, BTJIT_KIND_INT16, false, "int4"},
	{F_BTINT48CMP, BTJIT_KIND_INT32, BTJIT_KIND_INT64, false, "int4"},
	{F_BTINT8CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT64, false, "int8"},
	{F_BTINT82CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT16, false, "int8"},
	{F_BTINT84CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT32, false, "int8"},
	{F_BTOIDCMP, BTJIT_KIND_UINT32, BTJIT_KIND_UINT32, false, "oid"},
	{F_BTBOOLCMP, BTJIT_KIND_BOOL, BTJIT_KIND_BOOL, false, "bool"},
	{F_BTCHARCMP, BTJIT_KIND_UINT8, BTJIT_KIND_UINT8, false, "char"},
	{F_DATE_CMP, BTJIT_KIND_INT32, BTJIT_KIND_INT32, false, "date"},
	{F_TIME_CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT64, false, "time"},
	{F_TIMESTAMP_CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT64, false, "timestamp"},
	{F_TIMESTAMPTZ_CMP, BTJIT_KIND_INT64, BTJIT_KIND_INT64, false, "timestamptz"},
	{F_BTFLOAT4CMP, BTJIT_KIND_FLOAT4, BTJIT_KIND_FLOAT4, false, "float4"},
	{F_BTFLOAT48CMP, BTJIT_KIND_FLOAT4, BTJIT_KIND_FLOAT8, false, "float4"},
	{F_BTFLOAT8CMP, BTJIT_KIND_FLOAT8, BTJIT_KIND_FLOAT8, false, "float8"},
	{F_BTFLOAT84CMP, BTJIT_KIND_FLOAT8, BTJIT_KIND_FLOAT4, false, "float8"},
	{F_UUID_CMP, BTJIT_KIND_UUID, BTJIT_KIND_UUID, false, "uuid"},
	/* text, varchar: varstr_cmp is memcmp and length in C and POSIX */
	{F_BTTEXTCMP, BTJIT_KIND_VARBYTES, BTJIT_KIND_VARBYTES, true, "text"},
	{F_BTTEXTNAMECMP, BTJIT_KIND_VARBYTES, BTJIT_KIND_NAME, true, "text"},
	/* text_pattern_ops, varchar_pattern_ops: memcmp and length always */
	{F_BTTEXT_PATTERN_CMP, BTJIT_KIND_VARBYTES, BTJIT_KIND_VARBYTES, false, "text_pattern"},
	{F_BYTEACMP, BTJIT_KIND_VARBYTES, BTJIT_KIND_VARBYTES, false, "bytea"},
	/* bpchar: the same after dropping trailing blanks on both sides */
	{F_BPCHARCMP, BTJIT_KIND_BPCHAR, BTJIT_KIND_BPCHAR, true, "bpchar"},
	{F_BTBPCHAR_PATTERN_CMP, BTJIT_KIND_BPCHAR, BTJIT_KIND_BPCHAR, false, "bpchar_pattern"},
	/* name (stored as cstring by name_ops): strncmp, or varstr_cmp */
	{F_BTNAMECMP, BTJIT_KIND_CSTRING, BTJIT_KIND_NAME, true, "name"},
	{F_BTNAMETEXTCMP, BTJIT_KIND_CSTRING, BTJIT_KIND_VARBYTES, true, "name"},
	/* numeric_ops has no cross-type members */
	{F_NUMERIC_CMP, BTJIT_KIND_NUMERIC, BTJIT_KIND_NUMERIC, false, "numeric"},
};

static const BtjitProcInfo *
btjit_proc_info(Oid proc)
{
	for (int i = 0; i < lengthof(btjit_procs); i++)
		if (btjit_procs[i].proc == proc)
			return &btjit_procs[i];
	return NULL;
}

/*
 * Whether a stored value of this kind can have this storage: the inline
 * code reads it with exactly that layout.
 */
static bool
btjit_kind_storage_ok(BtjitValueKind kind, Form_pg_attribute att)
{
	switch (kind)
	{
		case BTJIT_KIND_INT16:
			return att->attbyval && att->attlen == 2;
		case BTJIT_KIND_INT32:
		case BTJIT_KIND_UINT32:
		case BTJIT_KIND_FLOAT4:
			return att->attbyval && att->attlen == 4;
		case BTJIT_KIND_INT64:
		case BTJIT_KIND_FLOAT8:
			return att->attbyval && att->attlen == 8;
		case BTJIT_KIND_BOOL:
		case BTJIT_KIND_UINT8:
			return att->attbyval && att->attlen == 1;
		case BTJIT_KIND_UUID:
			return !att->attbyval && att->attlen == 16;
		case BTJIT_KIND_VARBYTES:
		case BTJIT_KIND_BPCHAR:
		case BTJIT_KIND_NUMERIC:
			return !att->attbyval && att->attlen == -1;
		case BTJIT_KIND_CSTRING:
			/* name_ops stores a cstring; a name column would be 64 bytes */
			return !att->attbyval &&
				(att->attlen == -2 || att->attlen == NAMEDATALEN);
		default:
			return false;
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
 * Which scankey collations the server itself compares in byte order for a
 * column of the index collation coll, or -1 if the index's own collation is
 * not one of them (then the column is called).  Only the built-in C and
 * POSIX collations and the database default are recognised: anything else
 * would need a catalog lookup.  The server answers for the default from
 * the database's collation, set up by InitPostgres, and remembers the
 * answer for the backend's life (pg_compat.h); it is asked only in normal
 * processing mode, i.e. once InitPostgres is done.
 */
static int
btjit_collmode(Oid coll)
{
	if (coll == C_COLLATION_OID || coll == POSIX_COLLATION_OID)
		return BTJIT_COLL_C;
	if (coll == DEFAULT_COLLATION_OID && IsNormalProcessingMode() &&
		BTJIT_DEFAULT_COLLATION_IS_C())
		return BTJIT_COLL_C_DEFAULT;
	return -1;
}

/*
 * The C symbol of a built-in function, as the server's own function manager
 * finds it (fmgr_isbuiltin): the built-in table is what fmgr_info uses for
 * such an OID whatever the catalog says, so the symbol named here is the
 * function a scankey with this proc calls.  NULL for any other function
 * (not internal, or created by CREATE FUNCTION ... LANGUAGE internal).
 */
static const char *
btjit_builtin_symbol(Oid proc)
{
	uint16		index;

	if (proc == InvalidOid || proc > fmgr_last_builtin_oid)
		return NULL;
	index = fmgr_builtin_oid_index[proc];
	if (index == InvalidOidBuiltinMapping)
		return NULL;
	return fmgr_builtins[index].funcName;
}

/*
 * Fill *shape for rel.  Returns false with why when the index has anything
 * the compiled code does not reproduce exactly.
 */
bool
btjit_shape_from_relation(Relation rel, BtjitShape *shape, BtjitWhy *why)
{
	int			nkeys;

	memset(shape, 0, sizeof(BtjitShape));

	if (rel->rd_rel->relam != BTREE_AM_OID)
	{
		btjit_why_set(why, "not a btree index");
		return false;
	}
	nkeys = IndexRelationGetNumberOfKeyAttributes(rel);
	if (nkeys < 1 || nkeys > BTJIT_MAX_KEYS)
	{
		btjit_why_set(why, "%d key columns (at most %d are supported)",
					  nkeys, BTJIT_MAX_KEYS);
		return false;
	}
	shape->nkeys = nkeys;

	for (int i = 0; i < nkeys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), i);
		BtjitColumnShape *col = &shape->cols[i];
		Oid			proc = index_getprocid(rel, i + 1, BTORDER_PROC);
		const BtjitProcInfo *info = btjit_proc_info(proc);
		int			align = btjit_align_bytes(att->attalign);
		int16		option = rel->rd_indoption[i];
		int			collmode = BTJIT_COLL_ANY;

		/* The storage every kind must be able to walk over. */
		if (align == 0 ||
			(att->attbyval ? (att->attlen != 1 && att->attlen != 2 &&
							  att->attlen != 4 && att->attlen != 8) :
			 (att->attlen == 0 || att->attlen < -2)))
		{
			btjit_why_set(why,
						  "key column %d: storage (len %d, byval %d, align '%c') is not understood",
						  i + 1, att->attlen, (int) att->attbyval, att->attalign);
			return false;
		}
		col->attlen = att->attlen;
		col->attalign = align;
		col->attbyval = att->attbyval;
		col->desc = (option & INDOPTION_DESC) != 0;
		col->nulls_first = (option & INDOPTION_NULLS_FIRST) != 0;

		if (info != NULL && info->bytecoll)
			collmode = btjit_collmode(rel->rd_indcollation[i]);
		if (info == NULL || collmode < 0 ||
			!btjit_kind_storage_ok(info->left, att))
		{
			const char *sym = btjit_builtin_symbol(proc);

			/* The scankey's proc, whatever it is, is called ... */
			col->kind = BTJIT_KIND_CALL;
			/* ... or, if it is this built-in, perhaps its imported body. */
			if (sym != NULL && strlen(sym) < BTJIT_BCSYM_LEN)
			{
				col->bcproc = proc;
				strlcpy(col->bcsym, sym, BTJIT_BCSYM_LEN);
			}
			continue;
		}
		col->kind = info->left;
		col->collmode = collmode;

		/*
		 * The column's own proc first, then every known proc of the same
		 * family member that reads the same stored kind (the cross-type
		 * procs).  A scankey carrying any other proc has it called.
		 */
		col->procs[0] = proc;
		col->argkinds[0] = info->right;
		col->nprocs = 1;
		for (int p = 0; p < lengthof(btjit_procs); p++)
		{
			const BtjitProcInfo *other = &btjit_procs[p];

			if (other->proc == proc || other->left != info->left ||
				other->bytecoll != info->bytecoll ||
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

/*
 * How a column is compared, for signatures.  tier is the compiler's verdict
 * on a column naming a bitcode import (BTJIT_BC_*; BTJIT_BC_NONE before
 * compiling), why its reason when it refused (NULL: said already).
 */
static void
btjit_append_column_name(StringInfo s, const BtjitColumnShape *col, char tier,
						 const char *why)
{
	const BtjitProcInfo *info;

	if (col->kind == BTJIT_KIND_CALL)
	{
		if (tier == BTJIT_BC_IMPORTED)
		{
			appendStringInfo(s, "%s bitcode", col->bcsym);
			return;
		}
		if (col->attlen == -1)
			appendStringInfo(s, "call(varlena, align %d", col->attalign);
		else if (col->attlen == -2)
			appendStringInfoString(s, "call(cstring");
		else
			appendStringInfo(s, "call(%s %d, align %d",
							 col->attbyval ? "byval" : "byref",
							 col->attlen, col->attalign);
		if (tier == BTJIT_BC_REFUSED && why != NULL)
			appendStringInfo(s, "; %s not imported: %s", col->bcsym, why);
		else if (tier == BTJIT_BC_REFUSED)
			appendStringInfo(s, "; %s not imported", col->bcsym);
		appendStringInfoChar(s, ')');
		return;
	}
	info = btjit_proc_info(col->procs[0]);
	appendStringInfoString(s, info ? info->name : "?");
	if (col->collmode == BTJIT_COLL_C)
		appendStringInfoString(s, " C");
	else if (col->collmode == BTJIT_COLL_C_DEFAULT)
		appendStringInfoString(s, " C/default");
}

/*
 * Print a shape readably, e.g. "(int4, int8 DESC NULLS LAST)".  Options are
 * shown only where they differ from the default (ASC NULLS LAST; DESC
 * NULLS FIRST).  A called column is "call(<storage>)"; once compiled
 * (btjit_shape_signature_tiers), one whose proc's body was imported from
 * the server's bitcode is "<symbol> bitcode", and one whose import was
 * refused says why inside its call(...).
 */
void
btjit_shape_signature(const BtjitShape *shape, char *buf, size_t buflen)
{
	btjit_shape_signature_tiers(shape, NULL, buf, buflen);
}

/*
 * The same with the compiler's per-column verdicts (BtjitLinkedCode.bcinfo:
 * BTJIT_MAX_KEYS characters BTJIT_BC_*, then the first refusal's reason),
 * or NULL for none.
 */
void
btjit_shape_signature_tiers(const BtjitShape *shape, const char *bcinfo,
							char *buf, size_t buflen)
{
	bool		known = bcinfo != NULL && strlen(bcinfo) >= BTJIT_MAX_KEYS;
	const char *why = known ? bcinfo + BTJIT_MAX_KEYS : "";

	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoChar(&s, '(');
	for (int i = 0; i < shape->nkeys; i++)
	{
		const BtjitColumnShape *col = &shape->cols[i];
		char		tier = known ? bcinfo[i] : BTJIT_BC_NONE;

		if (i > 0)
			appendStringInfoString(&s, ", ");
		btjit_append_column_name(&s, col, tier, why);
		/* the reason of the first refusal, once */
		if (tier == BTJIT_BC_REFUSED)
			why = NULL;
		if (col->desc)
			appendStringInfoString(&s, " DESC");
		if (col->nulls_first != col->desc)
			appendStringInfoString(&s, col->nulls_first ? " NULLS FIRST" : " NULLS LAST");
	}
	appendStringInfoChar(&s, ')');
	strlcpy(buf, s.data, buflen);
	pfree(s.data);
}

/*
 * Where each column of the index's tuples lies when none is NULL, for the
 * module's deform of an index-only scan's row (targets/deform.c): the
 * offsets index_deform_tuple computes and caches (attcacheoff) for such a
 * tuple, each column aligned by its type's alignment after the previous
 * one.  A column of variable width (varlena, cstring) moves every column
 * after it, so such an index is left to the server's function, as is a
 * by-value width fetch_att would refuse.
 */
void
btjit_tuple_layout(TupleDesc desc, BtjitTupleLayout *layout)
{
	int			offset = 0;

	layout->kind = BTJIT_LAYOUT_VARIABLE;
	layout->natts = desc->natts;
	if (desc->natts < 1 || desc->natts > INDEX_MAX_KEYS)
		return;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		BtjitColumnFetch fetch;

		if (att->attlen <= 0)
			return;
		if (!att->attbyval)
			fetch = BTJIT_FETCH_POINTER;
		else if (att->attlen == sizeof(char))
			fetch = BTJIT_FETCH_CHAR;
		else if (att->attlen == sizeof(int16))
			fetch = BTJIT_FETCH_INT16;
		else if (att->attlen == sizeof(int32))
			fetch = BTJIT_FETCH_INT32;
		else if (att->attlen == sizeof(Datum))
			fetch = BTJIT_FETCH_DATUM;
		else
			return;
		offset = att_align_nominal(offset, att->attalign);
		if (offset + att->attlen > INDEX_SIZE_MASK)
			return;				/* no index tuple is that long */
		layout->columns[i].offset = offset;
		layout->columns[i].fetch = fetch;
		offset += att->attlen;
	}
	layout->kind = BTJIT_LAYOUT_FIXED;
}
