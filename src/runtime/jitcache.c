/*-------------------------------------------------------------------------
 *
 * jitcache.c
 *	  Per-backend caches: compiled code by key shape, and index state by
 *	  index OID (the dispatcher's slot table points into it).
 *
 * Many indexes share one shape (every single-int4 primary key has the
 * same), so code is compiled once per shape and looked up by value.  Index
 * state is examined on the first search after the index's relcache entry
 * was built or invalidated; the relcache callback forgets state that DDL
 * may have made stale (REINDEX, DROP, ALTER), and the next search examines
 * the index again, which costs a shape derivation and a cache lookup.
 *
 * The per-index counters are this backend's record of its searches;
 * stats/indexstats.c reads them (btjit_index_list) and adds what they gained
 * to shared memory at transaction end and at backend exit.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "runtime/runtime.h"

/*
 * Both switches on (btree_jit.cluster_enabled and the session's enabled):
 * what every dispatcher tests.  dispatch.c derives it in the settings'
 * assign hooks; it lives here, below dispatch.c, which reads this file's
 * state and not the reverse.
 */
bool		btjit_enabled = true;
int			btjit_compile_threshold = 64;
int			btjit_max_signatures = 64;
bool		btjit_code_present = false;
bool		btjit_code_active = false;

static HTAB *btjit_index_hash = NULL;
/* the same entries as an array, for the per-transaction flush */
static BtjitIndex **btjit_indexes = NULL;
static int	btjit_nindexes = 0;
static int	btjit_indexes_alloc = 0;
static BtjitCode *btjit_codes = NULL;	/* every shape compiled or tried */
static int	btjit_ncodes = 0;
static uint64 btjit_ncompiles = 0;
static uint64 btjit_ncompile_failures = 0;

static void btjit_relcache_callback(Datum arg, Oid relid);
static void btjit_index_examine(Relation rel, BtjitIndex *ix, bool force);
static BtjitCode *btjit_code_for_shape(const BtjitShape *shape,
									   bool inline_only,
									   BtjitWhy *why);

/* An index has received compiled code (runtime.h). */
static void
btjit_set_code_present(void)
{
	btjit_code_present = true;
	btjit_code_active = btjit_enabled;
}

/*
 * Called from _PG_init in the postmaster; backends inherit the callback
 * registration through fork.
 */
void
btjit_cache_init(void)
{
	CacheRegisterRelcacheCallback(btjit_relcache_callback, (Datum) 0);
}

/* Return an index to the undecided state; its counters are kept. */
static void
btjit_forget_index(BtjitIndex *ix)
{
	ix->state = BTJIT_INDEX_UNKNOWN;
	ix->fn = NULL;
	memset(ix->entries, 0, sizeof(ix->entries));
	ix->code = NULL;
	ix->pending_code = NULL;
	ix->due_searches = 0;
}

/*
 * Relcache invalidation: forget the state of the index (or of every index,
 * for InvalidOid), so that the next search examines it again (dispatch.c
 * empties its slots in a callback of its own).
 */
static void
btjit_relcache_callback(Datum arg, Oid relid)
{
	if (btjit_index_hash == NULL)
		return;

	if (!OidIsValid(relid))
	{
		HASH_SEQ_STATUS status;
		BtjitIndex *ix;

		hash_seq_init(&status, btjit_index_hash);
		while ((ix = hash_seq_search(&status)) != NULL)
			btjit_forget_index(ix);
	}
	else
	{
		BtjitIndex *ix = hash_search(btjit_index_hash, &relid, HASH_FIND, NULL);

		if (ix != NULL)
			btjit_forget_index(ix);
	}
}

/*
 * Slow path of the dispatcher (and btree_jit_compile(), which forces the
 * examination): find or create the state of this index, and examine it
 * once it has been searched often enough.  The caller points the index's
 * slot at the result (btjit_dispatch_open).
 */
BtjitIndex *
btjit_index_open(Relation rel, bool force)
{
	BtjitIndex *ix;
	bool		found;

	if (btjit_index_hash == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(BtjitIndex);
		ctl.hcxt = TopMemoryContext;
		btjit_index_hash = hash_create("btree_jit index state", 64, &ctl,
									   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	/*
	 * Room in the array for one more index first, so that an error leaves
	 * the array and the hash consistent; then one probe finds or enters it.
	 */
	if (btjit_nindexes >= btjit_indexes_alloc)
	{
		int			n = Max(64, btjit_indexes_alloc * 2);

		btjit_indexes = btjit_indexes == NULL ?
			MemoryContextAlloc(TopMemoryContext, n * sizeof(BtjitIndex *)) :
			repalloc(btjit_indexes, n * sizeof(BtjitIndex *));
		btjit_indexes_alloc = n;
	}
	ix = hash_search(btjit_index_hash, &rel->rd_id, HASH_ENTER, &found);
	if (!found)
	{
		memset(ix, 0, sizeof(BtjitIndex));
		ix->indexrelid = rel->rd_id;
		ix->shared_catalog = rel->rd_rel->relisshared;
		btjit_indexes[btjit_nindexes++] = ix;
	}

	/*
	 * Compile lazily: an index searched only a few times in this backend
	 * (the catalog lookups of a short connection, say) is not worth it.  A
	 * parallel worker lives for one query, whose index its leader has
	 * searched (and compiled) before: it examines at once, and links
	 * cached code without compiling (policy.c).
	 */
	if ((ix->state == BTJIT_INDEX_UNKNOWN &&
		 (force || (btjit_enabled &&
					(ix->counts.stock_searches >= (uint64) btjit_compile_threshold ||
					 IsParallelWorker())))) ||
		(ix->state == BTJIT_INDEX_QUEUED &&
		 (force || btjit_index_compile_done(ix))) ||
		(ix->state == BTJIT_INDEX_STOCK && btjit_index_recheck_due(ix)))
		btjit_index_examine(rel, ix, force);
	else if (ix->state == BTJIT_INDEX_QUEUED && btjit_index_recheck_due(ix))
	{
		/*
		 * Tell the worker how busy this index keeps it waiting: the searches
		 * since the last report, which was due_searches' previous setting.
		 */
		btjit_compile_demand(ix->pending_code,
							 ix->counts.stock_searches -
							 (ix->due_searches - BTJIT_DEMAND_REPORT_SEARCHES));
		ix->due_searches = ix->counts.stock_searches +
			BTJIT_DEMAND_REPORT_SEARCHES;
	}

	return ix;
}

/*
 * This backend's state of an index, without creating or examining it; NULL
 * when it has none (a build that decided not to compile asks this: a
 * build is not a search, and the threshold of searches says nothing of it).
 */
BtjitIndex *
btjit_index_find(Relation rel)
{
	if (btjit_index_hash == NULL)
		return NULL;
	return hash_search(btjit_index_hash, &rel->rd_id, HASH_FIND, NULL);
}

/*
 * Decide whether this index gets compiled code.  Must not raise errors for
 * anything the index or LLVM does: a refusal is a state with a reason.
 */
static void
btjit_index_examine(Relation rel, BtjitIndex *ix, bool force)
{
	BtjitShape	shape;
	BtjitCode  *code;
	BtjitWhy	why;
	uint64		ncompiles = btjit_ncompiles;
	uint64		nfailures = btjit_ncompile_failures;

	/*
	 * Compiling allocates memory; never do that in a critical section, in
	 * bootstrap mode or in the postmaster.  Stay undecided and retry later.
	 */
	if (CritSectionCount > 0 || !IsNormalProcessingMode() ||
		(IsPostmasterEnvironment && !IsUnderPostmaster))
		return;

	/* a settled state is reported to the shared statistics */
	ix->stats_state_changed = true;
	ix->pending_code = NULL;
	ix->due_searches = 0;

	if (!btjit_module.active)
	{
		ix->state = BTJIT_INDEX_STOCK;
		strlcpy(ix->reason, "module inactive", sizeof(ix->reason));
		return;
	}

	if (!btjit_shape_from_relation(rel, &shape, &why))
	{
		ix->state = BTJIT_INDEX_STOCK;
		ix->signature[0] = '\0';
		strlcpy(ix->reason, why.text, sizeof(ix->reason));
		return;
	}

	code = btjit_code_for_shape(&shape, force, &why);
	/* the shape's signature, which the code has made already */
	if (code != NULL)
		strlcpy(ix->signature, code->signature, sizeof(ix->signature));
	else
		btjit_shape_signature(&shape, ix->signature, sizeof(ix->signature));
	/* the index is charged with a compile it caused, not one it reused */
	ix->counts.compiles += btjit_ncompiles - ncompiles;
	ix->counts.compile_failures += btjit_ncompile_failures - nfailures;
	if (code != NULL && code->queued)
	{
		/* stock path until the compile generation moves past this one */
		ix->state = BTJIT_INDEX_QUEUED;
		ix->queued_generation = code->queued_generation;
		ix->pending_code = code;
		ix->due_searches = ix->counts.stock_searches +
			BTJIT_DEMAND_REPORT_SEARCHES;
		strlcpy(ix->reason, why.text, sizeof(ix->reason));
		return;
	}
	if (code == NULL || code->linked.search == NULL)
	{
		ix->state = BTJIT_INDEX_STOCK;
		strlcpy(ix->reason, why.text, sizeof(ix->reason));
		/* a failure is retried in time (btjit_code_for_shape) */
		if (code != NULL)
		{
			ix->pending_code = code;
			ix->due_searches = ix->counts.stock_searches +
				BTJIT_FAILED_RECHECK_SEARCHES;
		}
		return;
	}

	/* the signature with the tiers the compiler settled on */
	strlcpy(ix->signature, code->signature, sizeof(ix->signature));
	ix->last_compile_ms = code->compile_ms;
	ix->last_from_object_cache = code->from_object_cache;
	ix->last_code_at = GetCurrentTimestamp();
	btjit_set_code_present();
	btjit_tuple_layout(RelationGetDescr(rel), &ix->layout);
	ix->state = BTJIT_INDEX_JIT;
	ix->code = code;
	ix->fn = code->linked.search;
	memcpy(ix->entries, code->linked.entries, sizeof(ix->entries));
	ix->reason[0] = '\0';
	if (btjit_log_compiles && code->compile_ms >= 0)
		ereport(LOG,
				(errmsg("btree_jit: index \"%s\" uses compiled shape %s",
						RelationGetRelationName(rel), ix->signature)));
}

/*
 * A hash of the shape's bytes (built zeroed, so padding is stable) for this
 * backend's list of codes, over its key columns only: the columns past
 * nkeys are zero in every shape.
 */
static uint32
btjit_shape_hash(const BtjitShape *shape)
{
	int			nkeys = Min(shape->nkeys, BTJIT_MAX_KEYS);

	return hash_bytes((const unsigned char *) shape,
					  offsetof(BtjitShape, cols) +
					  nkeys * sizeof(BtjitColumnShape));
}

/* This backend's code for a shape, compiled, queued or failed; or NULL. */
static BtjitCode *
btjit_code_find(const BtjitShape *shape, uint32 hash)
{
	for (BtjitCode *code = btjit_codes; code != NULL; code = code->next)
	{
		if (code->hash == hash &&
			memcmp(&code->shape, shape, sizeof(BtjitShape)) == 0)
			return code;
	}
	return NULL;
}

/*
 * A new code for the shape, not compiled yet and not in the list (it joins
 * the list once its compile returned: an ERROR inside leaves no entry);
 * NULL with why when the list is full (btree_jit.max_signatures) or
 * memory is short.
 */
static BtjitCode *
btjit_code_new(const BtjitShape *shape, uint32 hash, BtjitWhy *why)
{
	BtjitCode  *code;

	if (btjit_ncodes >= btjit_max_signatures)
	{
		btjit_why_set(why,
					  "compiled shape cache is full (btree_jit.max_signatures = %d)",
					  btjit_max_signatures);
		return NULL;
	}
	code = MemoryContextAllocExtended(TopMemoryContext, sizeof(BtjitCode),
									  MCXT_ALLOC_NO_OOM | MCXT_ALLOC_ZERO);
	if (code == NULL)
	{
		btjit_why_set(why, "out of memory");
		return NULL;
	}
	code->hash = hash;
	code->shape = *shape;
	btjit_shape_signature(shape, code->signature, sizeof(code->signature));
	return code;
}

/*
 * Record what a compile (or a look at the queue) gave: queued, compiled
 * (the signature now names each called column's tier), or failed, which is
 * remembered with fn == NULL so that one WARNING is enough per backend.
 */
static void
btjit_code_settle(BtjitCode *code, BtjitCompileResult result,
				  const char *cwhy, BtjitWhy *why)
{
	switch (result)
	{
		case BTJIT_COMPILE_QUEUED:
			btjit_why_set(why, "queued for the compile worker");
			break;
		case BTJIT_COMPILE_OK:
			btjit_shape_signature_tiers(&code->shape, code->linked.bcinfo,
										code->signature,
										sizeof(code->signature));
			btjit_ncompiles++;
			if (btjit_log_compiles)
				ereport(LOG,
						(errmsg("btree_jit: %s shape %s in %.3f ms",
								code->from_object_cache ? "loaded cached" : "compiled",
								code->signature, code->compile_ms)));
			break;
		case BTJIT_COMPILE_NOT_CACHED:
			/* not a failure: the leader or the compile worker compiles it */
			code->failed_at = GetCurrentTimestamp();
			memset(&code->linked, 0, sizeof(code->linked));
			strlcpy(code->failure, cwhy, sizeof(code->failure));
			btjit_why_copy(why, cwhy);
			break;
		case BTJIT_COMPILE_FAILED:
		case BTJIT_COMPILE_FAILED_BY_WORKER:
			btjit_ncompile_failures++;
			code->failed_at = GetCurrentTimestamp();
			memset(&code->linked, 0, sizeof(code->linked));
			strlcpy(code->failure, cwhy, sizeof(code->failure));
			btjit_why_set(why, "compilation failed: %s", cwhy);

			/*
			 * The worker logged its own failure once for the cluster; a
			 * compile of this backend's own says so here, once.
			 */
			if (result == BTJIT_COMPILE_FAILED)
				ereport(WARNING,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("btree_jit: could not compile key shape %s", code->signature),
						 errdetail_internal("%s", cwhy),
						 errhint("Indexes of this shape use the server's own page search in this session.")));
			break;
	}
}

/*
 * Compiled code for a shape: from the cache, queued for the compile worker,
 * or compiled now.  A shape that failed to compile is remembered with fn ==
 * NULL.  A queued shape (code->queued) is looked up again once the compile
 * generation has moved since this backend last looked.  Returns NULL (with
 * why) only when the cache is full.
 */
static BtjitCode *
btjit_code_for_shape(const BtjitShape *shape, bool inline_only,
					 BtjitWhy *why)
{
	uint32		hash = btjit_shape_hash(shape);
	BtjitCode  *code = btjit_code_find(shape, hash);
	BtjitWhy	cwhy;
	BtjitCompileResult result;

	if (code == NULL)
	{
		code = btjit_code_new(shape, hash, why);
		if (code == NULL)
			return NULL;
		result = btjit_compile_shape(shape, code, inline_only, &cwhy);
		code->next = btjit_codes;
		btjit_codes = code;
		btjit_ncodes++;
	}
	else if (!code->queued)
	{
		if (code->linked.search != NULL)
			return code;
		/* a failure is kept for BTJIT_FAILED_RETRY_SECS, then tried again */
		if (GetCurrentTimestamp() <
			TimestampTzPlusMilliseconds(code->failed_at,
										BTJIT_FAILED_RETRY_SECS * 1000))
		{
			btjit_why_set(why, "compilation failed: %s", code->failure);
			return code;
		}
		result = btjit_compile_shape(shape, code, inline_only, &cwhy);
	}
	else
	{
		uint64		generation = btjit_compile_generation_now();

		if (!inline_only && generation == code->queued_generation)
		{
			btjit_why_set(why, "queued for the compile worker");
			return code;
		}
		code->queued_generation = generation;
		if (inline_only)
		{
			code->queued = false;
			result = btjit_compile_shape(shape, code, true, &cwhy);
		}
		else
			result = btjit_compile_poll(code, &cwhy);
	}
	btjit_code_settle(code, result, cwhy.text, why);
	return code;
}

/*
 * Call cb for every index this backend has state for (sqlfuncs.c), in the
 * order this backend first searched them.
 */
void
btjit_index_foreach(void (*cb) (BtjitIndex *ix, void *arg), void *arg)
{
	for (int i = 0; i < btjit_nindexes; i++)
		cb(btjit_indexes[i], arg);
}

/* Every index this backend has state for, as an array (indexstats.c). */
BtjitIndex **
btjit_index_list(int *nindexes)
{
	*nindexes = btjit_nindexes;
	return btjit_indexes;
}

/* How many shapes this backend has compiled (or loaded), and failed to. */
void
btjit_compile_totals(uint64 *compiles, uint64 *failures)
{
	*compiles = btjit_ncompiles;
	*failures = btjit_ncompile_failures;
}
