/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The compile queue in shared memory and the background worker that
 *	  empties it, so that no query waits for LLVM.
 *
 * A backend whose index crosses btree_jit.compile_threshold, and whose
 * shape is not in the object cache, enqueues the shape (keyed by its object
 * key, so each shape is queued once however many backends want it) and
 * keeps searching with the server's own code.  The worker takes the
 * busiest queued shape (below, "Demand"), compiles it in a child process
 * it forks, and once the
 * object is in the cache bumps the shared generation counter.  A backend
 * with queued indexes compares that counter with the value it saw when it
 * last looked (on the dispatcher's stock path only: an index without code
 * takes that path anyway) and, when it moved, looks its queued shapes up
 * again: linked from the cache, still queued, or failed.
 *
 * Why a child process: a bgworker attached to shared memory that dies from
 * a signal is a crash for the postmaster, which then restarts every
 * process of the cluster.  LLVM is the likeliest thing to die (its fatal
 * errors, an out-of-memory kill of the process holding 100+ MB of LLVM), so
 * it runs in a child of the worker that the postmaster does not know:
 * if it dies, only that compile is lost, the worker counts an attempt and
 * tries once more, then records the shape as failed.  The child also
 * leaves the worker itself without LLVM mapped.  The child never touches
 * the queue or any lock: it writes the object file and reports through a
 * pipe; the worker does the bookkeeping.  The worker loads the compiler
 * library (and so LLVM) before its first fork, so that each child starts
 * with LLVM mapped; only the children run it.
 *
 * Protocol (BtjitCompileShared, one LWLock):
 *	- enqueue (backend, exclusive): the key already pending -> queued; the
 *	  key in the failed list -> failed with its reason; no worker or no free
 *	  entry -> unavailable (the caller compiles inline); else a new pending
 *	  entry, and the worker's latch is set.
 *	- demand (backend, shared): an atomic add to the entry's demand, if the
 *	  entry is still the one the backend queued for (same seq).
 *	- the worker (exclusive) marks the busiest pending entry whose hold is
 *	  over (below) compiling, compiles without the lock, then frees the
 *	  entry and, on success, adds to the counters; on failure it adds the
 *	  key to the failed list (a ring), which refuses it for
 *	  BTJIT_FAILED_RETRY_SECS; after that it is queued again like a new
 *	  shape.
 *	  Only after the object file is renamed into place does it bump the
 *	  generation (an atomic, read without the lock), so a backend that sees
 *	  the new value finds the file.
 *	- lookup (backend, shared): pending, failed (with why), or neither, in
 *	  which case the object cache has it, or the entry was lost (restart):
 *	  the backend then enqueues it again.
 *
 * The hold.  The backend that queued a shape is busy: it crossed the
 * threshold in the middle of a statement, and a client that just ran one
 * statement usually sends the next at once.  On a small machine a compile
 * started right then takes its CPU time from exactly that backend (measured
 * on 18 in a 2-vCPU VM, 20 interleaved rounds: the first query of the
 * backend 0.75x of the module off without the hold, 1.02x with it).  So
 * the entry records the backend (pid and PGPROC), and the worker starts the
 * compile once that backend has been waiting for its client (wait event
 * ClientRead) for BTJIT_HOLD_IDLE_MS, polling its PGPROC every
 * BTJIT_HOLD_POLL_MS while anything is held, or once the backend has
 * exited, or BTJIT_HOLD_MAX_MS after the shape was queued, whichever comes
 * first: a session that never pauses (a pool, a long report) still gets its
 * code within the cap plus one compile.  Other backends wanting the same
 * shape wait for the same entry; warm-start shapes wait while any backend's
 * shape is held.  The wait event is read without a lock, as
 * pg_stat_activity reads it: a poll can miss a statement shorter than the
 * poll interval, which only means the compile starts a little early.
 *
 * Demand.  Arrival order is the wrong order on a fresh cluster or after an
 * upgrade: the catalogs' shapes cross the threshold first (every
 * connection searches them), and a user index searched thousands of times
 * a second would wait behind all of them, at about half a second a
 * compile.  So every backend whose index is queued reports its stock
 * searches of it to the entry (at enqueue, then every
 * BTJIT_DEMAND_REPORT_SEARCHES: runtime/jitcache.c), and the worker takes
 * the entry with the most searches since its previous take (the recent
 * demand: a shape searched heavily an hour ago and not since should not
 * win), oldest first among equals.  A busier entry that is still held is
 * waited for rather than passed over for a quieter one: its hold ends
 * within BTJIT_HOLD_MAX_MS, a compile takes longer.  A shape nobody
 * searches any more waits until the busy ones are done; it is never
 * dropped.
 *
 * Handing over.  The worker's object is for the backends that queued the
 * shape, and it reaches them through the object cache, where a store at
 * btree_jit.object_cache_max_files evicts the least recently used object.
 * Below its bound (more shapes in use than objects allowed) that evicted
 * objects no backend had linked yet, which were queued again: a session
 * using 60 shapes with room for 20 kept a third of them on the stock path.
 * So the entry records who waits (the backend that queued it and those that
 * joined, BTJIT_WAITERS_MAX), and a finished compile leaves the list of its
 * waiters (delivered[]) until each has looked the shape up, has exited, or
 * BTJIT_PIN_MAX_SECS have passed: objcache.c never evicts an object listed
 * so (btjit_worker_pinned).  The cache may then exceed its bound for a
 * while, which the worker logs with a hint to raise it.
 *
 * Warm start: after each compile the worker adds the shape to
 * $PGDATA/btree_jit_cache/shapes; at start it queues every listed shape
 * whose object is missing (a new template, another CPU, a cleared cache),
 * so that the first backends after a restart or upgrade find code compiled.
 * The list is rewritten whole each time (a temporary file, fsynced and
 * renamed durably), with a CRC-32C that a damaged list fails (it is then
 * refused with a LOG line), and pruned to the shapes whose objects the
 * cache still holds (or that the warm start has yet to compile), at most
 * btree_jit.object_cache_max_files of them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "compile/compile_int.h"
#include "pg_compat.h"

/* The compile child's nice value (see btjit_compile_child). */
#define BTJIT_COMPILE_NICE		10
/* A shape that killed its compile process this often is failed. */
#define BTJIT_COMPILE_ATTEMPTS	2
/*
 * Shapes remembered as failed (a ring: the oldest is forgotten), each for
 * BTJIT_FAILED_RETRY_SECS: then the next backend that wants it queues it
 * again, so that a passing cause (a full disk, a killed compile) does not
 * keep a shape on the stock path until the server restarts.
 */
#define BTJIT_FAILED_MAX		64
/*
 * When a backend queues a shape, the compile waits until that backend has
 * been waiting for its client this long (BTJIT_HOLD_IDLE_MS), looked at
 * every BTJIT_HOLD_POLL_MS, or until BTJIT_HOLD_MAX_MS have passed since it
 * was queued, whichever comes first (see btjit_queue_take).
 */
#define BTJIT_HOLD_IDLE_MS		10
#define BTJIT_HOLD_POLL_MS		2
#define BTJIT_HOLD_MAX_MS		250
/* The warm-start list, in the object cache directory. */
#define BTJIT_SHAPES_FILE		"shapes"
#define BTJIT_SHAPES_MAGIC		"BTJITSHAPES2"
/* The most shapes the warm-start list holds. */
#define BTJIT_SHAPES_MAX		4096
/*
 * Backends recorded as waiting for a queued shape; more may join, they
 * just do not keep its object from eviction.
 */
#define BTJIT_WAITERS_MAX		8
/* Finished compiles whose waiters are remembered (a ring). */
#define BTJIT_DELIVERED_MAX		64
/*
 * How long a finished compile's object is kept from eviction for a live
 * backend that has not looked for it: one that has not searched its index
 * for that long is not using the shape much.
 */
#define BTJIT_PIN_MAX_SECS		300
/* The "bound below the shapes in use" LOG line, at most this often. */
#define BTJIT_BOUND_LOG_SECS	300

typedef enum BtjitQueueEntryState
{
	BTJIT_QE_FREE = 0,
	BTJIT_QE_PENDING,
	BTJIT_QE_COMPILING
} BtjitQueueEntryState;

/* A backend waiting for a shape: its pid and PGPROC number. */
typedef struct BtjitWaiter
{
	pid_t		pid;
	int			procno;
} BtjitWaiter;

typedef struct BtjitQueueEntry
{
	BtjitQueueEntryState state;
	int			attempts;		/* compile processes started for it */
	uint64		seq;			/* enqueue order */
	pid_t		holder_pid;		/* the backend that queued it, 0 once its
								 * hold is over */
	int			holder_procno;	/* its PGPROC */
	TimestampTz queued_at;
	TimestampTz holder_idle_since;	/* worker: holder seen idle since, or 0 */
	pg_atomic_uint64 demand;	/* searches reported while queued */
	uint64		demand_seen;	/* worker: demand at its previous take */
	int			nwaiters;		/* waiters[] in use */
	BtjitWaiter waiters[BTJIT_WAITERS_MAX];
	char		key[BTJIT_OBJECT_KEY_LEN];
	BtjitShape	shape;
} BtjitQueueEntry;

/*
 * A compiled shape whose waiters have not all looked it up (see "Handing
 * over" above); a waiter leaves when it does.  nwaiters 0: a free slot.
 */
typedef struct BtjitDelivered
{
	char		key[BTJIT_OBJECT_KEY_LEN];
	TimestampTz delivered_at;
	int			nwaiters;
	BtjitWaiter waiters[BTJIT_WAITERS_MAX];
} BtjitDelivered;

typedef struct BtjitFailedShape
{
	char		key[BTJIT_OBJECT_KEY_LEN];
	char		why[BTJIT_REASON_LEN];
	TimestampTz failed_at;
	bool		unstored;		/* it compiled, but the object cache did not
								 * take it: backends compile it themselves */
} BtjitFailedShape;

typedef struct BtjitCompileShared
{
	LWLock	   *lock;			/* everything below but generation */
	pg_atomic_uint64 generation;	/* bumped after each finished compile */
	pid_t		worker_pid;		/* 0: no worker ready */
	Latch	   *worker_latch;
	uint64		next_seq;
	uint64		compiles;		/* by the worker, since start-up */
	uint64		failures;
	uint64		enqueued;
	uint64		queue_full;		/* enqueues refused for want of room */
	int			warm_pending;	/* warm-start shapes left to compile */
	double		last_compile_ms;
	TimestampTz last_compile_at;	/* 0: none yet */
	int			nfailed;		/* entries of failed[] in use */
	int			failed_next;	/* where the next failure goes */
	BtjitFailedShape failed[BTJIT_FAILED_MAX];
	int			delivered_next; /* where the next delivery goes */
	BtjitDelivered delivered[BTJIT_DELIVERED_MAX];
	int			queue_size;		/* entries[] */
	BtjitQueueEntry entries[FLEXIBLE_ARRAY_MEMBER];
} BtjitCompileShared;

static BtjitCompileShared *btjit_compile_shared = NULL;

int			btjit_compile_queue_size = 64;

/* Read by the dispatcher's stock path (compile.h); NULL without shmem. */
pg_atomic_uint64 *btjit_compile_generation = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* In the worker: the compiler library is loaded (on the first shape). */
static bool btjit_compiler_preloaded = false;

/* In the worker: the compile child running, for the exit callback. */
static pid_t btjit_child_pid = 0;

/* A shape of the warm-start list, with its object key. */
typedef struct BtjitListedShape
{
	char		key[BTJIT_OBJECT_KEY_LEN];
	BtjitShape	shape;
} BtjitListedShape;

/* The warm-start list's header; the shapes follow it. */
typedef struct BtjitShapesHeader
{
	char		magic[sizeof(BTJIT_SHAPES_MAGIC)];	/* with its NUL */
	uint32		shape_size;		/* sizeof(BtjitShape) */
	uint32		count;			/* shapes that follow */
	pg_crc32c	crc;			/* of the header with crc zero, then the
								 * shapes */
} BtjitShapesHeader;

/*
 * In the worker: the warm-start list, oldest first (TopMemoryContext,
 * grown as needed).
 */
static BtjitListedShape *btjit_listed_shapes = NULL;
static int	btjit_nlisted = 0;
static int	btjit_listed_cap = 0;

/*
 * In the worker: listed shapes missing from the cache at start, compiled
 * when no backend waits for anything (they do not take queue entries, which
 * are the backends').
 */
static BtjitListedShape *btjit_warm_shapes = NULL;
static int	btjit_nwarm = 0;
static int	btjit_warm_next = 0;

/*
 * In a compile child: the keys pinned when it was forked (it takes no lock,
 * so btjit_worker_pinned answers from this copy).
 */
static char btjit_pin_copy[BTJIT_DELIVERED_MAX][BTJIT_OBJECT_KEY_LEN];
static int	btjit_npin_copy = 0;
static bool btjit_pin_copy_valid = false;

/* In the worker: when the bound was last said to be too small. */
static TimestampTz btjit_bound_logged_at = 0;

PGDLLEXPORT void btjit_compile_worker_main(Datum arg);

static void btjit_warm_bound(int nlisted);
static bool btjit_worker_pinned(const char *key);
static void btjit_compile_shmem_request(void);
static void btjit_compile_shmem_startup(void);

static Size
btjit_compile_shmem_size(void)
{
	return add_size(offsetof(BtjitCompileShared, entries),
					mul_size(btjit_compile_queue_size,
							 sizeof(BtjitQueueEntry)));
}

/*
 * Called by _PG_init in the postmaster: shared memory and the worker.
 * The worker needs no database: a shape is self-contained (the compiler reads
 * no catalog; the procs a shape names are called through the scankey at
 * search time).  It starts with the postmaster and, if it exits, is
 * started again after bgw_restart_time.
 */
void
btjit_worker_register(bool module_active)
{
	BackgroundWorker worker;

	/* every process inherits it: evictions ask which objects are awaited */
	btjit_object_cache_set_pins(btjit_worker_pinned);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = btjit_compile_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = btjit_compile_shmem_startup;

	/*
	 * Single-user mode has no workers, and an inactive module compiles
	 * nothing: backends find no worker and compile inline (or not at all).
	 */
	if (!IsPostmasterEnvironment || !module_active)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 5;
	snprintf(worker.bgw_library_name, sizeof(worker.bgw_library_name),
			 "btree_jit");
	snprintf(worker.bgw_function_name, sizeof(worker.bgw_function_name),
			 "btjit_compile_worker_main");
	snprintf(worker.bgw_name, sizeof(worker.bgw_name),
			 "btree_jit compile worker");
	snprintf(worker.bgw_type, sizeof(worker.bgw_type),
			 "btree_jit compile worker");
	RegisterBackgroundWorker(&worker);
}

static void
btjit_compile_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(btjit_compile_shmem_size());
	RequestNamedLWLockTranche("btree_jit compile queue", 1);
}

static void
btjit_compile_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	btjit_compile_shared = ShmemInitStruct("btree_jit compile queue",
										   btjit_compile_shmem_size(), &found);
	if (!found)
	{
		memset(btjit_compile_shared, 0, btjit_compile_shmem_size());
		btjit_compile_shared->lock =
			&(GetNamedLWLockTranche("btree_jit compile queue"))->lock;
		pg_atomic_init_u64(&btjit_compile_shared->generation, 1);
		btjit_compile_shared->queue_size = btjit_compile_queue_size;
		for (int i = 0; i < btjit_compile_queue_size; i++)
			pg_atomic_init_u64(&btjit_compile_shared->entries[i].demand, 0);
	}
	LWLockRelease(AddinShmemInitLock);
	btjit_compile_generation = &btjit_compile_shared->generation;
}

/* ---- The backends' side ---- */

/* The failed list's entry for key, or NULL.  Caller holds the lock. */
static BtjitFailedShape *
btjit_failed_find(const char *key)
{
	BtjitCompileShared *cs = btjit_compile_shared;

	for (int i = 0; i < cs->nfailed; i++)
		if (strcmp(cs->failed[i].key, key) == 0)
			return &cs->failed[i];
	return NULL;
}

/*
 * The failed list's entry for key if it failed (or was not stored) less
 * than BTJIT_FAILED_RETRY_SECS ago, else NULL.  Copies its reason.  Caller
 * holds the lock.
 */
static BtjitFailedShape *
btjit_failed_lookup(const char *key, BtjitWhy *why)
{
	BtjitFailedShape *f = btjit_failed_find(key);

	if (f == NULL ||
		GetCurrentTimestamp() >=
		TimestampTzPlusMilliseconds(f->failed_at, BTJIT_FAILED_RETRY_SECS * 1000))
		return NULL;
	btjit_why_copy(why, f->why);
	return f;
}

/* Is the backend w still the one in its PGPROC slot (read without a lock)? */
static bool
btjit_waiter_alive(const BtjitWaiter *w)
{
	if (w->procno < 0 || w->procno >= (int) ProcGlobal->allProcCount)
		return false;
	return *(volatile int *) &GetPGProcByNumber(w->procno)->pid == w->pid;
}

/* Record this backend as waiting for e (once).  Caller holds the lock. */
static void
btjit_waiter_add(BtjitQueueEntry *e)
{
	if (MyProc == NULL)
		return;
	for (int i = 0; i < e->nwaiters; i++)
		if (e->waiters[i].pid == MyProcPid)
			return;
	if (e->nwaiters < BTJIT_WAITERS_MAX)
	{
		e->waiters[e->nwaiters].pid = MyProcPid;
		e->waiters[e->nwaiters].procno = (int) (MyProc - ProcGlobal->allProcs);
		e->nwaiters++;
	}
}

/*
 * A compiled entry's waiters, kept until each has looked the shape up
 * (btjit_worker_lookup).  Caller holds the lock exclusively.
 */
static void
btjit_deliver(const BtjitQueueEntry *e)
{
	BtjitCompileShared *cs = btjit_compile_shared;
	BtjitDelivered *d;

	if (e->nwaiters == 0)
		return;
	d = &cs->delivered[cs->delivered_next];
	cs->delivered_next = (cs->delivered_next + 1) % BTJIT_DELIVERED_MAX;
	strlcpy(d->key, e->key, sizeof(d->key));
	d->delivered_at = GetCurrentTimestamp();
	d->nwaiters = e->nwaiters;
	memcpy(d->waiters, e->waiters, e->nwaiters * sizeof(BtjitWaiter));
}

/*
 * This backend has looked the shape up and links it now: its object need
 * not be kept for it any more.  Caller holds the lock exclusively.
 */
static void
btjit_delivered_claim(const char *key)
{
	BtjitCompileShared *cs = btjit_compile_shared;

	for (int i = 0; i < BTJIT_DELIVERED_MAX; i++)
	{
		BtjitDelivered *d = &cs->delivered[i];

		if (d->nwaiters == 0 || strcmp(d->key, key) != 0)
			continue;
		for (int j = 0; j < d->nwaiters; j++)
			if (d->waiters[j].pid == MyProcPid)
			{
				d->waiters[j] = d->waiters[--d->nwaiters];
				break;
			}
	}
}

/*
 * Is the delivered shape d still awaited: a waiter alive, within
 * BTJIT_PIN_MAX_SECS?  Caller holds the lock (or is a compile child
 * copying under its parent's).
 */
static bool
btjit_delivered_awaited(const BtjitDelivered *d, TimestampTz now)
{
	if (d->nwaiters == 0 ||
		now >= TimestampTzPlusMilliseconds(d->delivered_at,
										   BTJIT_PIN_MAX_SECS * 1000))
		return false;
	for (int j = 0; j < d->nwaiters; j++)
		if (btjit_waiter_alive(&d->waiters[j]))
			return true;
	return false;
}

/*
 * Must the object of key stay in the cache, because a backend that queued
 * its shape has not linked it yet?  objcache.c's eviction asks.  A compile
 * child answers from the copy its parent made before forking it (it may
 * take no lock); a backend storing an object it compiled itself looks.
 */
static bool
btjit_worker_pinned(const char *key)
{
	BtjitCompileShared *cs = btjit_compile_shared;
	TimestampTz now;
	bool		pinned = false;

	if (btjit_pin_copy_valid)
	{
		for (int i = 0; i < btjit_npin_copy; i++)
			if (strcmp(btjit_pin_copy[i], key) == 0)
				return true;
		return false;
	}
	if (cs == NULL || MyProc == NULL)
		return false;
	now = GetCurrentTimestamp();
	LWLockAcquire(cs->lock, LW_SHARED);
	for (int i = 0; i < BTJIT_DELIVERED_MAX && !pinned; i++)
		pinned = strcmp(cs->delivered[i].key, key) == 0 &&
			btjit_delivered_awaited(&cs->delivered[i], now);
	LWLockRelease(cs->lock);
	return pinned;
}

/* The worker, before forking a compile child: copy the pinned keys. */
static void
btjit_pins_copy(void)
{
	BtjitCompileShared *cs = btjit_compile_shared;
	TimestampTz now = GetCurrentTimestamp();

	btjit_npin_copy = 0;
	LWLockAcquire(cs->lock, LW_SHARED);
	for (int i = 0; i < BTJIT_DELIVERED_MAX; i++)
		if (btjit_delivered_awaited(&cs->delivered[i], now))
			strlcpy(btjit_pin_copy[btjit_npin_copy++], cs->delivered[i].key,
					BTJIT_OBJECT_KEY_LEN);
	LWLockRelease(cs->lock);
}

static BtjitQueueEntry *
btjit_queue_find(const char *key)
{
	BtjitCompileShared *cs = btjit_compile_shared;

	for (int i = 0; i < cs->queue_size; i++)
		if (cs->entries[i].state != BTJIT_QE_FREE &&
			strcmp(cs->entries[i].key, key) == 0)
			return &cs->entries[i];
	return NULL;
}

/* A free entry for a new shape, or NULL.  Caller holds the lock. */
static BtjitQueueEntry *
btjit_queue_add(const char *key, const BtjitShape *shape)
{
	BtjitCompileShared *cs = btjit_compile_shared;

	for (int i = 0; i < cs->queue_size; i++)
	{
		BtjitQueueEntry *e = &cs->entries[i];

		if (e->state == BTJIT_QE_FREE)
		{
			e->state = BTJIT_QE_PENDING;
			e->attempts = 0;
			e->seq = cs->next_seq++;
			e->holder_pid = MyProc != NULL ? MyProcPid : 0;
			e->holder_procno =
				MyProc != NULL ? (int) (MyProc - ProcGlobal->allProcs) : -1;
			e->queued_at = GetCurrentTimestamp();
			e->holder_idle_since = 0;
			pg_atomic_write_u64(&e->demand, 0);
			e->demand_seen = 0;
			e->nwaiters = 0;
			btjit_waiter_add(e);
			strlcpy(e->key, key, sizeof(e->key));
			memcpy(&e->shape, shape, sizeof(BtjitShape));
			cs->enqueued++;
			return e;
		}
	}
	return NULL;
}

/*
 * Hand a shape to the worker.  Never waits for it: the lock is held for a
 * scan of the queue and the failed list, and the worker is woken by its
 * latch.  Called on the dispatcher's slow path, at most once per shape and
 * generation in a backend.  When queued, *ticket names the entry, for the
 * backend's reports of demand (btjit_worker_demand).
 */
BtjitEnqueueResult
btjit_worker_enqueue(const BtjitShape *shape, const char *key,
					 BtjitQueueTicket *ticket, BtjitWhy *why)
{
	BtjitCompileShared *cs = btjit_compile_shared;
	BtjitEnqueueResult result;
	BtjitQueueEntry *e;
	BtjitFailedShape *f;
	BtjitWhy	fwhy;
	Latch	   *latch = NULL;

	ticket->slot = -1;
	ticket->seq = 0;

	if (cs == NULL)
	{
		btjit_why_set(why, "the compile worker has no shared memory");
		return BTJIT_ENQUEUE_UNAVAILABLE;
	}

	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	if ((f = btjit_failed_lookup(key, &fwhy)) != NULL)
	{
		if (f->unstored)
		{
			btjit_why_set(why, "the compile worker could not store this shape: %s",
						  fwhy.text);
			result = BTJIT_ENQUEUE_UNAVAILABLE;
		}
		else
		{
			btjit_why_copy(why, fwhy.text);
			result = BTJIT_ENQUEUE_FAILED;
		}
	}
	else if ((e = btjit_queue_find(key)) != NULL)
	{
		/* another backend queued it: ours is one more demand for it */
		btjit_waiter_add(e);
		ticket->slot = e - cs->entries;
		ticket->seq = e->seq;
		result = BTJIT_ENQUEUE_QUEUED;
	}
	else if (cs->worker_pid == 0)
	{
		btjit_why_set(why, "the compile worker is not running");
		result = BTJIT_ENQUEUE_UNAVAILABLE;
	}
	else if ((e = btjit_queue_add(key, shape)) == NULL)
	{
		cs->queue_full++;
		btjit_why_set(why, "the compile queue is full (btree_jit.compile_queue_size = %d)",
					  cs->queue_size);
		result = BTJIT_ENQUEUE_UNAVAILABLE;
	}
	else
	{
		ticket->slot = e - cs->entries;
		ticket->seq = e->seq;
		result = BTJIT_ENQUEUE_QUEUED;
		latch = cs->worker_latch;
	}
	LWLockRelease(cs->lock);

	/* a latch stays valid while its process lives; a stale set is harmless */
	if (latch != NULL)
		SetLatch(latch);
	return result;
}

/*
 * Add searches to the demand of the entry a backend queued (or joined):
 * a shared lock, so that the worker, which takes it exclusively, never
 * sees the entry change hands in the middle, and a compare of the seq, so
 * that searches of a shape that is compiled already (its entry freed and
 * maybe reused) count for nothing.  Called every
 * BTJIT_DEMAND_REPORT_SEARCHES stock searches of a queued index.
 */
void
btjit_worker_demand(const BtjitQueueTicket *ticket, uint64 searches)
{
	BtjitCompileShared *cs = btjit_compile_shared;
	BtjitQueueEntry *e;

	if (cs == NULL || ticket->slot < 0 || ticket->slot >= cs->queue_size)
		return;
	e = &cs->entries[ticket->slot];
	LWLockAcquire(cs->lock, LW_SHARED);
	if (e->state != BTJIT_QE_FREE && e->seq == ticket->seq)
		pg_atomic_fetch_add_u64(&e->demand, searches);
	LWLockRelease(cs->lock);
}

/*
 * Where is the shape with this key?  Pending (queued or compiling), failed
 * (why says why), or neither: then the object cache should have it, and
 * the caller links it now, so its object need not be kept for this backend
 * any more (exclusive for that; a backend looks once per compile
 * generation and queued shape).
 */
BtjitQueueStatus
btjit_worker_lookup(const char *key, BtjitWhy *why)
{
	BtjitCompileShared *cs = btjit_compile_shared;
	BtjitQueueStatus status;
	BtjitFailedShape *f;

	if (cs == NULL)
		return BTJIT_QUEUE_ABSENT;
	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	if (btjit_queue_find(key) != NULL)
		status = BTJIT_QUEUE_PENDING;
	else if ((f = btjit_failed_lookup(key, why)) != NULL)
		status = f->unstored ? BTJIT_QUEUE_UNSTORED : BTJIT_QUEUE_FAILED;
	else
	{
		status = BTJIT_QUEUE_ABSENT;
		btjit_delivered_claim(key);
	}
	LWLockRelease(cs->lock);
	return status;
}

/* For btree_jit_status(). */
void
btjit_worker_status(BtjitWorkerStatus *out)
{
	BtjitCompileShared *cs = btjit_compile_shared;

	memset(out, 0, sizeof(*out));
	if (cs == NULL)
		return;
	LWLockAcquire(cs->lock, LW_SHARED);
	out->worker_pid = cs->worker_pid;
	for (int i = 0; i < cs->queue_size; i++)
		if (cs->entries[i].state != BTJIT_QE_FREE)
			out->queue_length++;
	out->queue_length += cs->warm_pending;
	out->compiles = cs->compiles;
	out->failures = cs->failures;
	out->queue_full = cs->queue_full;
	out->last_compile_ms = cs->last_compile_ms;
	out->last_compile_at = cs->last_compile_at;
	LWLockRelease(cs->lock);
	out->generation = pg_atomic_read_u64(&cs->generation);
}

/* ---- The worker ---- */

static void
btjit_shapes_path(char *path)
{
	char		dir[MAXPGPATH];

	btjit_object_cache_dir(dir);
	snprintf(path, MAXPGPATH, "%s/%s", dir, BTJIT_SHAPES_FILE);
}

/* The listed entry for key, or -1. */
static int
btjit_listed_find(const char *key)
{
	for (int i = 0; i < btjit_nlisted; i++)
		if (strcmp(btjit_listed_shapes[i].key, key) == 0)
			return i;
	return -1;
}

static bool
btjit_listed(const char *key)
{
	return btjit_listed_find(key) >= 0;
}

/*
 * Add a shape to the end of the in-memory list (the most recent); a shape
 * listed already moves there.
 */
static void
btjit_listed_add(const BtjitShape *shape, const char *key)
{
	int			at = btjit_listed_find(key);

	if (at >= 0)
	{
		memmove(&btjit_listed_shapes[at], &btjit_listed_shapes[at + 1],
				(btjit_nlisted - at - 1) * sizeof(BtjitListedShape));
		btjit_nlisted--;
	}
	if (btjit_nlisted == btjit_listed_cap)
	{
		btjit_listed_cap = Max(64, btjit_listed_cap * 2);
		if (btjit_listed_shapes == NULL)
			btjit_listed_shapes = MemoryContextAlloc(TopMemoryContext,
													 btjit_listed_cap * sizeof(BtjitListedShape));
		else
			btjit_listed_shapes = repalloc(btjit_listed_shapes,
										   btjit_listed_cap * sizeof(BtjitListedShape));
	}
	strlcpy(btjit_listed_shapes[btjit_nlisted].key, key, BTJIT_OBJECT_KEY_LEN);
	memcpy(&btjit_listed_shapes[btjit_nlisted].shape, shape, sizeof(BtjitShape));
	btjit_nlisted++;
}

/* The CRC-32C of a list: its header with crc zero, then its shapes. */
static pg_crc32c
btjit_shapes_crc(const BtjitShapesHeader *header, const BtjitShape *shapes,
				 int n)
{
	return btjit_cache_file_crc(header, sizeof(BtjitShapesHeader),
								offsetof(BtjitShapesHeader, crc),
								shapes, (size_t) n * sizeof(BtjitShape));
}

/*
 * Read the warm-start list into shapes (palloc'd; *n of them).  False with
 * a LOG line when there is a list but it cannot be used: another format or
 * shape layout, a size that disagrees with its header, or a CRC that does
 * not match (a damaged list is refused whole: a shape read from damaged
 * bytes would be compiled into code).
 */
static bool
btjit_shapes_read(const char *path, BtjitShape **shapes, int *n)
{
	BtjitShapesHeader h;
	struct stat st;
	const char *problem = NULL;
	BtjitShape *buf = NULL;
	pg_crc32c	crc = 0;
	bool		crc_bad = false;
	int			fd;

	*shapes = NULL;
	*n = 0;
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("btree_jit: could not open the list of shapes \"%s\": %m",
							path)));
		return false;
	}
	if (fstat(fd, &st) != 0 ||
		read(fd, &h, sizeof(h)) != sizeof(h) ||
		memcmp(h.magic, BTJIT_SHAPES_MAGIC, sizeof(h.magic)) != 0 ||
		h.shape_size != sizeof(BtjitShape))
		problem = "written for another shape layout";
	else if (h.count > BTJIT_SHAPES_MAX ||
			 st.st_size != (off_t) (sizeof(h) + (size_t) h.count * sizeof(BtjitShape)))
		problem = "its size does not match its header";
	else
	{
		buf = palloc(Max(h.count, 1) * sizeof(BtjitShape));
		if (read(fd, buf, h.count * sizeof(BtjitShape)) !=
			(ssize_t) (h.count * sizeof(BtjitShape)))
			problem = "it could not be read whole";
		else if ((crc = btjit_shapes_crc(&h, buf, h.count)) != h.crc)
		{
			problem = "its CRC-32C does not match its header";
			crc_bad = true;
		}
	}
	CloseTransientFile(fd);
	if (problem != NULL)
	{
		ereport(LOG,
				(errmsg("btree_jit: refusing the list of shapes \"%s\": %s",
						path, problem),
				 crc_bad ?
				 errdetail("Its CRC-32C is %08X, its header says %08X.",
						   crc, h.crc) : 0,
				 errhint("No listed shape is compiled ahead at this start; the list is written anew as shapes are compiled.")));
		if (buf != NULL)
			pfree(buf);
		return false;
	}
	*shapes = buf;
	*n = h.count;
	return true;
}

/*
 * Warm start: read the list, and note every listed shape whose object is
 * not in the cache, to be compiled when the queue is empty.  A list that
 * is refused (btjit_shapes_read) is rewritten as shapes are compiled.
 */
static void
btjit_warm_start(void)
{
	char		path[MAXPGPATH];
	const BtjitTemplate *tmpl;
	BtjitWhy	why;
	BtjitShape *shapes;
	int			nshapes;

	btjit_shapes_path(path);
	if (!btjit_shapes_read(path, &shapes, &nshapes))
		return;
	if (!btjit_template_read(&tmpl, &why))
	{
		pfree(shapes);
		return;
	}

	for (int i = 0; i < nshapes; i++)
	{
		BtjitObjectNames names;

		btjit_object_names(&shapes[i], tmpl, &names);
		if (btjit_listed(names.key))
			continue;
		btjit_listed_add(&shapes[i], names.key);
		if (btjit_object_cache_exists(&names))
			continue;
		if (btjit_warm_shapes == NULL)
			btjit_warm_shapes = MemoryContextAlloc(TopMemoryContext,
												   BTJIT_SHAPES_MAX * sizeof(BtjitListedShape));
		if (btjit_nwarm < BTJIT_SHAPES_MAX)
			btjit_warm_shapes[btjit_nwarm++] = btjit_listed_shapes[btjit_nlisted - 1];
	}
	pfree(shapes);
	btjit_warm_bound(nshapes);
}

/*
 * Warm start under btree_jit.object_cache_max_files: compile only as many
 * missing shapes as the cache has room for, the most recently listed ones
 * (the end of the list); each further one would evict another object, and
 * the next restart would compile that one again.
 */
static void
btjit_warm_bound(int nlisted)
{
	int			skipped = 0;

	if (btjit_object_cache_max_files > 0 && btjit_nwarm > 0)
	{
		int			room = btjit_object_cache_max_files -
			btjit_object_cache_count();

		if (room < 0)
			room = 0;
		if (btjit_nwarm > room)
		{
			skipped = btjit_nwarm - room;
			memmove(btjit_warm_shapes, btjit_warm_shapes + skipped,
					room * sizeof(BtjitListedShape));
			btjit_nwarm = room;
		}
	}
	LWLockAcquire(btjit_compile_shared->lock, LW_EXCLUSIVE);
	btjit_compile_shared->warm_pending = btjit_nwarm;
	LWLockRelease(btjit_compile_shared->lock);
	if (btjit_nwarm > 0 || skipped > 0)
		ereport(LOG,
				(errmsg("btree_jit: warm start: %d of %d listed shapes are not in the object cache and will be compiled",
						btjit_nwarm, nlisted),
				 skipped > 0 ?
				 errdetail("%d more are not, for want of room (btree_jit.object_cache_max_files = %d).",
						   skipped, btjit_object_cache_max_files) : 0));
}

/*
 * The next warm-start shape still missing from the cache (a backend may
 * have had it compiled meanwhile), or false.
 */
static bool
btjit_warm_take(BtjitShape *shape, char *key)
{
	BtjitWhy	why;

	while (btjit_warm_next < btjit_nwarm)
	{
		BtjitListedShape *next = &btjit_warm_shapes[btjit_warm_next++];
		bool		pending;

		LWLockAcquire(btjit_compile_shared->lock, LW_EXCLUSIVE);
		btjit_compile_shared->warm_pending = btjit_nwarm - btjit_warm_next;
		pending = btjit_queue_find(next->key) != NULL ||
			btjit_failed_lookup(next->key, &why) != NULL;
		LWLockRelease(btjit_compile_shared->lock);
		if (pending || btjit_object_cache_file_exists(next->key))
			continue;
		memcpy(shape, &next->shape, sizeof(BtjitShape));
		strlcpy(key, next->key, BTJIT_OBJECT_KEY_LEN);
		return true;
	}
	return false;
}

/* Is key one of the warm-start shapes not taken yet? */
static bool
btjit_warm_waiting(const char *key)
{
	for (int i = btjit_warm_next; i < btjit_nwarm; i++)
		if (strcmp(btjit_warm_shapes[i].key, key) == 0)
			return true;
	return false;
}

/*
 * Prune the in-memory list: keep the shapes whose objects the cache holds
 * (the others were evicted or removed: a restart need not bring them back)
 * and those the warm start has yet to compile, then at most
 * btree_jit.object_cache_max_files (and BTJIT_SHAPES_MAX) of them, the
 * most recent.
 */
static void
btjit_shapes_prune(void)
{
	int			kept = 0;
	int			bound = BTJIT_SHAPES_MAX;

	for (int i = 0; i < btjit_nlisted; i++)
	{
		const char *key = btjit_listed_shapes[i].key;

		if (!btjit_object_cache_file_exists(key) && !btjit_warm_waiting(key))
			continue;
		if (kept != i)
			btjit_listed_shapes[kept] = btjit_listed_shapes[i];
		kept++;
	}
	btjit_nlisted = kept;
	if (btjit_object_cache_max_files > 0 &&
		btjit_object_cache_max_files < bound)
		bound = btjit_object_cache_max_files;
	if (btjit_nlisted > bound)
	{
		memmove(btjit_listed_shapes,
				btjit_listed_shapes + (btjit_nlisted - bound),
				bound * sizeof(BtjitListedShape));
		btjit_nlisted = bound;
	}
}

/*
 * Write the list whole, durably as PostgreSQL writes its own state files:
 * a temporary file ("shapes.tmp.<pid>", which objcache.c removes if the
 * worker dies before the rename), fsynced, then durable_rename(), which
 * fsyncs the directory too.  A failure is logged and leaves the previous
 * list in place.
 */
static void
btjit_shapes_write(void)
{
	char		path[MAXPGPATH];
	char		tmp[MAXPGPATH + 32];
	BtjitShapesHeader h;
	BtjitShape *shapes;
	int			fd;
	bool		ok;

	btjit_shapes_path(path);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, MyProcPid);

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, BTJIT_SHAPES_MAGIC, sizeof(h.magic));
	h.shape_size = sizeof(BtjitShape);
	h.count = btjit_nlisted;
	shapes = palloc(Max(btjit_nlisted, 1) * sizeof(BtjitShape));
	for (int i = 0; i < btjit_nlisted; i++)
		memcpy(&shapes[i], &btjit_listed_shapes[i].shape, sizeof(BtjitShape));
	h.crc = btjit_shapes_crc(&h, shapes, btjit_nlisted);

	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("btree_jit: could not create file \"%s\": %m", tmp)));
		pfree(shapes);
		return;
	}
	errno = 0;
	ok = write(fd, &h, sizeof(h)) == sizeof(h) &&
		write(fd, shapes, btjit_nlisted * sizeof(BtjitShape)) ==
		(ssize_t) (btjit_nlisted * sizeof(BtjitShape));
	if (!ok && errno == 0)
		errno = ENOSPC;			/* a short write: no space, most likely */
	if (!ok)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("btree_jit: could not write file \"%s\": %m", tmp)));
	else if (pg_fsync(fd) != 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("btree_jit: could not fsync file \"%s\": %m", tmp)));
		ok = false;
	}
	if (CloseTransientFile(fd) != 0 && ok)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("btree_jit: could not close file \"%s\": %m", tmp)));
		ok = false;
	}
	pfree(shapes);
	if (!ok || durable_rename(tmp, path, LOG) != 0)
		(void) unlink(tmp);
}

/* A compiled shape: the most recent of the warm-start list, written anew. */
static void
btjit_shapes_note(const BtjitShape *shape, const char *key)
{
	btjit_listed_add(shape, key);
	btjit_shapes_prune();
	btjit_shapes_write();
}

/*
 * After a compile: LOG (at most every BTJIT_BOUND_LOG_SECS) that
 * btree_jit.object_cache_max_files is below the key shapes in use, when
 * the store evicted objects written or linked within the last hour, when
 * the worker just compiled again a shape it had compiled before (its object
 * was lost), or when the cache holds more objects than its bound (objects
 * that backends have yet to link are not evicted).
 */
static void
btjit_bound_check(const char *key, bool again, int evicted_in_use)
{
	int			nobjects;
	TimestampTz now = GetCurrentTimestamp();

	if (btjit_object_cache_max_files <= 0 ||
		(btjit_bound_logged_at != 0 &&
		 now < TimestampTzPlusMilliseconds(btjit_bound_logged_at,
										   BTJIT_BOUND_LOG_SECS * 1000)))
		return;
	nobjects = btjit_object_cache_count();
	if (!again && evicted_in_use == 0 &&
		nobjects <= btjit_object_cache_max_files)
		return;
	btjit_bound_logged_at = now;
	ereport(LOG,
			(errmsg("btree_jit: the object cache is smaller than the key shapes in use"),
			 nobjects > btjit_object_cache_max_files ?
			 errdetail("The cache holds %d objects, above btree_jit.object_cache_max_files = %d: objects that backends have yet to link are not evicted.",
					   nobjects, btjit_object_cache_max_files) :
			 again ?
			 errdetail("The compile worker compiled key shape %s again after its object had been removed (btree_jit.object_cache_max_files = %d).",
					   key, btjit_object_cache_max_files) :
			 errdetail("Storing key shape %s evicted an object written or used within the last hour (btree_jit.object_cache_max_files = %d).",
					   key, btjit_object_cache_max_files),
			 errhint("Raise btree_jit.object_cache_max_files above the number of key shapes the server's indexes use.")));
}

/* What a compile child reports through its pipe. */
/* How a compile in a child process ended. */
typedef enum BtjitChildOutcome
{
	BTJIT_CHILD_COMPILED,		/* the object is in the cache */
	BTJIT_CHILD_FAILED,			/* the child reported a failure: why */
	BTJIT_CHILD_UNSTORED,		/* compiled, but the object could not be
								 * stored: why */
	BTJIT_CHILD_DIED			/* no report (killed, or not started): a
								 * retry may succeed */
} BtjitChildOutcome;

/* What becomes of a queue entry once its compile has ended. */
typedef enum BtjitFinishOutcome
{
	BTJIT_FINISH_COMPILED,		/* freed, counted, backends told */
	BTJIT_FINISH_RETRY,			/* back to pending for another attempt */
	BTJIT_FINISH_FAILED,		/* freed, listed as failed, backends told */
	BTJIT_FINISH_UNSTORED		/* freed, listed as unstored (backends
								 * compile it themselves), backends told */
} BtjitFinishOutcome;

typedef struct BtjitChildReport
{
	BtjitObjectOutcome outcome;
	double		compile_ms;
	int			evicted_in_use; /* btjit_object_cache_evictions_in_use() */
	char		why[BTJIT_REASON_LEN];
} BtjitChildReport;

/* Kill a compile child left running when the worker exits. */
static void
btjit_worker_exit(int code, Datum arg)
{
	BtjitCompileShared *cs = btjit_compile_shared;

	/* an error may have left the queue's lock held: it is ours to drop */
	LWLockReleaseAll();
	if (btjit_child_pid != 0)
	{
		kill(btjit_child_pid, SIGKILL);
		(void) waitpid(btjit_child_pid, NULL, 0);
		btjit_child_pid = 0;
	}
	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	cs->worker_pid = 0;
	cs->worker_latch = NULL;
	LWLockRelease(cs->lock);
}

/*
 * In the compile child: compile, store the object, report, exit.  It
 * inherited the worker's exit callbacks (its PGPROC, the lock table),
 * which are not its to run: on_exit_reset() drops them, so that even a
 * FATAL from LLVM's error guard only ends this process.
 */
static void
btjit_compile_child(const BtjitShape *shape, int wfd, pid_t parent)
{
	BtjitChildReport report;
	BtjitWhy	why;
	instr_time	start,
				duration;

	on_exit_reset();
	MyProcPid = getpid();

	/*
	 * Die with the worker: a worker killed by a signal (a crash, after which
	 * the postmaster restarts everything) must not leave a compile running
	 * into the next incarnation of the cluster.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(4);

	/*
	 * A compile is background work: it should leave the CPU to the queries
	 * (which run the stock path meanwhile) where it can.  Measured on a
	 * loaded 2-core machine (bench/README.md, compile_latency): at nice 5
	 * the compile slowed the query that had queued the shape; SCHED_IDLE
	 * starved it for seconds; nice 10 is the compromise.
	 */
	(void) setpriority(PRIO_PROCESS, 0, BTJIT_COMPILE_NICE);

	memset(&report, 0, sizeof(report));

	if (btjit_compile_fault == BTJIT_COMPILE_FAULT_SETTING_SLOW)
		pg_usleep(3000000L);

	INSTR_TIME_SET_CURRENT(start);
	PG_TRY();
	{
		report.outcome = btjit_compile_object(shape, &why);
		strlcpy(report.why, why.text, sizeof(report.why));
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(TopMemoryContext);
		edata = CopyErrorData();
		strlcpy(report.why, edata->message, sizeof(report.why));
		report.outcome = BTJIT_OBJECT_COMPILE_FAILED;
	}
	PG_END_TRY();
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	report.compile_ms = INSTR_TIME_GET_MILLISEC(duration);
	report.evicted_in_use = btjit_object_cache_evictions_in_use();

	if (write(wfd, &report, sizeof(report)) != sizeof(report))
		_exit(3);
	_exit(report.outcome == BTJIT_OBJECT_STORED ? 0 : 2);
}

/*
 * Compile one shape in a child and wait for it, staying responsive to
 * SIGTERM, SIGHUP and postmaster death.  With BTJIT_CHILD_FAILED or
 * BTJIT_CHILD_DIED, why says what happened; a child that died without
 * reporting (or could not be started) may succeed on a retry.
 */
static BtjitChildOutcome
btjit_compile_in_child(const BtjitShape *shape, double *compile_ms,
					   int *evicted_in_use, BtjitWhy *why)
{
	int			fds[2];
	pid_t		pid;
	int			status;
	BtjitChildReport report;
	ssize_t		n;

	if (pipe(fds) != 0)
	{
		btjit_why_set(why, "could not create a pipe: %m");
		return BTJIT_CHILD_DIED;
	}
	btjit_pins_copy();
	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		btjit_why_set(why, "could not fork a compile process: %m");
		close(fds[0]);
		close(fds[1]);
		return BTJIT_CHILD_DIED;
	}
	if (pid == 0)
	{
		close(fds[0]);
		btjit_pin_copy_valid = true;
		btjit_compile_child(shape, fds[1], MyProcPid);
	}
	close(fds[1]);
	btjit_child_pid = pid;

	for (;;)
	{
		pid_t		r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
		{
			status = 0;
			break;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 5L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ShutdownRequestPending)
			proc_exit(1);		/* see btjit_compile_worker_main */
	}
	btjit_child_pid = 0;

	n = read(fds[0], &report, sizeof(report));
	close(fds[0]);
	if (n != sizeof(report))
	{
		if (WIFSIGNALED(status))
			btjit_why_set(why, "the compile process was killed by signal %d",
						  WTERMSIG(status));
		else
			btjit_why_set(why, "the compile process exited with status %d without reporting",
						  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return BTJIT_CHILD_DIED;
	}
	*compile_ms = report.compile_ms;
	*evicted_in_use = report.evicted_in_use;
	switch (report.outcome)
	{
		case BTJIT_OBJECT_STORED:
			break;
		case BTJIT_OBJECT_COMPILE_FAILED:
			btjit_why_copy(why, report.why);
			return BTJIT_CHILD_FAILED;
		case BTJIT_OBJECT_STORE_FAILED:
			btjit_why_copy(why, report.why);
			return BTJIT_CHILD_UNSTORED;
	}
	return BTJIT_CHILD_COMPILED;
}

/*
 * Is the shape's hold over?  It is while the backend that queued it is
 * still the one in its PGPROC slot, has not been waiting for its client for
 * BTJIT_HOLD_IDLE_MS (as far as polls every BTJIT_HOLD_POLL_MS can tell),
 * and BTJIT_HOLD_MAX_MS have not passed.  Caller holds the lock.
 */
static bool
btjit_hold_over(BtjitQueueEntry *e, TimestampTz now)
{
	PGPROC	   *proc;
	uint32		wait_event;

	if (e->holder_pid == 0)
		return true;
	if (e->holder_procno < 0 ||
		e->holder_procno >= (int) ProcGlobal->allProcCount ||
		now >= TimestampTzPlusMilliseconds(e->queued_at, BTJIT_HOLD_MAX_MS))
	{
		e->holder_pid = 0;
		return true;
	}
	proc = GetPGProcByNumber(e->holder_procno);
	/* read without a lock, as pg_stat_activity does: a hint, not a fact */
	wait_event = *(volatile uint32 *) &proc->wait_event_info;
	if (*(volatile int *) &proc->pid != e->holder_pid)
	{
		e->holder_pid = 0;		/* it has exited */
		return true;
	}
	if (wait_event != WAIT_EVENT_CLIENT_READ)
	{
		e->holder_idle_since = 0;
		return false;
	}
	if (e->holder_idle_since == 0)
		e->holder_idle_since = now;
	if (now >= TimestampTzPlusMilliseconds(e->holder_idle_since, BTJIT_HOLD_IDLE_MS))
	{
		e->holder_pid = 0;
		return true;
	}
	return false;
}

/* Searches of a pending entry since the worker's previous take. */
static inline uint64
btjit_recent_demand(BtjitQueueEntry *e)
{
	uint64		demand = pg_atomic_read_u64(&e->demand);

	return demand > e->demand_seen ? demand - e->demand_seen : 0;
}

/* Should a be compiled before b (either may be NULL)? */
static bool
btjit_queue_before(BtjitQueueEntry *a, BtjitQueueEntry *b)
{
	uint64		da,
				db;

	if (a == NULL)
		return false;
	if (b == NULL)
		return true;
	da = btjit_recent_demand(a);
	db = btjit_recent_demand(b);
	if (da != db)
		return da > db;
	return a->seq < b->seq;
}

/*
 * Take the busiest pending shape whose hold is over (see "Demand" at the
 * top): marks it compiling and starts a new demand window for the rest.
 * False if none, or if a busier shape is still held; *held then says
 * whether some pending shape is held (the caller polls again in
 * BTJIT_HOLD_POLL_MS).
 */
static bool
btjit_queue_take(BtjitShape *shape, char *key, int *attempts, bool *held)
{
	BtjitCompileShared *cs = btjit_compile_shared;
	BtjitQueueEntry *best_ready = NULL;
	BtjitQueueEntry *best_held = NULL;
	TimestampTz now = GetCurrentTimestamp();

	*held = false;
	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	for (int i = 0; i < cs->queue_size; i++)
	{
		BtjitQueueEntry *e = &cs->entries[i];

		if (e->state != BTJIT_QE_PENDING)
			continue;
		if (!btjit_hold_over(e, now))
		{
			*held = true;
			if (btjit_queue_before(e, best_held))
				best_held = e;
		}
		else if (btjit_queue_before(e, best_ready))
			best_ready = e;
	}
	/* a held shape with more recent demand is worth its short wait */
	if (best_ready != NULL && best_held != NULL &&
		btjit_recent_demand(best_held) > btjit_recent_demand(best_ready))
		best_ready = NULL;
	if (best_ready != NULL)
	{
		best_ready->state = BTJIT_QE_COMPILING;
		*attempts = ++best_ready->attempts;
		memcpy(shape, &best_ready->shape, sizeof(BtjitShape));
		strlcpy(key, best_ready->key, 17);
		for (int i = 0; i < cs->queue_size; i++)
			if (cs->entries[i].state == BTJIT_QE_PENDING)
				cs->entries[i].demand_seen =
					pg_atomic_read_u64(&cs->entries[i].demand);
	}
	LWLockRelease(cs->lock);
	return best_ready != NULL;
}

/*
 * Finish a shape: free its entry (or return it to pending for another
 * attempt), record the outcome, and tell the backends.
 */
static void
btjit_queue_finish(const char *key, BtjitFinishOutcome outcome,
				   double compile_ms, const char *why)
{
	BtjitCompileShared *cs = btjit_compile_shared;
	BtjitQueueEntry *e;
	bool		retry = (outcome == BTJIT_FINISH_RETRY);

	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	e = btjit_queue_find(key);
	if (e != NULL && outcome == BTJIT_FINISH_COMPILED)
		btjit_deliver(e);
	if (e != NULL)
		e->state = retry ? BTJIT_QE_PENDING : BTJIT_QE_FREE;
	if (outcome == BTJIT_FINISH_COMPILED)
	{
		cs->compiles++;
		cs->last_compile_ms = compile_ms;
		cs->last_compile_at = GetCurrentTimestamp();
	}
	else if (outcome == BTJIT_FINISH_FAILED ||
			 outcome == BTJIT_FINISH_UNSTORED)
	{
		/* a shape failed again (after its retry time) keeps its entry */
		BtjitFailedShape *f = btjit_failed_find(key);

		if (f == NULL)
		{
			f = &cs->failed[cs->failed_next];
			cs->failed_next = (cs->failed_next + 1) % BTJIT_FAILED_MAX;
			if (cs->nfailed < BTJIT_FAILED_MAX)
				cs->nfailed++;
		}
		if (outcome == BTJIT_FINISH_FAILED)
			cs->failures++;
		f->unstored = (outcome == BTJIT_FINISH_UNSTORED);
		strlcpy(f->key, key, sizeof(f->key));
		strlcpy(f->why, why, sizeof(f->why));
		f->failed_at = GetCurrentTimestamp();
	}
	LWLockRelease(cs->lock);

	/* after the object is in place, and after a failure is listed */
	if (!retry)
		pg_atomic_fetch_add_u64(&cs->generation, 1);
}

/*
 * The worker's start: signals, its exit callback, and the queue's worker
 * fields.  A shape left compiling by a previous worker (that one exited in
 * the middle) goes back to pending; its attempts stay counted.
 */
static void
btjit_worker_attach(void)
{
	BtjitCompileShared *cs = btjit_compile_shared;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	/* the compile child's exit is collected by waitpid */
	pqsignal(SIGCHLD, PG_SIG_DFL);
	BackgroundWorkerUnblockSignals();

	before_shmem_exit(btjit_worker_exit, (Datum) 0);

	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	for (int i = 0; i < cs->queue_size; i++)
		if (cs->entries[i].state == BTJIT_QE_COMPILING)
			cs->entries[i].state = BTJIT_QE_PENDING;
	cs->worker_pid = MyProcPid;
	cs->worker_latch = MyLatch;
	LWLockRelease(cs->lock);
}

/*
 * The next shape to compile: the backends' shapes first; warm-start shapes
 * when none waits (one attempt each: they are a convenience, a crash fails
 * them).  False after waiting, when there was nothing to take.
 */
static bool
btjit_worker_next(BtjitShape *shape, char *key, int *attempts, bool *warm)
{
	bool		held;

	*warm = false;
	if (btjit_queue_take(shape, key, attempts, &held))
		return true;
	/* a backend's shape is held: warm-start shapes wait too */
	if (held)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 BTJIT_HOLD_POLL_MS, PG_WAIT_EXTENSION);
		return false;
	}
	if (btjit_warm_take(shape, key))
	{
		*attempts = BTJIT_COMPILE_ATTEMPTS;
		*warm = true;
		return true;
	}
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1L,
					 PG_WAIT_EXTENSION);
	return false;
}

/*
 * Compile one shape taken from the queue (its attempts counted, this one
 * included) and finish it: compiled, retried once after a crash, or failed
 * and logged once.
 */
static void
btjit_worker_compile(const BtjitShape *shape, const char *key, int attempts,
					 bool warm)
{
	BtjitWhy	why;
	double		compile_ms = 0;
	int			evicted_in_use = 0;
	BtjitChildOutcome outcome;

	if (!btjit_compiler_preloaded)
	{
		btjit_compiler_preload();
		btjit_compiler_preloaded = true;
	}

	if (attempts > BTJIT_COMPILE_ATTEMPTS)
	{
		btjit_why_set(&why,
					  "the compile process died %d times compiling this shape",
					  BTJIT_COMPILE_ATTEMPTS);
		outcome = BTJIT_CHILD_FAILED;
	}
	else
		outcome = btjit_compile_in_child(shape, &compile_ms, &evicted_in_use,
										 &why);

	if (outcome == BTJIT_CHILD_COMPILED)
	{
		bool		again = !warm && btjit_listed(key);

		btjit_queue_finish(key, BTJIT_FINISH_COMPILED, compile_ms, NULL);
		btjit_shapes_note(shape, key);
		btjit_bound_check(key, again, evicted_in_use);
		if (btjit_log_compiles)
			ereport(LOG,
					(errmsg("btree_jit: compile worker compiled shape %s in %.3f ms",
							key, compile_ms)));
		return;
	}

	/*
	 * Compiled, but the cache did not take the object (a full disk, a
	 * directory made unwritable): the shape is fine, so the backends that
	 * want it compile it themselves until the retry time has passed.
	 */
	if (outcome == BTJIT_CHILD_UNSTORED)
	{
		ereport(LOG,
				(errmsg("btree_jit: the compile worker could not store key shape %s; backends compile it themselves for %d minutes",
						key, BTJIT_FAILED_RETRY_SECS / 60),
				 errdetail_internal("%s", why.text)));
		btjit_queue_finish(key, BTJIT_FINISH_UNSTORED, compile_ms, why.text);
		return;
	}

	/* a crash may be the machine's, not the shape's: one more try */
	if (outcome == BTJIT_CHILD_DIED && attempts < BTJIT_COMPILE_ATTEMPTS)
	{
		ereport(LOG,
				(errmsg("btree_jit: compiling key shape %s failed, retrying: %s",
						key, why.text)));
		btjit_queue_finish(key, BTJIT_FINISH_RETRY, 0, why.text);
		return;
	}

	/* logged once per attempt: the shape is failed for a while */
	ereport(WARNING,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("btree_jit: the compile worker could not compile key shape %s", key),
			 errdetail_internal("%s", why.text),
			 errhint("Indexes of this shape use the server's own page search; new sessions queue it again after %d minutes.",
					 BTJIT_FAILED_RETRY_SECS / 60)));
	btjit_queue_finish(key, BTJIT_FINISH_FAILED, 0, why.text);
}

void
btjit_compile_worker_main(Datum arg)
{
	btjit_worker_attach();

	/*
	 * A previous worker's compile child may have died mid-write (it dies
	 * with the worker): its temporary files are stale now.
	 */
	btjit_object_cache_clean();

	/* registered only when the module is active (btjit_worker_register) */
	if (btjit_object_cache)
		btjit_warm_start();

	for (;;)
	{
		BtjitShape	shape;
		char		key[BTJIT_OBJECT_KEY_LEN];
		int			attempts;
		bool		warm;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		/*
		 * Exit status 1, not 0: the postmaster unregisters a worker that
		 * exits with 0, and a worker stopped by pg_terminate_backend() must
		 * come back.  At shutdown the status does not matter.
		 */
		if (ShutdownRequestPending)
			proc_exit(1);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		if (btjit_worker_next(&shape, key, &attempts, &warm))
			btjit_worker_compile(&shape, key, attempts, warm);
	}
}
