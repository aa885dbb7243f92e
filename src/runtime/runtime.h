/*-------------------------------------------------------------------------
 *
 * runtime.h
 *	  The run-time layer: the redirects installed at start-up, the slot
 *	  table every dispatcher reads, and each backend's state of the indexes
 *	  it searches.  The dispatchers themselves, one file per redirected
 *	  function, are the layer above (src/targets/).
 *
 *	  redirects.c	locate and redirect the server's functions (through
 *					src/binpatch/), by the rows of targetlist.h; the stock
 *					entry points they leave; the start-up line
 *	  dispatch.c	the slot table, the switches the dispatchers test,
 *					relcache invalidation of the slots
 *	  jitcache.c	per backend: shape -> compiled code, index -> state,
 *					relcache invalidation
 *	  keyshape.c	a key shape from an index's relcache entry
 *	  blockhints.c	the per-backend block hints compiled code prefetches
 *					from, and their switch
 *	  recentbuf.c	a page pinned through the buffer this backend last
 *					found it in, skipping the buffer mapping table
 *
 * Dependencies point down: dispatch.c -> jitcache.c -> keyshape.c, every
 * file -> redirects.c, and jitcache.c -> src/compile/ for code.  Nothing
 * here calls src/targets/ or src/stats/ (they read the state kept here).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_RUNTIME_H
#define BTREE_JIT_RUNTIME_H

#include "access/nbtree.h"
#include "datatype/timestamp.h"
#include "utils/rel.h"

#include "locate/locate.h"
#include "code_abi.h"
#include "compile/compile.h"
#include "compiler.h"
#include "pg_compat.h"
#include "shape.h"
#include "target.h"

/*
 * Everything declared here is internal to the module: hidden symbols are
 * reached without a GOT load, which matters on the dispatcher's path.
 */
#pragma GCC visibility push(hidden)

/* ---- Settings (defined in the file that reads them) ---- */
extern bool btjit_cluster_enabled;	/* dispatch.c */
extern bool btjit_session_enabled;	/* dispatch.c */
extern int	btjit_compile_threshold;	/* jitcache.c */
extern int	btjit_max_signatures;	/* jitcache.c */
extern bool btjit_verify;		/* dispatch.c */
extern bool btjit_prefetch_hints;	/* blockhints.c */
extern bool btjit_recent_buffers;	/* recentbuf.c */

/*
 * Both switches (cluster_enabled and the session's enabled) on: what the
 * dispatchers test (jitcache.c; dispatch.c derives it)
 */
extern bool btjit_enabled;

/*
 * GUC assign hooks of btree_jit.cluster_enabled, .enabled and .verify
 * (dispatch.c)
 */
extern void btjit_assign_cluster_enabled(bool newval, void *extra);
extern void btjit_assign_enabled(bool newval, void *extra);
extern void btjit_assign_verify(bool newval, void *extra);
/* ... and of btree_jit.prefetch_hints (blockhints.c) */
extern void btjit_assign_prefetch_hints(bool newval, void *extra);

/* ---- The redirects (redirects.c) ---- */

/* What start-up did with one target. */
typedef enum BtjitRedirectOutcome
{
	BTJIT_REDIRECT_NOT_TRIED = 0,	/* start-up stopped before it */
	BTJIT_REDIRECT_DONE,
	BTJIT_REDIRECT_NOT_IN_MAJOR,	/* the server has no such function */
	BTJIT_REDIRECT_UNCHECKED_RELEASE,	/* left to this point release */
	BTJIT_REDIRECT_REFUSED		/* not found, not proven or not patched */
} BtjitRedirectOutcome;

/*
 * What start-up established, in the postmaster; backends inherit it by
 * fork.  active means _bt_binsrch is redirected; the other targets are
 * redirected or not each on its own (outcome[]).  stock[] holds, for
 * each redirected target, the entry that runs the server's original
 * machine code (its detour's trampoline); each target's file in
 * src/targets/ reads it with the server function's own type.
 */
typedef struct BtjitModuleState
{
	bool		active;			/* _bt_binsrch redirected */
	/* where installed, or why not: a clause per target (targetlist.h) */
	char		reason[2048];
	int			server_version_num; /* the running server's, not the headers' */
	bool		release_checked;	/* listed in mirrorlist.h */
	BtjitLocation location;
	BtjitRedirectOutcome outcome[BTJIT_NTARGETS];
	void	   *stock[BTJIT_NTARGETS];
	BtjitDetour detours[BTJIT_NTARGETS];
	BtjitReadpageLocation readpage_location;
	/*
	 * Where gcc split a target's body and its own file calls the part
	 * (locate/split.c): what start-up found, the part's detour and the
	 * entry that runs its original code; and the evidence of the one found.
	 */
	BtjitSplitOutcome split_outcome[BTJIT_NTARGETS];
	BtjitDetour split_detours[BTJIT_NTARGETS];
	void	   *split_stock[BTJIT_NTARGETS];
	char		split_evidence[1024];
} BtjitModuleState;

extern BtjitModuleState btjit_module;

/*
 * A start-up test fault (btree_jit.locate_fault): the locator's own faults,
 * or a server taken for a major version the module does not support.
 */
typedef enum BtjitStartupFault
{
	BTJIT_STARTUP_NORMAL,
	BTJIT_STARTUP_FAULT_WRONG_CALLER,
	BTJIT_STARTUP_FAULT_TRUNCATED,
	BTJIT_STARTUP_FAULT_NO_CALLCONV,
	BTJIT_STARTUP_FAULT_UNSUPPORTED_MAJOR,
	BTJIT_STARTUP_FAULT_UNCHECKED_RELEASE	/* a release mirrorlist.h lacks */
} BtjitStartupFault;

/*
 * btree_jit.unchecked_release: on a point release the module's copies of
 * server code were not checked against, who runs those functions.
 */
typedef enum BtjitUncheckedRelease
{
	BTJIT_UNCHECKED_RELEASE_SERVER,
	BTJIT_UNCHECKED_RELEASE_MODULE
} BtjitUncheckedRelease;

extern int	btjit_unchecked_release;	/* redirects.c */

/*
 * The functions each redirect sends its calls to (src/targets/), or NULL
 * for a target this build does not redirect; and, for a target that needs
 * more than its own symbol's proof, what the locator must be told.
 */
typedef struct BtjitReplacements
{
	void	   *functions[BTJIT_NTARGETS];
	BtjitReadpageSignature readpage_signature;
	/* where a target's body may have been split: the part's replacement */
	void	   *split_functions[BTJIT_NTARGETS];
	const BtjitSplitSignature *split_signatures[BTJIT_NTARGETS];
} BtjitReplacements;

extern void btjit_install_redirects(const BtjitReplacements *replacements,
									BtjitStartupFault fault);

/* ---- The slot table and the dispatchers' switches (dispatch.c) ---- */

/* enabled and not verify: a dispatcher may call compiled code directly */
extern bool btjit_fast_ok;

/*
 * Relation -> index state, without a hash probe: a direct-mapped table
 * keyed by the relcache entry's address.  The address of a relcache entry
 * is stable for its lifetime (rebuilds happen in place), and the relcache
 * callback empties slots whenever an index's definition may have changed;
 * the rd_id check catches an entry freed and its memory reused.  A slot is
 * one cache line: the entries of every target, so that each dispatcher
 * reads one line.
 */
#define BTJIT_SLOT_BITS 8
#define BTJIT_SLOTS (1 << BTJIT_SLOT_BITS)

struct BtjitIndex;

/*
 * A slot holds the entries of the targets a search dispatches through it,
 * the rows of targetlist.h before the leaf read's (which has no entry of
 * its own); later rows (the build's) read the index state itself.
 */
#define BTJIT_SLOT_TARGETS	BTJIT_TARGET_READPAGE

typedef struct BtjitSlot
{
	Relation	rel;
	Oid			relid;
	/* ix's entries; the page search's is btjit_stock_entry without code */
	void	   *entries[BTJIT_SLOT_TARGETS];
	struct BtjitIndex *ix;
} pg_attribute_aligned(64) BtjitSlot;

StaticAssertDecl(sizeof(BtjitSlot) == 64,
				 "a slot is one cache line: a new target needs a new slot layout");

extern BtjitSlot btjit_slots[BTJIT_SLOTS];

static inline BtjitSlot *
btjit_slot_for(Relation rel)
{
	uint64		h = ((uint64) (uintptr_t) rel >> 4) * UINT64CONST(0x9E3779B97F4A7C15);

	return &btjit_slots[h >> (64 - BTJIT_SLOT_BITS)];
}

/*
 * A slot's entry for a target, typed, when the slot holds rel's state now;
 * NULL otherwise (or when the index has none): btjit_slot_entry_COMPARE()
 * and so on, one per row of targetlist.h.  The entry is read once, and
 * tested and called as read.
 */
#define BTJIT_TARGET(id, name, symbol, locate, prereq, tmpl, pfx, sfx, \
					 declined, type, counter, first, last, releases, \
					 consequence) \
static inline type \
btjit_slot_entry_##id(const BtjitSlot *slot, Relation rel) \
{ \
	if (BTJIT_TARGET_##id >= BTJIT_SLOT_TARGETS || \
		slot->rel != rel || slot->relid != rel->rd_id) \
		return NULL; \
	return (type) slot->entries[Min(BTJIT_TARGET_##id, BTJIT_SLOT_TARGETS - 1)]; \
}
#include "targetlist.h"
#undef BTJIT_TARGET

/* The index state a slot holds for rel, or NULL */
static inline struct BtjitIndex *
btjit_slot_index(const BtjitSlot *slot, Relation rel)
{
	if (slot->rel != rel || slot->relid != rel->rd_id)
		return NULL;
	return slot->ix;
}

/*
 * The index whose scan took the last step from one item to the next
 * (targets/gettuple.c): one entry in front of the slot table, since a scan
 * steps once per row between its page reads, and a step is some twenty
 * instructions.  Set from a slot that holds the index with compiled code;
 * emptied with the slots, so that it holds only what a slot could.
 */
typedef struct BtjitStepIndex
{
	Relation	rel;
	Oid			relid;
	struct BtjitIndex *ix;
	/*
	 * rel's tuple descriptor when every column of its tuples is of fixed
	 * width (ix->layout), else NULL: an index-only scan's row is taken out
	 * of a tuple of the index with that descriptor (targets/deform.c)
	 */
	TupleDesc	fixed_desc;
} BtjitStepIndex;

extern BtjitStepIndex btjit_step_index;

/* Make rel, with state ix (compiled code), the step's entry. */
extern void btjit_step_index_set(Relation rel, struct BtjitIndex *ix);

/*
 * The index a build is loading (targets/build.c), for as long as the
 * server's btbuild runs, with its state if it has compiled code: the load's
 * key image comparisons (targets/keepnatts.c) find it here when the slot
 * table no longer holds it.  The build's sort searches catalog indexes (its
 * support procedures, on a cold syscache), and each such search takes the
 * slot its relation hashes to, which can be the index's.  Emptied with the
 * slots.
 */
typedef struct BtjitBuildIndex
{
	Relation	rel;
	Oid			relid;
	struct BtjitIndex *ix;		/* NULL: the build has no compiled code */
} BtjitBuildIndex;

extern BtjitBuildIndex btjit_build_index;

extern void btjit_dispatch_init(void *const *stock_entries);

/* ---- Per-index state (jitcache.c) ---- */

/*
 * Why a leaf read ran the server's code rather than the module's, or why
 * the module's read handed a tuple's key test to the server's code: the
 * reasons of btree_jit_stock_calls.  The tuples of a page the server
 * reads are not counted one by one (a lookup per tuple would cost the
 * server's path); on 19 a tuple the compiled check declines is tested by
 * the module's C (checkkeys.c), and counts as a key check here.
 */
typedef enum BtjitStockReason
{
	BTJIT_STOCK_ARRAY_KEYS,		/* IN-lists, = ANY: the server advances them */
	BTJIT_STOCK_SKIP_ARRAYS,	/* 18's skip scans */
	BTJIT_STOCK_ROW_COMPARE,	/* (a, b) > (x, y) */
	BTJIT_STOCK_NULLS,			/* a NULL attribute, an IS [NOT] NULL key, an
								 * operator returning NULL */
	BTJIT_STOCK_NOT_COMPILED,	/* the index has no compiled checks (yet) */
	BTJIT_STOCK_DECLINED,		/* the compiled check declined otherwise */
} BtjitStockReason;

#define BTJIT_STOCK_NREASONS (BTJIT_STOCK_DECLINED + 1)

/*
 * One index's counters, as a backend or the cluster has them.  Every field
 * is a uint64 count, so the counters are handled as a whole (see
 * btjit_counts_*); the compiled entries increment the jit_* counter they
 * are given, and the module's callbacks find the index from it.
 */
typedef struct BtjitIndexStats
{
	uint64		stock_searches;
	uint64		declined_searches;
	uint64		compiles;		/* code compiled or loaded for it */
	uint64		compile_failures;
	/* per target: answered by compiled code (or the module), verified */
#define BTJIT_TARGET(id, name, symbol, locate, prereq, tmpl, pfx, sfx, \
					 declined, type, counter, first, last, releases, \
					 consequence) \
	uint64		jit_##counter; \
	uint64		verified_##counter;
#include "targetlist.h"
#undef BTJIT_TARGET
	/* the server's code instead, by reason */
	uint64		stock_checks[BTJIT_STOCK_NREASONS];
	uint64		stock_leafreads[BTJIT_STOCK_NREASONS];
} BtjitIndexStats;

#define BTJIT_NCOUNTS (sizeof(BtjitIndexStats) / sizeof(uint64))

static inline uint64 *
btjit_counts(BtjitIndexStats *s)
{
	return (uint64 *) s;
}

static inline const uint64 *
btjit_counts_const(const BtjitIndexStats *s)
{
	return (const uint64 *) s;
}

/* out = a - b, counter by counter; false if every difference is zero */
static inline bool
btjit_counts_sub(const BtjitIndexStats *a, const BtjitIndexStats *b,
				 BtjitIndexStats *out)
{
	uint64		any = 0;

	for (int i = 0; i < BTJIT_NCOUNTS; i++)
	{
		btjit_counts(out)[i] = btjit_counts_const(a)[i] - btjit_counts_const(b)[i];
		any |= btjit_counts(out)[i];
	}
	return any != 0;
}

/* a += b, counter by counter */
static inline void
btjit_counts_add(BtjitIndexStats *a, const BtjitIndexStats *b)
{
	for (int i = 0; i < BTJIT_NCOUNTS; i++)
		btjit_counts(a)[i] += btjit_counts_const(b)[i];
}

typedef enum BtjitIndexState
{
	BTJIT_INDEX_UNKNOWN = 0,	/* not examined since (re)open */
	BTJIT_INDEX_JIT,			/* compiled code in use */
	BTJIT_INDEX_STOCK,			/* stock path; reason says why */
	BTJIT_INDEX_QUEUED			/* stock path while the compile worker
								 * compiles its shape */
} BtjitIndexState;

/*
 * How a column's value is fetched from its place in an index tuple: the
 * by-value widths fetch_att knows, or a pointer into the tuple.
 */
typedef enum BtjitColumnFetch
{
	BTJIT_FETCH_CHAR,
	BTJIT_FETCH_INT16,
	BTJIT_FETCH_INT32,
	BTJIT_FETCH_DATUM,
	BTJIT_FETCH_POINTER
} BtjitColumnFetch;

typedef enum BtjitLayoutKind
{
	BTJIT_LAYOUT_UNKNOWN = 0,	/* not worked out (no compiled code yet) */
	BTJIT_LAYOUT_FIXED,			/* every column at a fixed offset */
	BTJIT_LAYOUT_VARIABLE		/* a column of variable width (or one
								 * fetch_att does not fetch by value) */
} BtjitLayoutKind;

/*
 * Where each column of an index's tuples lies when none is NULL: the same
 * offsets index_deform_tuple caches in attcacheoff, from the columns'
 * lengths and alignments alone when every column has a fixed width
 * (keyshape.c).  Every column, INCLUDE columns too: the descriptor's.
 */
typedef struct BtjitTupleLayout
{
	BtjitLayoutKind kind;
	int			natts;
	struct
	{
		uint16		offset;		/* from the tuple's data */
		uint8		fetch;		/* BtjitColumnFetch */
	}			columns[INDEX_MAX_KEYS];
} BtjitTupleLayout;

typedef struct BtjitIndex
{
	Oid			indexrelid;		/* hash key */
	BtjitIndexState state;
	BtjitSearchFn fn;			/* non-NULL only when state is JIT */
	BtjitEntries entries;		/* the compiled entries, likewise */
	struct BtjitCode *code;		/* compiled shape, when state is JIT */
	char		reason[BTJIT_REASON_LEN];
	char		signature[BTJIT_SIGNATURE_LEN];
	/* compiled code increments counts.jit_* and nothing else here */
	BtjitIndexStats counts;
	BtjitTupleLayout layout;	/* worked out when state becomes JIT */
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
	struct BtjitCode *pending_code; /* QUEUED: the code it waits for;
									 * STOCK: the code that failed, if
									 * that is why */
	uint64		due_searches;	/* with pending_code: at this many stock
								 * searches something is due (QUEUED: a
								 * demand report; STOCK: a look at whether
								 * the failure may be retried); 0: never.
								 * QUEUED: the last report was at
								 * due_searches -
								 * BTJIT_DEMAND_REPORT_SEARCHES */
} BtjitIndex;

/*
 * An index on the stock path after a failed compile looks, every this many
 * of its searches, at whether the failure has expired (a clock read is too
 * dear for every search).
 */
#define BTJIT_FAILED_RECHECK_SEARCHES	4096

/* The index whose counts.jit_searches the compiled entry was given. */
static inline BtjitIndex *
btjit_index_of_search_counter(uint64 *counter)
{
	return (BtjitIndex *) ((char *) counter -
						   offsetof(BtjitIndex, counts.jit_searches));
}

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

extern BtjitIndex *btjit_index_open(Relation rel, bool force);
extern BtjitIndex *btjit_index_find(Relation rel);
extern void btjit_cache_init(void);
extern void btjit_index_foreach(void (*cb) (BtjitIndex *ix, void *arg),
								void *arg);
extern BtjitIndex **btjit_index_list(int *nindexes);
extern void btjit_compile_totals(uint64 *compiles, uint64 *failures);

/*
 * Has the compile worker finished something since this queued index was
 * last looked at?  One atomic read: the dispatcher's stock entry asks it on
 * every search of a queued index.
 */
static inline bool
btjit_index_compile_done(const BtjitIndex *ix)
{
	return btjit_compile_generation_now() != ix->queued_generation;
}

/* A demand report or a retry look is due (see due_searches). */
static inline bool
btjit_index_recheck_due(const BtjitIndex *ix)
{
	return ix->due_searches != 0 &&
		ix->counts.stock_searches >= ix->due_searches;
}

/*
 * Open the index as the dispatcher does, examination included, and point
 * its slot at the result (dispatch.c; btree_jit_compile() forces the
 * examination).
 */
extern BtjitIndex *btjit_dispatch_open(Relation rel, bool force);

/* Point rel's slot at the state it has already (dispatch.c). */
extern void btjit_slot_fill(Relation rel, BtjitIndex *ix);

/* ---- Key shape (keyshape.c) ---- */
extern bool btjit_shape_from_relation(Relation rel, BtjitShape *shape,
									  BtjitWhy *why);
extern void btjit_tuple_layout(TupleDesc desc, BtjitTupleLayout *layout);
extern void btjit_shape_signature(const BtjitShape *shape, char *buf,
								  size_t buflen);
extern void btjit_shape_signature_tiers(const BtjitShape *shape,
										const char *bcinfo, char *buf,
										size_t buflen);

/* ---- The descent's page reads (recentbuf.c; up to 18) ---- */
#if PG_VERSION_NUM < 190000
extern Buffer btjit_read_recent(Relation rel, BlockNumber block,
								uint64 *recent_count);
#endif

#pragma GCC visibility pop

#endif							/* BTREE_JIT_RUNTIME_H */
