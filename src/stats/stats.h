/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  The statistics layer: cluster-wide per-index statistics in shared
 *	  memory, and the SQL-callable functions.
 *
 *	  indexstats.c	the shared hash of per-index counters and the cluster
 *					totals; flushed from each backend's index state
 *	  sqlfuncs.c	the SQL functions and views' rows
 *
 * The top of the module: it reads the layers below (src/runtime/,
 * src/compile/) and nothing below calls it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_STATS_H
#define BTREE_JIT_STATS_H

#include "runtime/runtime.h"

#pragma GCC visibility push(hidden)

extern int	btjit_max_indexes;	/* indexstats.c */

/* Search and compile counts, cluster-wide. */
typedef struct BtjitCounters
{
	uint64		jit_searches;
	uint64		stock_searches;
	uint64		verified_searches;	/* every kind of verified call */
	uint64		compiles;
	uint64		compile_failures;
} BtjitCounters;

/* One index's entry, as a reader sees it. */
typedef struct BtjitIndexStatsRow
{
	Oid			dbid;
	Oid			indexrelid;
	BtjitIndexStats counts;
	double		usage;
	BtjitIndexState state;
	char		reason[BTJIT_REASON_LEN];
	char		signature[BTJIT_SIGNATURE_LEN];
	double		last_compile_ms;
	bool		last_from_object_cache;
	TimestampTz last_code_at;
} BtjitIndexStatsRow;

/*
 * Backends flush their per-index counters at transaction end and exit;
 * readers flush their own first.
 */
extern void btjit_stats_init(void);
extern void btjit_stats_flush(void);
extern void btjit_stats_totals(BtjitCounters *out);
extern void btjit_stats_foreach(void (*cb) (const BtjitIndexStatsRow *row,
											void *arg), void *arg);
extern void btjit_stats_info(int *max_indexes, int64 *entries,
							 int64 *evictions, TimestampTz *stats_reset);
extern void btjit_stats_reset(void);

#pragma GCC visibility pop

#endif							/* BTREE_JIT_STATS_H */
