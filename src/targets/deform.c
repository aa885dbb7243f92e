/*-------------------------------------------------------------------------
 *
 * deform.c
 *	  An index-only scan's row taken out of its index tuple: the redirected
 *	  index_deform_tuple_internal (PostgreSQL 15, 17, 18), for the tuples
 *	  of a B-tree index the module steps through whose columns all have a
 *	  fixed width.
 *
 * An index-only scan of a B-tree index hands each row's index tuple to
 * index_deform_tuple with the index's tuple descriptor; that wrapper finds
 * the tuple's data and NULL bitmap and calls index_deform_tuple_internal,
 * which walks the descriptor column by column: whether the column is NULL,
 * its cached offset or its alignment, its width, how to fetch it.  For an
 * index whose columns all have a fixed width and a tuple without NULLs,
 * every one of those answers is known when the index gets compiled code
 * (runtime/keyshape.c, btjit_tuple_layout): what is left is a load and a
 * store per column.
 *
 * The internal function is the one redirected because it is the one every
 * build's index-only scan reaches: Debian's executor calls the wrapper,
 * which jumps to it, while a link-time optimised server (Ubuntu's, the EL
 * packages') inlines the wrapper into its callers and calls it directly.
 *
 * The descriptor identifies the index: the one of the index whose scan
 * took the last step from item to item (btjit_step_index, set by
 * targets/gettuple.c), which in an index-only scan is the scan that just
 * returned the tuple, is kept with the step's entry when its layout is
 * fixed.  One comparison of pointers then decides, and any other caller
 * (another descriptor, as index_truncate_tuple's copy, another access
 * method, a tuple with NULLs) gets the server's function.
 *
 * verify mode: the server's function deforms the tuple into the caller's
 * arrays, and the module's deform into its own must give every column the
 * same value and NULL flag.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/itup.h"
#include "utils/rel.h"

#include "targets/targets.h"

#ifdef BTJIT_DEFORM_REDIRECTABLE

typedef void (*BtjitDeformFn) (TupleDesc desc, Datum *values, bool *isnull,
							   char *data, bits8 *nullbits, int hasnulls);

#define BTJIT_STOCK_DEFORM \
	((BtjitDeformFn) btjit_module.stock[BTJIT_TARGET_DEFORM])

static void btjit_dispatch_deform(TupleDesc desc, Datum *values, bool *isnull,
								  char *data, bits8 *nullbits, int hasnulls);

const BtjitTargetImpl btjit_target_deform = {
	.dispatcher = (void *) btjit_dispatch_deform,
};

/*
 * A column's value at p, as fetch_att fetches it: the two widths of most
 * integer keys tested first.
 */
static inline Datum
deform_column(BtjitColumnFetch fetch, const char *p)
{
	if (likely(fetch == BTJIT_FETCH_INT32))
		return Int32GetDatum(*(const int32 *) p);
	if (fetch == BTJIT_FETCH_DATUM)
		return *(const Datum *) p;
	switch (fetch)
	{
		case BTJIT_FETCH_CHAR:
			return CharGetDatum(*p);
		case BTJIT_FETCH_INT16:
			return Int16GetDatum(*(const int16 *) p);
		case BTJIT_FETCH_POINTER:
			return PointerGetDatum(p);
		default:
			pg_unreachable();	/* btjit_tuple_layout sets no other */
	}
}

/*
 * The columns of a tuple without NULLs, whose data starts at data, at the
 * layout's offsets.  An index has at least one column; the first, at
 * offset 0, is fetched before the loop, which most indexes of one column
 * never enter.
 */
static inline void
deform_fixed(const BtjitTupleLayout *layout, const char *data,
			 Datum *values, bool *isnull)
{
	int			natts = layout->natts;

	values[0] = deform_column(layout->columns[0].fetch, data);
	isnull[0] = false;
	for (int i = 1; i < natts; i++)
	{
		values[i] = deform_column(layout->columns[i].fetch,
								  data + layout->columns[i].offset);
		isnull[i] = false;
	}
}

/* verify mode: the server's deform, and the module's compared with it */
static pg_noinline void
deform_verify(TupleDesc desc, Datum *values, bool *isnull,
			  char *data, bits8 *nullbits, int hasnulls)
{
	BtjitIndex *ix = btjit_step_index.ix;
	const BtjitTupleLayout *layout;
	Datum		module_values[INDEX_MAX_KEYS];
	bool		module_isnull[INDEX_MAX_KEYS];

	BTJIT_STOCK_DEFORM(desc, values, isnull, data, nullbits, hasnulls);
	if (desc != btjit_step_index.fixed_desc || hasnulls)
		return;
	layout = &ix->layout;
	deform_fixed(layout, data, module_values, module_isnull);
	ix->counts.jit_deforms++;
	for (int i = 0; i < layout->natts; i++)
	{
		if (module_values[i] != values[i] || module_isnull[i] != isnull[i])
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("btree_jit: the columns the module took out of a tuple of index \"%s\" differ from the server's index_deform_tuple_internal",
							RelationGetRelationName(btjit_step_index.rel)),
					 errdetail("Column %d of %d: the module's value is 0x%llx%s, the server's 0x%llx%s.",
							   i + 1, layout->natts,
							   (unsigned long long) module_values[i],
							   module_isnull[i] ? " (NULL)" : "",
							   (unsigned long long) values[i],
							   isnull[i] ? " (NULL)" : ""),
					 errhint(BTJIT_VERIFY_HINT)));
	}
	ix->counts.verified_deforms++;
}

/*
 * index_deform_tuple_internal, redirected.  The module off costs a call two
 * tests; a descriptor other than the stepped index's, or a tuple with
 * NULLs, one or two more.
 */
static void
btjit_dispatch_deform(TupleDesc desc, Datum *values, bool *isnull,
					  char *data, bits8 *nullbits, int hasnulls)
{
	BtjitIndex *ix;

	if (unlikely(!btjit_fast_ok))
	{
		if (btjit_code_active)
			deform_verify(desc, values, isnull, data, nullbits, hasnulls);
		else
			BTJIT_STOCK_DEFORM(desc, values, isnull, data, nullbits, hasnulls);
		return;
	}
	if (desc != btjit_step_index.fixed_desc || hasnulls)
	{
		BTJIT_STOCK_DEFORM(desc, values, isnull, data, nullbits, hasnulls);
		return;
	}
	ix = btjit_step_index.ix;
	deform_fixed(&ix->layout, data, values, isnull);
	ix->counts.jit_deforms++;
}

#else							/* !BTJIT_DEFORM_REDIRECTABLE */

const BtjitTargetImpl btjit_target_deform = {0};

#endif							/* BTJIT_DEFORM_REDIRECTABLE */
