/*-------------------------------------------------------------------------
 *
 * sortmirror.h
 *	  What the build's sort keeps private and the build comparator must
 *	  read: the leading fields of PostgreSQL 15's Tuplesortstate, and the
 *	  argument 16 and later hang off TuplesortPublic.arg for a B-tree
 *	  build.  Shared by the module (targets/buildsort.c) and the bitcode
 *	  template, whose compiled comparator is the sort's comparetup.
 *
 * Both are copies of a server struct's layout, written from the server's
 * source for each major (15: tuplesort.c; 17, 18, 19:
 * tuplesortvariants.c's TuplesortIndexBTreeArg).  A layout can change in a
 * point release only by a bug fix, so the sort target is redirected on
 * checked releases only (targetlist.h); and every sort the module takes
 * first proves the copy on the state the server just built: the fields
 * tuplesort_begin_index_btree set from its arguments must read back as
 * those arguments (buildsort.c, btjit_sort_layout_ok).  Only then does the
 * sort call the compiled comparator, which reads the sort's SortSupport
 * array and its unique flag through BTJIT_SORT_KEYS and BTJIT_SORT_UNIQUE.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_SORTMIRROR_H
#define BTREE_JIT_SORTMIRROR_H

#include "utils/rel.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"

#if PG_VERSION_NUM < 160000

/* tuplesort.c's SortTuple and SortTupleComparator (public from 16) */
typedef struct BtjitSortTuple
{
	void	   *tuple;
	Datum		datum1;
	bool		isnull1;
	int			srctape;
} BtjitSortTuple;

typedef int (*BtjitSortComparator) (const BtjitSortTuple *a,
									const BtjitSortTuple *b,
									Tuplesortstate *state);

/*
 * 15's Tuplesortstate up to the fields of an index build; pointers to the
 * sort's private types are void pointers, its enum an int.
 */
typedef struct BtjitTuplesortstate15
{
	int			status;
	int			nKeys;
	int			sortopt;
	bool		bounded;
	bool		boundUsed;
	int			bound;
	bool		tuples;
	int64		availMem;
	int64		allowedMem;
	int			maxTapes;
	int64		maxSpace;
	bool		isMaxSpaceDisk;
	int			maxSpaceStatus;
	MemoryContext maincontext;
	MemoryContext sortcontext;
	MemoryContext tuplecontext;
	void	   *tapeset;
	BtjitSortComparator comparetup;
	void	   *copytup;
	void	   *writetup;
	void	   *readtup;
	bool		haveDatum1;
	void	   *memtuples;
	int			memtupcount;
	int			memtupsize;
	bool		growmemtuples;
	bool		slabAllocatorUsed;
	char	   *slabMemoryBegin;
	char	   *slabMemoryEnd;
	void	   *slabFreeHead;
	size_t		tape_buffer_mem;
	void	   *lastReturnedTuple;
	int			currentRun;
	void	  **inputTapes;
	int			nInputTapes;
	int			nInputRuns;
	void	  **outputTapes;
	int			nOutputTapes;
	int			nOutputRuns;
	void	   *destTape;
	void	   *result_tape;
	int			current;
	bool		eof_reached;
	long		markpos_block;
	int			markpos_offset;
	bool		markpos_eof;
	int			worker;
	void	   *shared;
	int			nParticipants;
	TupleDesc	tupDesc;
	SortSupport sortKeys;
	SortSupport onlyKey;
	int64		abbrevNext;
	void	   *indexInfo;
	void	   *estate;
	Relation	heapRel;
	Relation	indexRel;
	bool		enforceUnique;
	bool		uniqueNullsNotDistinct;
} BtjitTuplesortstate15;

#define BTJIT_SORT_KEYS(state) \
	(((BtjitTuplesortstate15 *) (state))->sortKeys)
#define BTJIT_SORT_UNIQUE(state) \
	(((BtjitTuplesortstate15 *) (state))->enforceUnique)

/* what the presort reads and orders (performsort's serial in-memory case) */
#define BTJIT_SORT_PRIVATE(state)	((BtjitTuplesortstate15 *) (state))

#else

typedef SortTuple BtjitSortTuple;
typedef SortTupleComparator BtjitSortComparator;

/* tuplesortvariants.c's TuplesortIndexBTreeArg (TuplesortPublic.arg) */
typedef struct BtjitSortIndexBTreeArg
{
	Relation	heapRel;
	Relation	indexRel;
	bool		enforceUnique;
	bool		uniqueNullsNotDistinct;
} BtjitSortIndexBTreeArg;

#define BTJIT_SORT_KEYS(state) \
	(TuplesortstateGetPublic((Tuplesortstate *) (state))->sortKeys)
#define BTJIT_SORT_UNIQUE(state) \
	(((BtjitSortIndexBTreeArg *) \
	  TuplesortstateGetPublic((Tuplesortstate *) (state))->arg)->enforceUnique)

#if PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 190000
/*
 * 17's and 18's Tuplesortstate (tuplesort.c, the same in both) up to the
 * in-memory array, after the public part; for the presort.
 */
typedef struct BtjitTuplesortstate17
{
	TuplesortPublic base;
	int			status;
	bool		bounded;
	bool		boundUsed;
	int			bound;
	int64		tupleMem;
	int64		availMem;
	int64		allowedMem;
	int			maxTapes;
	int64		maxSpace;
	bool		isMaxSpaceDisk;
	int			maxSpaceStatus;
	void	   *tapeset;
	SortTuple  *memtuples;
	int			memtupcount;
	int			memtupsize;
} BtjitTuplesortstate17;

#define BTJIT_SORT_PRIVATE(state)	((BtjitTuplesortstate17 *) (state))
#endif

#endif

#endif							/* BTREE_JIT_SORTMIRROR_H */
