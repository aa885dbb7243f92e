/*-------------------------------------------------------------------------
 *
 * counters.c
 *	  Cluster-wide search and compile counters, in shared memory.
 *
 * A backend counts its searches in its own per-index state (jitcache.c),
 * which the dispatcher updates without any shared-memory traffic.  When a
 * backend exits it adds its totals here, once; btree_jit_status() reports
 * these shared totals plus the calling backend's own.  Live backends other
 * than the caller are therefore not counted until they exit.
 *
 * The interface is two functions, btjit_counters_add() and
 * btjit_counters_read(), plus btjit_counters_init() for _PG_init.  Without
 * the shared memory (the module not preloaded), adding does nothing and
 * reading returns zeros.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "btree_jit.h"

/* The totals of the backends that have exited. */
typedef struct BtjitSharedCounters
{
	pg_atomic_uint64 jit_searches;
	pg_atomic_uint64 stock_searches;
	pg_atomic_uint64 verified_searches;
	pg_atomic_uint64 compiles;
	pg_atomic_uint64 compile_failures;
} BtjitSharedCounters;

static BtjitSharedCounters *btjit_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void btjit_counters_shmem_request(void);
static void btjit_counters_shmem_startup(void);

/*
 * Called from _PG_init in the postmaster: ask for the shared memory and
 * attach to it at start-up (backends inherit both through fork).
 */
void
btjit_counters_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = btjit_counters_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = btjit_counters_shmem_startup;
}

static void
btjit_counters_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(BtjitSharedCounters)));
}

/* Create the shared totals, or attach to them, zeroed on creation. */
static void
btjit_counters_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	btjit_shared = ShmemInitStruct("btree_jit counters",
								   sizeof(BtjitSharedCounters), &found);
	if (!found)
	{
		pg_atomic_init_u64(&btjit_shared->jit_searches, 0);
		pg_atomic_init_u64(&btjit_shared->stock_searches, 0);
		pg_atomic_init_u64(&btjit_shared->verified_searches, 0);
		pg_atomic_init_u64(&btjit_shared->compiles, 0);
		pg_atomic_init_u64(&btjit_shared->compile_failures, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Add one backend's totals to the shared ones.  Meant to be called once per
 * backend, at exit (jitcache.c's exit callback): a second call would count
 * the same searches twice.
 */
void
btjit_counters_add(const BtjitCounters *backend)
{
	if (btjit_shared == NULL)
		return;
	pg_atomic_fetch_add_u64(&btjit_shared->jit_searches, backend->jit_searches);
	pg_atomic_fetch_add_u64(&btjit_shared->stock_searches, backend->stock_searches);
	pg_atomic_fetch_add_u64(&btjit_shared->verified_searches, backend->verified_searches);
	pg_atomic_fetch_add_u64(&btjit_shared->compiles, backend->compiles);
	pg_atomic_fetch_add_u64(&btjit_shared->compile_failures, backend->compile_failures);
}

/* The shared totals as of now: every backend that has exited. */
void
btjit_counters_read(BtjitCounters *out)
{
	memset(out, 0, sizeof(*out));
	if (btjit_shared == NULL)
		return;
	out->jit_searches = pg_atomic_read_u64(&btjit_shared->jit_searches);
	out->stock_searches = pg_atomic_read_u64(&btjit_shared->stock_searches);
	out->verified_searches = pg_atomic_read_u64(&btjit_shared->verified_searches);
	out->compiles = pg_atomic_read_u64(&btjit_shared->compiles);
	out->compile_failures = pg_atomic_read_u64(&btjit_shared->compile_failures);
}
