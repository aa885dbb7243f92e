/*-------------------------------------------------------------------------
 *
 * sqlfuncs.c
 *	  SQL-callable functions: module status, per-index state (this
 *	  backend's, and the cluster's from indexstats.c), the code generated
 *	  for an index, and compiling ahead of time.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_authid_d.h"
#include "catalog/pg_class_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "stats/stats.h"

PG_FUNCTION_INFO_V1(btree_jit_status);
PG_FUNCTION_INFO_V1(btree_jit_status_1_2);
PG_FUNCTION_INFO_V1(btree_jit_index_stats);
PG_FUNCTION_INFO_V1(btree_jit_index_stats_1_2);
PG_FUNCTION_INFO_V1(btree_jit_index_stats_1_3);
PG_FUNCTION_INFO_V1(btree_jit_index_stats_1_4);
PG_FUNCTION_INFO_V1(btree_jit_index_stats_1_5);
PG_FUNCTION_INFO_V1(btree_jit_explain);
PG_FUNCTION_INFO_V1(btree_jit_compile);
PG_FUNCTION_INFO_V1(btree_jit_index_counters);
PG_FUNCTION_INFO_V1(btree_jit_index_counters_1_2);
PG_FUNCTION_INFO_V1(btree_jit_index_counters_1_3);
PG_FUNCTION_INFO_V1(btree_jit_index_counters_1_4);
PG_FUNCTION_INFO_V1(btree_jit_index_counters_1_5);
PG_FUNCTION_INFO_V1(btree_jit_stock_calls);
PG_FUNCTION_INFO_V1(btree_jit_indexes_info);
PG_FUNCTION_INFO_V1(btree_jit_reset);

/*
 * The number of result columns of each function, as declared in the
 * extension's SQL scripts (sql/btree_jit--*.sql).  A function whose
 * columns changed between versions has one C entry point per version, as in
 * pg_stat_statements, so that an installation not yet updated keeps
 * working.  Each function asserts that it filled exactly that many values,
 * and checks at run time that the declared row type has that many columns
 * (an installed SQL script of another version would not).
 */
#define BTJIT_STATUS_COLS		12	/* 1.0 and 1.1 */
#define BTJIT_STATUS_COLS_1_2	19
#define BTJIT_INDEX_STATS_COLS	12	/* 1.0 and 1.1 */
#define BTJIT_INDEX_STATS_COLS_1_2	14	/* + jit_inserts, verified_inserts */
#define BTJIT_INDEX_STATS_COLS_1_3	16	/* + jit_checks, verified_checks */
#define BTJIT_INDEX_STATS_COLS_1_4	20	/* + jit_leafreads, verified_leafreads,
										 * stock_checks, stock_leafreads */
#define BTJIT_INDEX_STATS_COLS_1_5	44	/* + jit_builds, verified_builds,
										 * jit_build_compares,
										 * verified_build_compares,
										 * jit_build_presorts,
										 * verified_build_presorts,
										 * jit_image_compares,
										 * verified_image_compares,
										 * jit_recent_roots,
										 * verified_recent_roots,
										 * jit_recent_reads,
										 * verified_recent_reads,
										 * jit_recent_steps,
										 * verified_recent_steps,
										 * jit_descents,
										 * verified_descents,
										 * jit_scan_starts,
										 * verified_scan_starts,
										 * jit_row_steps,
										 * verified_row_steps,
										 * jit_tid_steps,
										 * verified_tid_steps,
										 * jit_deforms,
										 * verified_deforms */
#define BTJIT_COMPILE_COLS		4
#define BTJIT_INDEX_COUNTERS_COLS	16	/* 1.1 */
#define BTJIT_INDEX_COUNTERS_COLS_1_2	18	/* + jit_inserts, verified_inserts */
#define BTJIT_INDEX_COUNTERS_COLS_1_3	20	/* + jit_checks, verified_checks */
#define BTJIT_INDEX_COUNTERS_COLS_1_4	24	/* + jit_leafreads, verified_leafreads,
											 * stock_checks, stock_leafreads */
#define BTJIT_INDEX_COUNTERS_COLS_1_5	48	/* + jit_builds, verified_builds,
											 * jit_build_compares,
											 * verified_build_compares,
											 * jit_build_presorts,
											 * verified_build_presorts,
											 * jit_image_compares,
											 * verified_image_compares,
											 * jit_recent_roots,
											 * verified_recent_roots,
											 * jit_recent_reads,
											 * verified_recent_reads,
											 * jit_recent_steps,
											 * verified_recent_steps,
											 * jit_descents,
											 * verified_descents,
											 * jit_scan_starts,
											 * verified_scan_starts,
											 * jit_row_steps,
											 * verified_row_steps,
											 * jit_tid_steps,
											 * verified_tid_steps,
											 * jit_deforms,
											 * verified_deforms */
#define BTJIT_STOCK_CALLS_COLS	5	/* 1.4 */
#define BTJIT_INDEXES_INFO_COLS	4

/*
 * Counter columns, in the order the SQL functions return them.  The first
 * versions' counters sit among other columns; the counters added since
 * (each extension version appends its columns at the end) come last: those
 * of 1.2 to 1.4 in btjit_added_counts, then 1.4's stock totals
 * (btjit_put_stock_totals), then those of 1.5 on in btjit_build_counts.  A
 * new counter is a field of BtjitIndexStats, an entry at the end of the
 * last of these and the new version's SQL.
 */
#define BTJIT_COUNT(field) offsetof(BtjitIndexStats, field)

static const size_t btjit_search_counts[] = {
	BTJIT_COUNT(jit_searches), BTJIT_COUNT(stock_searches),
	BTJIT_COUNT(declined_searches), BTJIT_COUNT(verified_searches),
};
static const size_t btjit_compare_counts[] = {
	BTJIT_COUNT(jit_compares), BTJIT_COUNT(verified_compares),
};
static const size_t btjit_compile_counts[] = {
	BTJIT_COUNT(compiles), BTJIT_COUNT(compile_failures),
};
static const size_t btjit_added_counts[] = {
	BTJIT_COUNT(jit_inserts), BTJIT_COUNT(verified_inserts),	/* 1.2 */
	BTJIT_COUNT(jit_checks), BTJIT_COUNT(verified_checks),	/* 1.3 */
	BTJIT_COUNT(jit_leafreads), BTJIT_COUNT(verified_leafreads),	/* 1.4 */
};
static const size_t btjit_build_counts[] = {
	BTJIT_COUNT(jit_builds), BTJIT_COUNT(verified_builds),	/* 1.5 */
	BTJIT_COUNT(jit_build_compares), BTJIT_COUNT(verified_build_compares),
	BTJIT_COUNT(jit_build_presorts), BTJIT_COUNT(verified_build_presorts),
	BTJIT_COUNT(jit_image_compares), BTJIT_COUNT(verified_image_compares),
	BTJIT_COUNT(jit_recent_roots), BTJIT_COUNT(verified_recent_roots),
	BTJIT_COUNT(jit_recent_reads), BTJIT_COUNT(verified_recent_reads),
	BTJIT_COUNT(jit_recent_steps), BTJIT_COUNT(verified_recent_steps),
	BTJIT_COUNT(jit_descents), BTJIT_COUNT(verified_descents),
	BTJIT_COUNT(jit_scan_starts), BTJIT_COUNT(verified_scan_starts),
	BTJIT_COUNT(jit_row_steps), BTJIT_COUNT(verified_row_steps),
	BTJIT_COUNT(jit_tid_steps), BTJIT_COUNT(verified_tid_steps),
	BTJIT_COUNT(jit_deforms), BTJIT_COUNT(verified_deforms),
};

/*
 * Put the counters named by offsets[0..n) into values[] from column i on,
 * as long as the result has columns for them; returns the next column.
 */
static int
btjit_put_counts(Datum *values, int i, int natts,
				 const BtjitIndexStats *counts, const size_t *offsets, int n)
{
	for (int k = 0; k < n && i < natts; k++)
		values[i++] = Int64GetDatum((int64) *(const uint64 *)
									((const char *) counts + offsets[k]));
	return i;
}

/* What runs the server's code instead of compiled code (runtime.h) */
typedef enum BtjitStockWork
{
	BTJIT_STOCK_WORK_CHECK,
	BTJIT_STOCK_WORK_LEAFREAD,
} BtjitStockWork;

#define BTJIT_STOCK_NWORKS (BTJIT_STOCK_WORK_LEAFREAD + 1)

static const char *const btjit_stock_work_names[BTJIT_STOCK_NWORKS] = {
	[BTJIT_STOCK_WORK_CHECK] = "key check",
	[BTJIT_STOCK_WORK_LEAFREAD] = "leaf read",
};

static const char *const btjit_stock_reason_names[BTJIT_STOCK_NREASONS] = {
	[BTJIT_STOCK_ARRAY_KEYS] = "array keys",
	[BTJIT_STOCK_SKIP_ARRAYS] = "skip arrays",
	[BTJIT_STOCK_ROW_COMPARE] = "row comparison",
	[BTJIT_STOCK_NULLS] = "NULLs",
	[BTJIT_STOCK_NOT_COMPILED] = "not compiled",
	[BTJIT_STOCK_DECLINED] = "declined",
};

static const uint64 *
btjit_stock_counts(const BtjitIndexStats *counts, BtjitStockWork work)
{
	return work == BTJIT_STOCK_WORK_CHECK ?
		counts->stock_checks : counts->stock_leafreads;
}

/*
 * From 1.4, after the added counters: the scan-key checks and the leaf
 * reads that ran the server's code, of every reason.
 */
static int
btjit_put_stock_totals(Datum *values, int i, int natts,
					   const BtjitIndexStats *counts)
{
	for (int w = 0; w < BTJIT_STOCK_NWORKS && i < natts; w++)
	{
		const uint64 *by_reason = btjit_stock_counts(counts, w);
		uint64		total = 0;

		for (int r = 0; r < BTJIT_STOCK_NREASONS; r++)
			total += by_reason[r];
		values[i++] = Int64GetDatum((int64) total);
	}
	return i;
}

/*
 * Raise a clear error if the function's declared result has not the number
 * of columns this module fills.
 */
static void
btjit_check_result_columns(const char *function, TupleDesc tupdesc,
						   int ncolumns)
{
	if (tupdesc->natts != ncolumns)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s() is declared to return %d columns, but the btree_jit module returns %d",
						function, tupdesc->natts, ncolumns),
				 errhint("The extension's SQL objects do not match the installed module; reinstall btree_jit or run ALTER EXTENSION btree_jit UPDATE.")));
}

static const char *
btjit_state_name(BtjitIndexState state)
{
	switch (state)
	{
		case BTJIT_INDEX_JIT:
			return "jit";
		case BTJIT_INDEX_STOCK:
			return "stock";
		case BTJIT_INDEX_QUEUED:
			return "queued";
		default:
			return "pending";
	}
}

/*
 * Cluster totals as of now: every backend's counts up to its last
 * transaction end, this backend's up to this moment.
 */
static void
btjit_total_counters(BtjitCounters *out)
{
	btjit_stats_flush();
	btjit_stats_totals(out);
}

/*
 * btree_jit_status(): the module's state and the cluster-wide counters;
 * from 1.2 also the compile worker's (ncolumns says which).
 */
static Datum
btjit_status_internal(FunctionCallInfo fcinfo, int ncolumns)
{
	TupleDesc	tupdesc;
	Datum		values[BTJIT_STATUS_COLS_1_2];
	bool		nulls[BTJIT_STATUS_COLS_1_2];
	BtjitCounters totals;
	const BtjitLocation *loc = &btjit_module.location;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	btjit_check_result_columns("btree_jit_status", tupdesc, ncolumns);

	memset(nulls, 0, sizeof(nulls));
	btjit_total_counters(&totals);

	values[i++] = BoolGetDatum(btjit_module.active);
	values[i++] = CStringGetTextDatum(btjit_module.reason[0] ? btjit_module.reason : "unknown");
	values[i++] = CStringGetTextDatum(GetConfigOption("server_version", false, false));
	if (loc->build_id[0])
		values[i++] = CStringGetTextDatum(loc->build_id);
	else
		nulls[i++] = true;
	if (loc->binsrch != 0)
	{
		char		addr[320];

		snprintf(addr, sizeof(addr), "%s+0x%lx", loc->binary_path,
				 (unsigned long) (loc->binsrch - loc->load_bias));
		values[i++] = CStringGetTextDatum(addr);
	}
	else
		nulls[i++] = true;
	values[i++] = Int32GetDatum(btjit_module.active ? loc->ncallsites : 0);
	if (loc->evidence[0])
		values[i++] = CStringGetTextDatum(loc->evidence);
	else
		nulls[i++] = true;
	values[i++] = Int64GetDatum((int64) totals.jit_searches);
	values[i++] = Int64GetDatum((int64) totals.stock_searches);
	values[i++] = Int64GetDatum((int64) totals.verified_searches);
	values[i++] = Int64GetDatum((int64) totals.compiles);
	values[i++] = Int64GetDatum((int64) totals.compile_failures);

	if (ncolumns >= BTJIT_STATUS_COLS_1_2)
	{
		BtjitWorkerStatus ws;

		btjit_worker_status(&ws);
		if (ws.worker_pid != 0)
			values[i++] = Int32GetDatum(ws.worker_pid);
		else
			nulls[i++] = true;
		values[i++] = Int32GetDatum(ws.queue_length);
		values[i++] = Int64GetDatum((int64) ws.compiles);
		values[i++] = Int64GetDatum((int64) ws.failures);
		values[i++] = Int64GetDatum((int64) ws.queue_full);
		if (ws.last_compile_at != 0)
		{
			values[i++] = Float8GetDatum(ws.last_compile_ms);
			values[i++] = TimestampTzGetDatum(ws.last_compile_at);
		}
		else
		{
			nulls[i++] = true;
			nulls[i++] = true;
		}
	}
	Assert(i == ncolumns);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* 1.0 and 1.1 */
Datum
btree_jit_status(PG_FUNCTION_ARGS)
{
	return btjit_status_internal(fcinfo, BTJIT_STATUS_COLS);
}

/* 1.2: with the compile worker's columns */
Datum
btree_jit_status_1_2(PG_FUNCTION_ARGS)
{
	return btjit_status_internal(fcinfo, BTJIT_STATUS_COLS_1_2);
}

/* One row of btree_jit_index_stats(), for one index this backend knows. */
static void
btjit_stats_row(BtjitIndex *ix, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	int			natts = rsinfo->setDesc->natts;
	Datum		values[BTJIT_INDEX_STATS_COLS_1_5];
	bool		nulls[BTJIT_INDEX_STATS_COLS_1_5];
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	values[i++] = ObjectIdGetDatum(ix->indexrelid);
	values[i++] = CStringGetTextDatum(btjit_state_name(ix->state));
	if (ix->reason[0])
		values[i++] = CStringGetTextDatum(ix->reason);
	else
		nulls[i++] = true;
	if (ix->signature[0])
		values[i++] = CStringGetTextDatum(ix->signature);
	else
		nulls[i++] = true;
	i = btjit_put_counts(values, i, natts, &ix->counts, btjit_search_counts,
						 lengthof(btjit_search_counts));
	if (ix->code != NULL)
	{
		values[i++] = Float8GetDatum(ix->code->compile_ms);
		values[i++] = CStringGetTextDatum(ix->code->from_object_cache ?
										  "object cache" : "compiled");
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
	}
	i = btjit_put_counts(values, i, natts, &ix->counts, btjit_compare_counts,
						 lengthof(btjit_compare_counts));
	Assert(i == BTJIT_INDEX_STATS_COLS);
	i = btjit_put_counts(values, i, natts, &ix->counts, btjit_added_counts,
						 lengthof(btjit_added_counts));
	i = btjit_put_stock_totals(values, i, natts, &ix->counts);
	i = btjit_put_counts(values, i, natts, &ix->counts, btjit_build_counts,
						 lengthof(btjit_build_counts));
	Assert(i == natts);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * btree_jit_index_stats(): this backend's state of every index it knows,
 * with ncolumns columns (1.2 added the insertion searches, 1.3 the
 * scan-key checks, 1.4 the leaf reads, 1.5 the builds).
 */
static Datum
btjit_index_stats_internal(FunctionCallInfo fcinfo, int ncolumns)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	btjit_check_result_columns("btree_jit_index_stats", rsinfo->setDesc,
							   ncolumns);
	btjit_index_foreach(btjit_stats_row, fcinfo->resultinfo);
	return (Datum) 0;
}

Datum
btree_jit_index_stats(PG_FUNCTION_ARGS)
{
	return btjit_index_stats_internal(fcinfo, BTJIT_INDEX_STATS_COLS);
}

Datum
btree_jit_index_stats_1_2(PG_FUNCTION_ARGS)
{
	return btjit_index_stats_internal(fcinfo, BTJIT_INDEX_STATS_COLS_1_2);
}

Datum
btree_jit_index_stats_1_3(PG_FUNCTION_ARGS)
{
	return btjit_index_stats_internal(fcinfo, BTJIT_INDEX_STATS_COLS_1_3);
}

Datum
btree_jit_index_stats_1_4(PG_FUNCTION_ARGS)
{
	return btjit_index_stats_internal(fcinfo, BTJIT_INDEX_STATS_COLS_1_4);
}

Datum
btree_jit_index_stats_1_5(PG_FUNCTION_ARGS)
{
	return btjit_index_stats_internal(fcinfo, BTJIT_INDEX_STATS_COLS_1_5);
}

/*
 * Open a btree index named by the caller, with clear errors for anything
 * else: a dropped OID, a table, an index of another access method.
 */
static Relation
btjit_open_btree_index(Oid relid)
{
	Relation	rel;

	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (rel->rd_rel->relkind != RELKIND_INDEX ||
		rel->rd_rel->relam != BTREE_AM_OID)
	{
		char	   *name = pstrdup(RelationGetRelationName(rel));

		relation_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a btree index", name)));
	}
	return rel;
}

/* btree_jit_explain(): the optimised IR or machine code for an index. */
Datum
btree_jit_explain(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *format = text_to_cstring(PG_GETARG_TEXT_PP(1));
	bool		assembly;
	Relation	rel;
	BtjitShape	shape;
	BtjitWhy	why;
	char	   *result;

	if (strcmp(format, "ir") == 0)
		assembly = false;
	else if (strcmp(format, "asm") == 0)
		assembly = true;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized format \"%s\"", format),
				 errhint("Valid formats are \"ir\" and \"asm\".")));

	rel = btjit_open_btree_index(relid);
	if (!btjit_shape_from_relation(rel, &shape, &why))
	{
		char	   *name = pstrdup(RelationGetRelationName(rel));

		relation_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index \"%s\" uses the server's own page search", name),
				 errdetail_internal("%s", why.text)));
	}
	relation_close(rel, AccessShareLock);

	result = btjit_explain_shape(&shape, assembly);
	PG_RETURN_TEXT_P(cstring_to_text(result));
}

/*
 * btree_jit_compile(): examine an index now, compiling its shape if need
 * be, whatever btree_jit.compile_threshold says; returns its state.
 */
Datum
btree_jit_compile(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	TupleDesc	tupdesc;
	Relation	rel;
	BtjitIndex *ix;
	Datum		values[BTJIT_COMPILE_COLS];
	bool		nulls[BTJIT_COMPILE_COLS];
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	btjit_check_result_columns("btree_jit_compile", tupdesc, BTJIT_COMPILE_COLS);

	rel = btjit_open_btree_index(relid);
	ix = btjit_dispatch_open(rel, true);
	relation_close(rel, AccessShareLock);

	memset(nulls, 0, sizeof(nulls));
	values[i++] = CStringGetTextDatum(btjit_state_name(ix->state));
	if (ix->signature[0])
		values[i++] = CStringGetTextDatum(ix->signature);
	else
		nulls[i++] = true;
	if (ix->reason[0])
		values[i++] = CStringGetTextDatum(ix->reason);
	else
		nulls[i++] = true;
	if (ix->code != NULL)
		values[i++] = Float8GetDatum(ix->code->compile_ms);
	else
		nulls[i++] = true;
	Assert(i == BTJIT_COMPILE_COLS);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* The rows a function over the shared entries puts out for one entry. */
typedef void (*BtjitEntryRowsFn) (const BtjitIndexStatsRow *row,
								  ReturnSetInfo *rsinfo);

/* What btjit_visible_entries() hands each shared entry. */
typedef struct BtjitEntriesScan
{
	ReturnSetInfo *rsinfo;
	bool		all_databases;	/* the caller may see every database's */
	BtjitEntryRowsFn rows;
} BtjitEntriesScan;

/*
 * A shared entry the caller may see: of the current database or a shared
 * catalog, or of any database for members of pg_read_all_stats (an
 * index's OID, key signature and counts say what another database's
 * application does, as its queries do in pg_stat_statements).
 */
static void
btjit_visible_entry(const BtjitIndexStatsRow *row, void *arg)
{
	BtjitEntriesScan *scan = (BtjitEntriesScan *) arg;

	if (!scan->all_databases && OidIsValid(row->dbid) &&
		row->dbid != MyDatabaseId)
		return;
	scan->rows(row, scan->rsinfo);
}

/*
 * A set-returning function over the shared entries the caller may see,
 * declared with ncolumns columns: rows() puts out each entry's rows.
 */
static Datum
btjit_visible_entries(FunctionCallInfo fcinfo, const char *function,
					  int ncolumns, BtjitEntryRowsFn rows)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BtjitEntriesScan scan;

	InitMaterializedSRF(fcinfo, 0);
	btjit_check_result_columns(function, rsinfo->setDesc, ncolumns);
	scan.rsinfo = rsinfo;
	scan.all_databases = has_privs_of_role(GetUserId(),
										   ROLE_PG_READ_ALL_STATS);
	scan.rows = rows;
	btjit_stats_foreach(btjit_visible_entry, &scan);
	return (Datum) 0;
}

/* One row of btree_jit_index_counters(), for one shared entry. */
static void
btjit_counters_row(const BtjitIndexStatsRow *row, ReturnSetInfo *rsinfo)
{
	int			natts = rsinfo->setDesc->natts;
	Datum		values[BTJIT_INDEX_COUNTERS_COLS_1_5];
	bool		nulls[BTJIT_INDEX_COUNTERS_COLS_1_5];
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	values[i++] = ObjectIdGetDatum(row->dbid);
	values[i++] = ObjectIdGetDatum(row->indexrelid);
	values[i++] = CStringGetTextDatum(btjit_state_name(row->state));
	if (row->reason[0])
		values[i++] = CStringGetTextDatum(row->reason);
	else
		nulls[i++] = true;
	if (row->signature[0])
		values[i++] = CStringGetTextDatum(row->signature);
	else
		nulls[i++] = true;
	i = btjit_put_counts(values, i, natts, &row->counts, btjit_search_counts,
						 lengthof(btjit_search_counts));
	i = btjit_put_counts(values, i, natts, &row->counts, btjit_compare_counts,
						 lengthof(btjit_compare_counts));
	i = btjit_put_counts(values, i, natts, &row->counts, btjit_compile_counts,
						 lengthof(btjit_compile_counts));
	if (row->last_code_at != 0)
	{
		values[i++] = Float8GetDatum(row->last_compile_ms);
		values[i++] = CStringGetTextDatum(row->last_from_object_cache ?
										  "object cache" : "compiled");
		values[i++] = TimestampTzGetDatum(row->last_code_at);
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
		nulls[i++] = true;
	}
	Assert(i == BTJIT_INDEX_COUNTERS_COLS);
	i = btjit_put_counts(values, i, natts, &row->counts, btjit_added_counts,
						 lengthof(btjit_added_counts));
	i = btjit_put_stock_totals(values, i, natts, &row->counts);
	i = btjit_put_counts(values, i, natts, &row->counts, btjit_build_counts,
						 lengthof(btjit_build_counts));
	Assert(i == natts);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * btree_jit_index_counters(): the cluster-wide statistics of every index
 * any backend has searched, in the current database and of shared
 * catalogs, and in every database for members of pg_read_all_stats (the
 * view btree_jit_indexes adds names for the current one).
 */
static Datum
btjit_index_counters_internal(FunctionCallInfo fcinfo, int ncolumns)
{
	return btjit_visible_entries(fcinfo, "btree_jit_index_counters", ncolumns,
								 btjit_counters_row);
}

Datum
btree_jit_index_counters(PG_FUNCTION_ARGS)
{
	return btjit_index_counters_internal(fcinfo, BTJIT_INDEX_COUNTERS_COLS);
}

Datum
btree_jit_index_counters_1_2(PG_FUNCTION_ARGS)
{
	return btjit_index_counters_internal(fcinfo, BTJIT_INDEX_COUNTERS_COLS_1_2);
}

Datum
btree_jit_index_counters_1_3(PG_FUNCTION_ARGS)
{
	return btjit_index_counters_internal(fcinfo, BTJIT_INDEX_COUNTERS_COLS_1_3);
}

Datum
btree_jit_index_counters_1_4(PG_FUNCTION_ARGS)
{
	return btjit_index_counters_internal(fcinfo, BTJIT_INDEX_COUNTERS_COLS_1_4);
}

Datum
btree_jit_index_counters_1_5(PG_FUNCTION_ARGS)
{
	return btjit_index_counters_internal(fcinfo, BTJIT_INDEX_COUNTERS_COLS_1_5);
}

/*
 * The rows of btree_jit_stock_calls() for one shared entry, visible as in
 * btree_jit_index_counters(): one per kind of work and reason that
 * counted anything.
 */
static void
btjit_stock_calls_rows(const BtjitIndexStatsRow *row, ReturnSetInfo *rsinfo)
{
	for (int w = 0; w < BTJIT_STOCK_NWORKS; w++)
	{
		const uint64 *by_reason = btjit_stock_counts(&row->counts, w);

		for (int r = 0; r < BTJIT_STOCK_NREASONS; r++)
		{
			Datum		values[BTJIT_STOCK_CALLS_COLS];
			bool		nulls[BTJIT_STOCK_CALLS_COLS] = {0};

			if (by_reason[r] == 0)
				continue;
			values[0] = ObjectIdGetDatum(row->dbid);
			values[1] = ObjectIdGetDatum(row->indexrelid);
			values[2] = CStringGetTextDatum(btjit_stock_work_names[w]);
			values[3] = CStringGetTextDatum(btjit_stock_reason_names[r]);
			values[4] = Int64GetDatum((int64) by_reason[r]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
}

/*
 * btree_jit_stock_calls() (1.4): of the scan-key checks and leaf reads of
 * the indexes btree_jit_index_counters() shows, those that ran the
 * server's code rather than compiled code, by reason (the view
 * btree_jit_stock_calls adds names).
 */
Datum
btree_jit_stock_calls(PG_FUNCTION_ARGS)
{
	return btjit_visible_entries(fcinfo, "btree_jit_stock_calls",
								 BTJIT_STOCK_CALLS_COLS,
								 btjit_stock_calls_rows);
}

/* btree_jit_indexes_info(): the shared table's bound, size and evictions. */
Datum
btree_jit_indexes_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[BTJIT_INDEXES_INFO_COLS];
	bool		nulls[BTJIT_INDEXES_INFO_COLS];
	int			max_indexes;
	int64		entries;
	int64		evictions;
	TimestampTz stats_reset;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	btjit_check_result_columns("btree_jit_indexes_info", tupdesc,
							   BTJIT_INDEXES_INFO_COLS);

	btjit_stats_info(&max_indexes, &entries, &evictions, &stats_reset);
	memset(nulls, 0, sizeof(nulls));
	values[i++] = Int32GetDatum(max_indexes);
	values[i++] = Int64GetDatum(entries);
	values[i++] = Int64GetDatum(evictions);
	values[i++] = TimestampTzGetDatum(stats_reset);
	Assert(i == BTJIT_INDEXES_INFO_COLS);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* btree_jit_reset(): forget every index's statistics and the totals. */
Datum
btree_jit_reset(PG_FUNCTION_ARGS)
{
	btjit_stats_reset();
	PG_RETURN_VOID();
}
