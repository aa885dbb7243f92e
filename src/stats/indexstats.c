/*-------------------------------------------------------------------------
 *
 * indexstats.c
 *	  Cluster-wide statistics in shared memory: per-index counters, in the
 *	  manner of pg_stat_statements, and the cluster totals.
 *
 * The dispatcher counts in the backend's own per-index state
 * (runtime/jitcache.c)
 * and never touches shared memory.  At the end of a top-level transaction
 * (at most once a second: BTJIT_STATS_FLUSH_INTERVAL_MS), at backend exit
 * (an exit callback registered here), and before this backend reads the
 * statistics, btjit_stats_flush() adds what each index's counters gained
 * since the last flush to a shared hash keyed by (database, index), and to
 * the cluster totals; an index whose counters did not move costs a
 * comparison.  That is the batching PostgreSQL's own statistics do: the
 * hot path stays local, and a reader in another session sees every search
 * of the transactions a backend ended up to its last flush (a backend that
 * has been idle since a flush less than a second before its last
 * transaction end adds those at its next transaction end or exit).
 *
 * The hash holds at most btree_jit.max_indexes entries.  When a new index
 * would not fit, the least used entries (a usage figure that grows with
 * searches and decays at each eviction) are evicted, a few percent at a
 * time, as pg_stat_statements deallocates; the cluster totals keep their
 * counts.  Shared catalogs' indexes are kept under database 0, as the
 * cumulative statistics system does.
 *
 * The hash's lock is taken in shared mode to update existing entries (each
 * entry has a spinlock for its counters) and in exclusive mode only to add
 * or evict entries, or to reset.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "runtime/runtime.h"
#include "stats/stats.h"

int			btjit_max_indexes = 5000;

/* fraction of entries evicted when the hash is full */
#define BTJIT_EVICT_FRACTION	0.05
#define BTJIT_EVICT_MIN			10
/* usage of the entries kept is multiplied by this at each eviction */
#define BTJIT_USAGE_DECAY		0.9
/* least time between two flushes at transaction end (not at exit) */
#define BTJIT_STATS_FLUSH_INTERVAL_MS	1000

typedef struct BtjitStatsKey
{
	Oid			dbid;			/* InvalidOid for a shared catalog's index */
	Oid			indexrelid;
} BtjitStatsKey;

typedef struct BtjitStatsEntry
{
	BtjitStatsKey key;			/* hash key; must be first */
	slock_t		mutex;			/* protects everything below */
	BtjitIndexStats counts;
	double		usage;			/* eviction order: lowest first */
	BtjitIndexState state;		/* as the last backend to report saw it */
	char		reason[BTJIT_REASON_LEN];
	char		signature[BTJIT_SIGNATURE_LEN];
	double		last_compile_ms;	/* -1: no code yet */
	bool		last_from_object_cache;
	TimestampTz last_code_at;	/* when an index last received code */
} BtjitStatsEntry;

typedef struct BtjitStatsShared
{
	LWLock	   *lock;			/* protects the hash's membership */
	/* cluster totals, kept across evictions, zeroed by reset */
	pg_atomic_uint64 jit_searches;
	pg_atomic_uint64 stock_searches;
	pg_atomic_uint64 verified_searches;
	pg_atomic_uint64 compiles;
	pg_atomic_uint64 compile_failures;
	/* under the lock */
	int64		evictions;
	double		median_usage;	/* given to new entries, as pgss does */
	TimestampTz stats_reset;
} BtjitStatsShared;

static BtjitStatsShared *btjit_stats = NULL;
static HTAB *btjit_stats_hash = NULL;

/* when this backend's counts were last added at a transaction end */
static TimestampTz btjit_last_flush = 0;

/* this backend's compile counts already flushed */
static uint64 btjit_flushed_compiles = 0;
static uint64 btjit_flushed_compile_failures = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void btjit_stats_shmem_request(void);
static void btjit_stats_shmem_startup(void);
static void btjit_stats_xact_callback(XactEvent event, void *arg);
static void btjit_stats_exit(int code, Datum arg);

/*
 * Called from _PG_init in the postmaster: ask for the shared memory, attach
 * at start-up, and flush at every transaction end (backends inherit the
 * hooks and the callback through fork).
 */
void
btjit_stats_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = btjit_stats_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = btjit_stats_shmem_startup;
	RegisterXactCallback(btjit_stats_xact_callback, NULL);
}

static Size
btjit_stats_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(BtjitStatsShared)),
					hash_estimate_size(btjit_max_indexes,
									   sizeof(BtjitStatsEntry)));
}

static void
btjit_stats_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(btjit_stats_shmem_size());
	RequestNamedLWLockTranche("btree_jit", 1);
}

static void
btjit_stats_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	btjit_stats = ShmemInitStruct("btree_jit statistics",
								  sizeof(BtjitStatsShared), &found);
	if (!found)
	{
		btjit_stats->lock = &(GetNamedLWLockTranche("btree_jit"))->lock;
		pg_atomic_init_u64(&btjit_stats->jit_searches, 0);
		pg_atomic_init_u64(&btjit_stats->stock_searches, 0);
		pg_atomic_init_u64(&btjit_stats->verified_searches, 0);
		pg_atomic_init_u64(&btjit_stats->compiles, 0);
		pg_atomic_init_u64(&btjit_stats->compile_failures, 0);
		btjit_stats->evictions = 0;
		btjit_stats->median_usage = 1.0;
		btjit_stats->stats_reset = GetCurrentTimestamp();
	}
	info.keysize = sizeof(BtjitStatsKey);
	info.entrysize = sizeof(BtjitStatsEntry);
	btjit_stats_hash = BTJIT_SHMEM_INIT_HASH("btree_jit index statistics",
											 btjit_max_indexes,
											 &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Any top-level transaction end, committed or not, flushes, unless this
 * backend flushed less than BTJIT_STATS_FLUSH_INTERVAL_MS ago.  A flush
 * looks at every index the backend knows, so flushing at every end of a
 * short transaction would cost a pgbench -S transaction more than the
 * compiled page search saves it (measured: 5,500 instructions per
 * transaction with 200 indexes known); PostgreSQL's own statistics wait a
 * second between flushes for the same reason.
 */
static void
btjit_stats_xact_callback(XactEvent event, void *arg)
{
	static bool exit_registered = false;
	TimestampTz now;

	/*
	 * The exit flush is registered by the first transaction end a backend
	 * reaches: every index search happens inside a transaction, so no count
	 * can precede it, and a registration in the postmaster would not reach
	 * backends (a child starts with an empty list of exit callbacks).
	 */
	if (!exit_registered)
	{
		before_shmem_exit(btjit_stats_exit, (Datum) 0);
		exit_registered = true;
	}

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			now = GetCurrentTimestamp();
			/* a short connection flushes once, at exit */
			if (btjit_last_flush == 0)
				btjit_last_flush = MyStartTimestamp;
			if (now - btjit_last_flush < BTJIT_STATS_FLUSH_INTERVAL_MS * 1000 &&
				now >= btjit_last_flush)
				break;
			btjit_last_flush = now;
			btjit_stats_flush();
			break;
		default:
			break;
	}
}

/* At backend exit: flush this backend's counters. */
static void
btjit_stats_exit(int code, Datum arg)
{
	btjit_stats_flush();
}

/* The counters of ix not flushed yet, into delta; false if there are none. */
static bool
btjit_index_delta(const BtjitIndex *ix, BtjitIndexStats *delta)
{
	return btjit_counts_sub(&ix->counts, &ix->flushed, delta) ||
		ix->stats_state_changed;
}

static int
btjit_usage_cmp(const void *a, const void *b)
{
	double		ua = (*(BtjitStatsEntry *const *) a)->usage;
	double		ub = (*(BtjitStatsEntry *const *) b)->usage;

	return (ua > ub) - (ua < ub);
}

/*
 * Make room for at least one entry: evict the least used few percent and
 * decay the usage of the rest.  Caller holds the lock exclusively.  Uses
 * palloc'd scratch only when it can; at transaction end memory is tight,
 * so allocation failure evicts nothing rather than raising an error.
 */
static void
btjit_stats_evict(void)
{
	HASH_SEQ_STATUS status;
	BtjitStatsEntry *entry;
	BtjitStatsEntry **entries;
	long		n = hash_get_num_entries(btjit_stats_hash);
	long		i = 0;
	int			nevict;

	entries = MemoryContextAllocExtended(TopMemoryContext,
										 n * sizeof(BtjitStatsEntry *),
										 MCXT_ALLOC_NO_OOM);
	if (entries == NULL)
		return;
	hash_seq_init(&status, btjit_stats_hash);
	while ((entry = hash_seq_search(&status)) != NULL && i < n)
		entries[i++] = entry;
	if (entry != NULL)
		hash_seq_term(&status);
	n = i;
	qsort(entries, n, sizeof(BtjitStatsEntry *), btjit_usage_cmp);

	if (n > 0)
		btjit_stats->median_usage = entries[n / 2]->usage;
	nevict = Max(BTJIT_EVICT_MIN, (int) (n * BTJIT_EVICT_FRACTION));
	nevict = Min(nevict, n);
	for (i = 0; i < nevict; i++)
		hash_search(btjit_stats_hash, &entries[i]->key, HASH_REMOVE, NULL);
	for (; i < n; i++)
		entries[i]->usage *= BTJIT_USAGE_DECAY;
	btjit_stats->evictions += nevict;
	pfree(entries);
}

/* Copy what ix's backend knows of its state into a (locked) entry. */
static void
btjit_entry_set_state(BtjitStatsEntry *entry, const BtjitIndex *ix)
{
	entry->state = ix->state;
	strlcpy(entry->reason, ix->reason, sizeof(entry->reason));
	strlcpy(entry->signature, ix->signature, sizeof(entry->signature));
	if (ix->last_code_at != 0)
	{
		entry->last_compile_ms = ix->last_compile_ms;
		entry->last_from_object_cache = ix->last_from_object_cache;
		entry->last_code_at = ix->last_code_at;
	}
}

/* Add delta (and state) to an entry under its spinlock. */
static void
btjit_entry_add(BtjitStatsEntry *entry, const BtjitIndex *ix,
				const BtjitIndexStats *delta, bool set_state)
{
	SpinLockAcquire(&entry->mutex);
	btjit_counts_add(&entry->counts, delta);
	entry->usage += (double) (delta->jit_searches + delta->stock_searches);
	if (set_state)
		btjit_entry_set_state(entry, ix);
	SpinLockRelease(&entry->mutex);
}

/*
 * The key of ix in the shared hash and its hash value, computed once per
 * index and backend (the database of a backend does not change).
 */
static void
btjit_index_key(BtjitIndex *ix, BtjitStatsKey *key)
{
	memset(key, 0, sizeof(*key));
	key->dbid = ix->shared_catalog ? InvalidOid : MyDatabaseId;
	key->indexrelid = ix->indexrelid;
	if (!ix->stats_hash_valid)
	{
		ix->stats_hash = get_hash_value(btjit_stats_hash, key);
		ix->stats_hash_valid = true;
	}
}

/*
 * Add one index's delta to the shared hash.  With only a shared lock, an
 * index without an entry is left for the exclusive pass (returns false).
 */
static bool
btjit_flush_index(BtjitIndex *ix, bool exclusive)
{
	BtjitIndexStats delta;
	BtjitStatsKey key;
	BtjitStatsEntry *entry;
	bool		found;

	if (!btjit_index_delta(ix, &delta))
		return true;

	btjit_index_key(ix, &key);
	if (!exclusive)
	{
		entry = hash_search_with_hash_value(btjit_stats_hash, &key,
											ix->stats_hash, HASH_FIND, NULL);
		if (entry == NULL)
			return false;
		btjit_entry_add(entry, ix, &delta, ix->stats_state_changed);
	}
	else
	{
		if (hash_get_num_entries(btjit_stats_hash) >= btjit_max_indexes &&
			hash_search_with_hash_value(btjit_stats_hash, &key, ix->stats_hash,
										HASH_FIND, NULL) == NULL)
			btjit_stats_evict();
		entry = hash_search_with_hash_value(btjit_stats_hash, &key,
											ix->stats_hash, HASH_ENTER_NULL,
											&found);
		if (entry == NULL)
			return true;		/* no room: only the totals count it */
		if (!found)
		{
			memset((char *) entry + sizeof(BtjitStatsKey), 0,
				   sizeof(BtjitStatsEntry) - sizeof(BtjitStatsKey));
			SpinLockInit(&entry->mutex);
			entry->usage = btjit_stats->median_usage;
			entry->last_compile_ms = -1;
		}
		/* a new entry (also after a reset) learns the state at once */
		btjit_entry_add(entry, ix, &delta, !found || ix->stats_state_changed);
	}

	ix->flushed = ix->counts;
	ix->stats_state_changed = false;

	pg_atomic_fetch_add_u64(&btjit_stats->jit_searches, delta.jit_searches);
	pg_atomic_fetch_add_u64(&btjit_stats->stock_searches, delta.stock_searches);
	pg_atomic_fetch_add_u64(&btjit_stats->verified_searches,
							delta.verified_searches + delta.verified_compares +
							delta.verified_inserts + delta.verified_checks +
							delta.verified_leafreads);
	return true;
}

/*
 * Add this backend's unflushed counts to shared memory.  Must not raise an
 * error: it runs after commit and during abort.  Cheap when nothing moved.
 */
void
btjit_stats_flush(void)
{
	BtjitIndex **indexes;
	int			nindexes;
	bool		missing = false;
	uint64		ncompiles,
				nfailures;

	if (btjit_stats == NULL || btjit_stats_hash == NULL)
		return;

	btjit_compile_totals(&ncompiles, &nfailures);
	if (ncompiles != btjit_flushed_compiles ||
		nfailures != btjit_flushed_compile_failures)
	{
		pg_atomic_fetch_add_u64(&btjit_stats->compiles,
								ncompiles - btjit_flushed_compiles);
		pg_atomic_fetch_add_u64(&btjit_stats->compile_failures,
								nfailures - btjit_flushed_compile_failures);
		btjit_flushed_compiles = ncompiles;
		btjit_flushed_compile_failures = nfailures;
	}

	indexes = btjit_index_list(&nindexes);
	if (nindexes == 0)
		return;

	/* the common case: nothing to do, decided without the lock */
	{
		BtjitIndexStats delta;
		int			i;

		for (i = 0; i < nindexes; i++)
			if (btjit_index_delta(indexes[i], &delta))
				break;
		if (i == nindexes)
			return;
	}

	LWLockAcquire(btjit_stats->lock, LW_SHARED);
	for (int i = 0; i < nindexes; i++)
		if (!btjit_flush_index(indexes[i], false))
			missing = true;
	LWLockRelease(btjit_stats->lock);

	if (missing)
	{
		LWLockAcquire(btjit_stats->lock, LW_EXCLUSIVE);
		for (int i = 0; i < nindexes; i++)
			(void) btjit_flush_index(indexes[i], true);
		LWLockRelease(btjit_stats->lock);
	}
}

/* The cluster totals flushed so far (zeros without the shared memory). */
void
btjit_stats_totals(BtjitCounters *out)
{
	memset(out, 0, sizeof(*out));
	if (btjit_stats == NULL)
		return;
	out->jit_searches = pg_atomic_read_u64(&btjit_stats->jit_searches);
	out->stock_searches = pg_atomic_read_u64(&btjit_stats->stock_searches);
	out->verified_searches = pg_atomic_read_u64(&btjit_stats->verified_searches);
	out->compiles = pg_atomic_read_u64(&btjit_stats->compiles);
	out->compile_failures = pg_atomic_read_u64(&btjit_stats->compile_failures);
}

/* Raise a clear error where the shared statistics do not exist. */
static void
btjit_stats_require(void)
{
	if (btjit_stats == NULL || btjit_stats_hash == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("btree_jit must be loaded via shared_preload_libraries"),
				 errhint("Add btree_jit to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * Call cb for a copy of every entry (taken under its spinlock), after
 * flushing this backend's own counts so that the caller sees them too.
 */
void
btjit_stats_foreach(void (*cb) (const BtjitIndexStatsRow *row, void *arg),
					void *arg)
{
	HASH_SEQ_STATUS status;
	BtjitStatsEntry *entry;
	BtjitIndexStatsRow *rows;
	long		n,
				i = 0;

	btjit_stats_require();
	btjit_stats_flush();

	/* copy under the lock, call back without it (cb may raise errors) */
	LWLockAcquire(btjit_stats->lock, LW_SHARED);
	n = hash_get_num_entries(btjit_stats_hash);
	rows = palloc(sizeof(BtjitIndexStatsRow) * Max(n, 1));
	hash_seq_init(&status, btjit_stats_hash);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		BtjitIndexStatsRow *row;

		if (i >= n)
		{
			hash_seq_term(&status);
			break;
		}
		row = &rows[i++];
		SpinLockAcquire(&entry->mutex);
		row->dbid = entry->key.dbid;
		row->indexrelid = entry->key.indexrelid;
		row->counts = entry->counts;
		row->usage = entry->usage;
		row->state = entry->state;
		strlcpy(row->reason, entry->reason, sizeof(row->reason));
		strlcpy(row->signature, entry->signature, sizeof(row->signature));
		row->last_compile_ms = entry->last_compile_ms;
		row->last_from_object_cache = entry->last_from_object_cache;
		row->last_code_at = entry->last_code_at;
		SpinLockRelease(&entry->mutex);
	}
	LWLockRelease(btjit_stats->lock);

	for (long j = 0; j < i; j++)
		cb(&rows[j], arg);
	pfree(rows);
}

/* The hash's bound, size, evictions and the time of the last reset. */
void
btjit_stats_info(int *max_indexes, int64 *entries, int64 *evictions,
				 TimestampTz *stats_reset)
{
	btjit_stats_require();
	LWLockAcquire(btjit_stats->lock, LW_SHARED);
	*max_indexes = btjit_max_indexes;
	*entries = hash_get_num_entries(btjit_stats_hash);
	*evictions = btjit_stats->evictions;
	*stats_reset = btjit_stats->stats_reset;
	LWLockRelease(btjit_stats->lock);
}

/*
 * Forget every entry and zero the totals.  Counts a backend has not yet
 * flushed arrive after the reset, as in pg_stat_statements.
 */
void
btjit_stats_reset(void)
{
	HASH_SEQ_STATUS status;
	BtjitStatsEntry *entry;

	btjit_stats_require();
	/* this backend's counts so far belong to before the reset */
	btjit_stats_flush();

	LWLockAcquire(btjit_stats->lock, LW_EXCLUSIVE);
	hash_seq_init(&status, btjit_stats_hash);
	while ((entry = hash_seq_search(&status)) != NULL)
		hash_search(btjit_stats_hash, &entry->key, HASH_REMOVE, NULL);
	pg_atomic_write_u64(&btjit_stats->jit_searches, 0);
	pg_atomic_write_u64(&btjit_stats->stock_searches, 0);
	pg_atomic_write_u64(&btjit_stats->verified_searches, 0);
	pg_atomic_write_u64(&btjit_stats->compiles, 0);
	pg_atomic_write_u64(&btjit_stats->compile_failures, 0);
	btjit_stats->evictions = 0;
	btjit_stats->median_usage = 1.0;
	btjit_stats->stats_reset = GetCurrentTimestamp();
	LWLockRelease(btjit_stats->lock);
}
