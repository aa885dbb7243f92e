/*-------------------------------------------------------------------------
 *
 * code_abi.h
 *	  The calling contract between compiled code and the module: the entry
 *	  points a compiled shape exports, and the module's callbacks it calls
 *	  when it declines a call.
 *
 * Included by the module (runtime/dispatch.c defines the callbacks, the
 * slot table stores the entries) and by the bitcode template
 * (llvm-ir/search_template.c defines the entries and calls the callbacks),
 * so that one declaration binds both sides: a change here is a change to
 * the template's identity and so to every cached object's key.
 *
 * Compiled code reaches the callbacks by symbol name (ORC's resolver, or
 * objload.c given their addresses), so they keep default visibility.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_CODE_ABI_H
#define BTREE_JIT_CODE_ABI_H

/* Result of a compiled search that declines the call. */
#define BTJIT_DECLINE (-1)

/*
 * The compiled page search: the offset _bt_binsrch would return for this
 * scankey on this page, or BTJIT_DECLINE when the scankey is outside what
 * the shape covers (the caller then runs the stock path).
 */
typedef int (*BtjitSearchFn) (void *scankey, const char *page);

/*
 * The fused entry the dispatcher tail-calls: same arguments as _bt_binsrch
 * plus the index's counters.  It finds the page, runs the search, counts a
 * search it answered in counters[0], and hands a declined one to
 * btjit_declined(rel, scankey, buf, counters) (a module function the
 * linker resolves by name).
 */
typedef uint16 (*BtjitEntryFn) (void *rel, void *scankey, int buf,
								uint64 *counters);

/*
 * The fused entry for the redirected _bt_compare: same arguments plus the
 * index's compare counter; declined calls go to btjit_compare_declined.
 */
typedef int32 (*BtjitCompareEntryFn) (void *rel, void *scankey,
									  const char *page, uint32 offnum,
									  uint64 *counters);

/*
 * The fused entry for the redirected _bt_binsrch_insert: same arguments
 * (the insertstate) plus the index's insert-search counter; declined calls
 * go to btjit_insert_declined.
 */
typedef uint16 (*BtjitInsertEntryFn) (void *rel, void *insertstate,
									  uint64 *counters);

/*
 * The fused entry for the redirected _bt_checkkeys (PostgreSQL 15's
 * signature; the direction as an int) plus the index's check counter;
 * declined calls go to btjit_check_declined.
 */
typedef bool (*BtjitCheckEntryFn) (void *scan, void *tuple, int tupnatts,
								   int dir, bool *continuescan,
								   uint64 *counters);

/*
 * The build comparator: the comparetup (and from 17 comparetup_tiebreak)
 * of a B-tree build's sort, two SortTuples of index tuples ordered as the
 * server's comparator orders them.  It reads the sort's SortSupport array
 * and unique flag from the state (sortmirror.h), counts in
 * *btjit_build_compares, and hands a pair whose keys are all equal in a
 * unique index's sort to btjit_build_equal_keys.  It never declines.
 */
typedef int (*BtjitBuildComparetupFn) (const void *a, const void *b,
									   void *state);

/*
 * The build's presort: sort a build's SortTuples (memtuples[0..n)) in the
 * build comparator's order before the server's sort runs; false when it
 * gave up (a unique sort's equal keys, or too deep a recursion), leaving a
 * permutation of them.
 */
typedef bool (*BtjitBuildPresortFn) (void *memtuples, int32 n, void *state);

/*
 * The fused entry for the redirected _bt_keep_natts_fast: same arguments
 * plus the index's counter of image comparisons; declined calls (a tuple
 * with NULLs, a pivot tuple, a compressed or external value) go to
 * btjit_keep_natts_declined.
 */
typedef int32 (*BtjitKeepNattsEntryFn) (void *rel, void *lastleft,
										void *firstright, uint64 *counters);

/*
 * The module's callbacks for a declined call: run the stock path for it
 * and count it.  The counters are the ones the entry was given.
 */
#define BTJIT_ABI_CALLBACK __attribute__((visibility("default")))

extern BTJIT_ABI_CALLBACK uint16 btjit_declined(void *rel, void *scankey,
												int buf, uint64 *counters);
extern BTJIT_ABI_CALLBACK int32 btjit_compare_declined(void *rel, void *scankey,
													   const char *page,
													   uint32 offnum,
													   uint64 *counters);
extern BTJIT_ABI_CALLBACK uint16 btjit_insert_declined(void *rel,
													   void *insertstate,
													   uint64 *counters);
/*
 * For the build comparator: the order of two tuples of a unique index's
 * sort whose keys are all equal, which is the server comparator's (its
 * duplicate check raises the server's own error); and the counter of the
 * index whose sort is running (a dummy when none is).
 */
extern BTJIT_ABI_CALLBACK int btjit_build_equal_keys(const void *a,
													 const void *b,
													 void *state);
extern BTJIT_ABI_CALLBACK uint64 *btjit_build_compares;

extern BTJIT_ABI_CALLBACK int32 btjit_keep_natts_declined(void *rel,
														  void *lastleft,
														  void *firstright,
														  uint64 *counters);

extern BTJIT_ABI_CALLBACK bool btjit_check_declined(void *scan, void *tuple,
													int tupnatts, int dir,
													bool *continuescan,
													uint64 *counters);

/*
 * Block hints: where this backend last found a leaf of an index, so that
 * the page search of its level-1 parent can prefetch it before the buffer
 * manager has looked it up.  Compiled code writes one for every leaf it
 * searches and reads one for every downlink a level-1 search returns; the
 * module owns the storage and the switch (runtime/blockhints.c).  A
 * hint is only ever used as the address of a prefetch: a stale or wrong
 * one costs a useless prefetch, never a wrong answer, and since each
 * backend has its own table no other process writes it.
 */
typedef struct BtjitBlockHint
{
	uint32		block;			/* block number of the page */
	int32		buffer;			/* shared buffer it was in (1-based) */
	uint64		layout;			/* what the descent reads first, below */
} BtjitBlockHint;

/*
 * BtjitBlockHint.layout: the page's item count, where its high key's tuple
 * and the tuples of its first two bisection steps were (offsets in the page
 * shifted right by BTJIT_HINT_OFFSET_SHIFT, 0 for none), and the low bits
 * of the index's OID.  Index tuples are MAXALIGNed, so the shift loses
 * nothing; the layout assumes 8 kB pages (a static assertion says so).
 */
#define BTJIT_HINT_NITEMS_BITS	11
#define BTJIT_HINT_OFFSET_SHIFT 3
#define BTJIT_HINT_OFFSET_BITS	10
#define BTJIT_HINT_HIKEY_SHIFT	11
#define BTJIT_HINT_MID_SHIFT	21
#define BTJIT_HINT_LEFT_SHIFT	31
#define BTJIT_HINT_RIGHT_SHIFT	41
#define BTJIT_HINT_RELTAG_SHIFT 51
#define BTJIT_HINT_RELTAG_MASK	0x1FFF
/* the item count and the OID bits, which a recorder compares */
#define BTJIT_HINT_KEY_MASK \
	(((uint64) BTJIT_HINT_RELTAG_MASK << BTJIT_HINT_RELTAG_SHIFT) | \
	 ((1 << BTJIT_HINT_NITEMS_BITS) - 1))

#define BTJIT_BLOCK_HINT_BITS 16
#define BTJIT_BLOCK_HINTS (1 << BTJIT_BLOCK_HINT_BITS)	/* 1 MB */

StaticAssertDecl(BLCKSZ == 1 << (BTJIT_HINT_OFFSET_BITS + BTJIT_HINT_OFFSET_SHIFT),
				 "BtjitBlockHint.layout assumes 8 kB pages");
StaticAssertDecl(sizeof(BtjitBlockHint) == 16, "a hint is 16 bytes");

extern BTJIT_ABI_CALLBACK BtjitBlockHint *btjit_block_hints;

#endif							/* BTREE_JIT_CODE_ABI_H */
