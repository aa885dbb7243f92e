/*-------------------------------------------------------------------------
 *
 * btree_jit.h
 *	  Declarations shared by the files of the btree_jit module.
 *
 * One responsibility per file (src/README describes the design):
 *	  btree_jit.c	module start-up: GUCs, locating and redirecting
 *					_bt_binsrch and _bt_compare in the postmaster
 *	  locate.c		the locator's policy: which function is _bt_binsrch,
 *					what evidence is enough (binpatch.h)
 *	  elf_image.c	reading the server's ELF image and its .eh_frame
 *	  callconv.c	the calling-convention proof (data-flow analysis)
 *	  refsweep.c	the sweep for references to and relocations of the
 *					target
 *	  x86.c			shared x86 helpers: Zydis set-up, branch targets
 *	  redirect.c	entry detour with a relocated-prologue trampoline
 *	  dispatch.c	the redirected entry points: JIT code, stock path,
 *					verify
 *	  keyshape.c	derive a key shape (shape.h) from the relcache
 *	  jitcache.c	signature -> code, relation -> index state,
 *					invalidation
 *	  indexstats.c	cluster-wide per-index statistics and totals in
 *					shared memory, flushed at transaction end
 *	  compile_loader.c  compile a shape: from the object cache, else
 *					with the compiler library, loaded on first need
 *	  compile_worker.c  the compile queue in shared memory and the
 *					background worker that compiles queued shapes
 *	  objcache.c	the template's identity; compiled objects on disk
 *	  objload.c		link a cached object without LLVM (objload.h)
 *	  bitcode.c		the identity of the server's bitcode (imports)
 *	  sqlfuncs.c	SQL-callable reporting and control functions
 *
 * The compiler is a shared library of its own, btree_jit_llvm.so, because
 * it links LLVM: a backend that never compiles (a short connection) never
 * maps LLVM and never runs its exit-time destructors.  Its interface to
 * the module is compiler.h, which is all of the module it includes.
 *	  compile.c		specialise the bitcode template with LLVM ORC
 *	  llvm_error.cpp  LLVM fatal errors and bad_alloc -> FATAL, within a
 *					guard
 *	  bcimport.c	the rules for importing a proc from the server's
 *					bitcode, and its module's preparation (bcimport.h)
 *	  llvm_bitcode.cpp  the summary index and deleteBody, for bcimport.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_H
#define BTREE_JIT_H

#include "access/nbtree.h"
#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "utils/rel.h"

#include "binpatch.h"
#include "compiler.h"
#include "pg_compat.h"
#include "shape.h"

/*
 * Everything declared here is internal to the module: hidden symbols are
 * reached without a GOT load, which matters on the dispatcher's path.
 * (PostgreSQL 15's PGDLLEXPORT does not set visibility, hence the pragma.)
 */
#pragma GCC visibility push(hidden)

/* ---- GUCs (defined in btree_jit.c) ---- */
extern bool btjit_enabled;
extern bool btjit_verify;
extern bool btjit_log_compiles;
extern int	btjit_max_signatures;
extern int	btjit_compile_threshold;
extern char *btjit_template_path;
extern char *btjit_server_bitcode_path;
extern bool btjit_object_cache;
extern int	btjit_object_cache_max_files;
extern int	btjit_compile_fault;	/* BtjitCompileFault; test hook */
extern int	btjit_max_indexes;
extern int	btjit_compile_mode;		/* BtjitCompileMode */
extern int	btjit_compile_queue_size;

typedef enum BtjitCompileMode
{
	BTJIT_COMPILE_MODE_BACKGROUND = 0,	/* the compile worker compiles */
	BTJIT_COMPILE_MODE_INLINE	/* the backend that needs the shape */
} BtjitCompileMode;

/*
 * btree_jit.compile_fault beyond the library's faults (compiler.h): the
 * compile worker's child sleeps 3 s before compiling, so that tests can
 * kill it in the middle.  The library never sees this value.
 */
#define BTJIT_COMPILE_FAULT_SLOW 100

/* ---- Module state established in the postmaster (btree_jit.c) ---- */
typedef OffsetNumber (*BtjitBinsrchFn) (Relation rel, BTScanInsert key,
										Buffer buf);
typedef int32 (*BtjitCompareFn) (Relation rel, BTScanInsert key, Page page,
								 OffsetNumber offnum);
typedef OffsetNumber (*BtjitBinsrchInsertFn) (Relation rel,
											  BTInsertState insertstate);
#if PG_VERSION_NUM < 160000
typedef bool (*BtjitCheckkeysFn) (IndexScanDesc scan, IndexTuple tuple,
								  int tupnatts, ScanDirection dir,
								  bool *continuescan);
#endif

typedef struct BtjitModuleState
{
	bool		active;			/* redirect installed */
	char		reason[512];	/* where installed, or why not */
	BtjitLocation location;
	BtjitDetour detour;
	BtjitBinsrchFn stock;		/* runs the original machine code */
	bool		compare_active; /* _bt_compare redirected too */
	BtjitDetour compare_detour;
	BtjitCompareFn stock_compare;	/* the original _bt_compare */
	bool		insert_active;	/* _bt_binsrch_insert redirected too */
	BtjitDetour insert_detour;
	BtjitBinsrchInsertFn stock_insert;	/* the original _bt_binsrch_insert */
	bool		check_active;	/* _bt_checkkeys redirected too (15 only) */
	BtjitDetour check_detour;
#if PG_VERSION_NUM < 160000
	BtjitCheckkeysFn stock_check;	/* the original _bt_checkkeys */
#endif
} BtjitModuleState;

extern BtjitModuleState btjit_module;

/* ---- Dispatcher (dispatch.c) ---- */
extern OffsetNumber btjit_dispatch(Relation rel, BTScanInsert key, Buffer buf);
extern int32 btjit_dispatch_compare(Relation rel, BTScanInsert key, Page page,
									OffsetNumber offnum);
extern OffsetNumber btjit_dispatch_insert(Relation rel,
										  BTInsertState insertstate);
#if PG_VERSION_NUM < 160000
extern bool btjit_dispatch_check(IndexScanDesc scan, IndexTuple tuple,
								 int tupnatts, ScanDirection dir,
								 bool *continuescan);
#endif
/* The slot entry of an index without compiled code (jitcache.c sets it). */
extern uint16 btjit_stock_entry(void *rel, void *scankey, int buf,
								uint64 *counters);
/* Called by compiled code, found by name: must stay visible. */
extern __attribute__((visibility("default"))) uint16 btjit_declined(void *rel, void *scankey,
																	int buf, uint64 *counters);
extern __attribute__((visibility("default"))) int32 btjit_compare_declined(void *rel, void *scankey,
																		   const char *page, uint32 offnum,
																		   uint64 *counters);
extern __attribute__((visibility("default"))) uint16 btjit_insert_declined(void *rel, void *insertstate,
																		   uint64 *counters);
extern __attribute__((visibility("default"))) bool btjit_check_declined(void *scan, void *tuple,
																	   int tupnatts, int dir,
																	   bool *continuescan,
																	   uint64 *counters);

/* Search and compile counts, per backend or cluster-wide. */
typedef struct BtjitCounters
{
	uint64		jit_searches;
	uint64		stock_searches;
	uint64		verified_searches;	/* page searches and compares */
	uint64		compiles;
	uint64		compile_failures;
} BtjitCounters;

/* One index's counters, as a backend or the cluster has them. */
typedef struct BtjitIndexStats
{
	uint64		jit_searches;
	uint64		stock_searches;
	uint64		declined_searches;
	uint64		verified_searches;
	uint64		jit_compares;
	uint64		verified_compares;
	uint64		jit_inserts;	/* _bt_binsrch_insert answered by compiled code */
	uint64		verified_inserts;
	uint64		jit_checks;		/* _bt_checkkeys answered by compiled code */
	uint64		verified_checks;
	uint64		compiles;		/* code compiled or loaded for it */
	uint64		compile_failures;
} BtjitIndexStats;

/* ---- Per-index state and code cache (jitcache.c) ---- */
typedef enum BtjitIndexState
{
	BTJIT_INDEX_UNKNOWN = 0,	/* not examined since (re)open */
	BTJIT_INDEX_JIT,			/* compiled code in use */
	BTJIT_INDEX_STOCK,			/* stock path; reason says why */
	BTJIT_INDEX_QUEUED			/* stock path while the compile worker
								 * compiles its shape */
} BtjitIndexState;

typedef struct BtjitIndex
{
	Oid			indexrelid;		/* hash key */
	BtjitIndexState state;
	BtjitSearchFn fn;			/* non-NULL only when state is JIT */
	BtjitEntryFn entry;			/* its fused entry, likewise */
	BtjitCompareEntryFn cmp_entry;	/* compiled _bt_compare, likewise */
	BtjitInsertEntryFn ins_entry;	/* compiled _bt_binsrch_insert, likewise */
	BtjitCheckEntryFn chk_entry;	/* compiled _bt_checkkeys, likewise */
	struct BtjitCode *code;		/* compiled shape, when state is JIT */
	char		reason[192];
	char		signature[BTJIT_SIGNATURE_LEN];
	uint64		jit_searches;	/* counters[0] of the fused entry */
	uint64		stock_searches;
	uint64		declined_searches;	/* compiled code handed back the call */
	uint64		verified_searches;
	uint64		jit_compares;	/* counters[0] of the compare entry */
	uint64		verified_compares;
	uint64		jit_inserts;	/* counters[0] of the insert entry */
	uint64		verified_inserts;
	uint64		jit_checks;		/* counters[0] of the check entry */
	uint64		verified_checks;
	/* ---- nothing above is read by compiled code but the four counters ---- */
	uint64		compiles;		/* this backend compiled or loaded its code */
	uint64		compile_failures;
	double		last_compile_ms;	/* of the code it last received */
	bool		last_from_object_cache;
	TimestampTz last_code_at;	/* 0: never received code */
	bool		shared_catalog; /* counted under database 0 */
	bool		stats_state_changed;	/* state not yet flushed */
	bool		stats_hash_valid;	/* stats_hash computed */
	uint32		stats_hash;		/* of its key in the shared hash */
	BtjitIndexStats flushed;	/* counters as of the last flush */
	uint64		queued_generation;	/* compile generation last looked at,
									 * when state is QUEUED */
} BtjitIndex;

/*
 * Relation -> index state, without a hash probe: a direct-mapped table keyed
 * by the relcache entry's address.  The address of a relcache entry is
 * stable for its lifetime (rebuilds happen in place), and the relcache
 * callback empties slots whenever an index's definition may have changed;
 * the rd_id check catches an entry freed and its memory reused.
 */
#define BTJIT_SLOTS 256

typedef struct BtjitSlot
{
	Relation	rel;
	Oid			relid;
	BtjitEntryFn entry;			/* ix->entry, or btjit_stock_entry */
	BtjitCompareEntryFn cmp_entry;	/* ix->cmp_entry, or NULL */
	BtjitInsertEntryFn ins_entry;	/* ix->ins_entry, or NULL */
	BtjitCheckEntryFn chk_entry;	/* ix->chk_entry, or NULL */
	BtjitIndex *ix;
} pg_attribute_aligned(64) BtjitSlot;	/* a cache line; indexed by a shift */

extern BtjitSlot btjit_slots[BTJIT_SLOTS];

/* enabled and not verify: the dispatcher may tail-call compiled code */
extern bool btjit_fast_ok;

/*
 * Some index of this backend has received compiled code.  Until then the
 * redirected _bt_compare and _bt_binsrch_insert go straight to the server's
 * code without a slot probe: a short connection makes hundreds of such
 * calls from the stock page search of indexes below the threshold.
 */
extern bool btjit_code_present;

/*
 * btjit_code_present and enabled: the one test those dispatchers make
 * before the slot probe, so that without compiled code they cost what they
 * cost with the module off.
 */
extern bool btjit_code_active;

extern void btjit_set_code_present(void);

static inline BtjitSlot *
btjit_slot_for(Relation rel)
{
	uint64		h = ((uint64) (uintptr_t) rel >> 4) * UINT64CONST(0x9E3779B97F4A7C15);

	return &btjit_slots[h >> (64 - 8)];
}

extern BtjitIndex *btjit_index_open(Relation rel, bool force);
extern void btjit_cache_init(void);
extern void btjit_index_foreach(void (*cb) (BtjitIndex *ix, void *arg),
								void *arg);
extern BtjitIndex **btjit_index_list(int *nindexes);
extern void btjit_compile_totals(uint64 *compiles, uint64 *failures);
extern struct BtjitCode *btjit_code_for_shape(const BtjitShape *shape,
											  bool inline_only,
											  char *why, size_t whylen);

/*
 * ---- Cluster-wide statistics (indexstats.c) ----
 * Backends flush their per-index counters at transaction end and exit;
 * readers flush their own first.
 */
typedef struct BtjitIndexStatsRow
{
	Oid			dbid;
	Oid			indexrelid;
	BtjitIndexStats counts;
	double		usage;
	BtjitIndexState state;
	char		reason[192];
	char		signature[BTJIT_SIGNATURE_LEN];
	double		last_compile_ms;
	bool		last_from_object_cache;
	TimestampTz last_code_at;
} BtjitIndexStatsRow;

extern void btjit_stats_init(void);
extern void btjit_stats_flush(void);
extern void btjit_stats_totals(BtjitCounters *out);
extern void btjit_stats_foreach(void (*cb) (const BtjitIndexStatsRow *row,
											void *arg), void *arg);
extern void btjit_stats_info(int *max_indexes, int64 *entries,
							 int64 *evictions, TimestampTz *stats_reset);
extern void btjit_stats_reset(void);

/* ---- Key shape (keyshape.c) ---- */
extern bool btjit_shape_from_relation(Relation rel, BtjitShape *shape,
									  char *why, size_t whylen);
extern void btjit_shape_signature(const BtjitShape *shape, char *buf,
								  size_t buflen);
extern void btjit_shape_signature_tiers(const BtjitShape *shape,
										const char *bcinfo, char *buf,
										size_t buflen);

/* ---- Template and object cache (objcache.c) ---- */
extern void btjit_objcache_preload(void);

/* ---- The server's bitcode, for imports (bitcode.c) ---- */
extern const BtjitServerBitcode *btjit_server_bitcode(void);
extern void btjit_server_bitcode_preload(void);
extern void btjit_server_bitcode_for_compile(BtjitServerBitcode *bc);
extern bool btjit_template_read(const BtjitTemplate **tmpl, char *why,
								size_t whylen);
extern void btjit_object_names(const BtjitShape *shape,
							   const BtjitTemplate *tmpl,
							   BtjitObjectNames *names);
extern bool btjit_object_cache_load(const BtjitObjectNames *names,
									BtjitCode *code);
extern void btjit_object_cache_store(const BtjitObjectNames *names,
									 const char *data, size_t len);
extern bool btjit_object_cache_write(const BtjitObjectNames *names,
									 const char *data, size_t len,
									 char *why, size_t whylen);
extern bool btjit_object_cache_exists(const BtjitObjectNames *names);
extern void btjit_object_cache_dir(char *path);

/*
 * ---- Compiling (compile_loader.c) ----
 * Get code for a shape (entry points, compile_ms, from_object_cache): from
 * the object cache, else queued for the compile worker (background mode),
 * else compiled here; or fail with why[].  Raises no error for anything
 * LLVM, the template or the object cache does (only for the server's own
 * reasons, such as running out of memory).  btjit_compile_poll asks again
 * about a queued shape; btjit_compile_object is the worker's compile (in
 * its child process): compile and store the object, nothing else.
 */
typedef enum BtjitCompileResult
{
	BTJIT_COMPILE_OK,
	BTJIT_COMPILE_FAILED,
	BTJIT_COMPILE_QUEUED
} BtjitCompileResult;

extern BtjitCompileResult btjit_compile_shape(const BtjitShape *shape,
											  BtjitCode *code, bool inline_only,
											  char *why, size_t whylen);
extern BtjitCompileResult btjit_compile_poll(BtjitCode *code,
											 char *why, size_t whylen);
extern bool btjit_compile_object(const BtjitShape *shape, char *why,
								 size_t whylen);
extern void btjit_compiler_preload(void);
/* For btree_jit_explain(): raises an error if the shape cannot compile. */
extern char *btjit_explain_shape(const BtjitShape *shape, bool assembly);

/*
 * ---- The compile worker and its queue (compile_worker.c) ----
 * btjit_compile_generation is bumped (in shared memory) each time the worker
 * finishes a shape; a backend with queued indexes compares it with the value
 * it last saw, on the dispatcher's stock path only.
 */
typedef enum BtjitEnqueueResult
{
	BTJIT_ENQUEUE_QUEUED,		/* queued now, or already */
	BTJIT_ENQUEUE_FAILED,		/* the worker failed this shape: why[] */
	BTJIT_ENQUEUE_UNAVAILABLE	/* no worker or no room: why[] */
} BtjitEnqueueResult;

typedef enum BtjitQueueStatus
{
	BTJIT_QUEUE_PENDING,		/* queued or being compiled */
	BTJIT_QUEUE_FAILED,			/* why[] */
	BTJIT_QUEUE_ABSENT			/* done (or lost): look in the object cache */
} BtjitQueueStatus;

typedef struct BtjitWorkerStatus
{
	int			worker_pid;		/* 0: not running */
	int			queue_length;	/* queued or being compiled */
	uint64		compiles;
	uint64		failures;
	uint64		queue_full;
	double		last_compile_ms;
	TimestampTz last_compile_at;	/* 0: none yet */
	uint64		generation;
} BtjitWorkerStatus;

extern pg_atomic_uint64 *btjit_compile_generation;

static inline uint64
btjit_compile_generation_now(void)
{
	return btjit_compile_generation != NULL ?
		pg_atomic_read_u64(btjit_compile_generation) : 0;
}

/*
 * Has the compile worker finished something since this queued index was
 * last looked at?  One atomic read: btjit_stock_entry asks it on every
 * search of a queued index.
 */
static inline bool
btjit_index_compile_done(const BtjitIndex *ix)
{
	return btjit_compile_generation_now() != ix->queued_generation;
}

extern void btjit_worker_register(void);
extern BtjitEnqueueResult btjit_worker_enqueue(const BtjitShape *shape,
											   const char *key,
											   char *why, size_t whylen);
extern BtjitQueueStatus btjit_worker_lookup(const char *key, char *why,
											size_t whylen);
extern void btjit_worker_status(BtjitWorkerStatus *out);

#pragma GCC visibility pop

#endif							/* BTREE_JIT_H */
