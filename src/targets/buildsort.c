/*-------------------------------------------------------------------------
 *
 * buildsort.c
 *	  The redirected tuplesort_begin_index_btree: the sort of a B-tree
 *	  build (serial, and each participant of a parallel one) compares its
 *	  index tuples with the compiled build comparator of an index that has
 *	  one.
 *
 * The server's function builds the sort as always; the module then
 * replaces the comparator the sort calls through (comparetup, and from 17
 * comparetup_tiebreak, which the sort's specialised quicksorts call once
 * they found the leading keys equal) with the compiled one of the index's
 * shape (llvm-ir/search_template.c, btjit_build_comparetup), which keeps
 * the server's order exactly: the leading key as the sort compares it,
 * then the other key columns, then, with every key equal, the server's
 * own comparator for a unique index (its duplicate check and error, or
 * the heap-TID order; btjit_build_equal_keys) and the heap-TID order
 * otherwise.  Under btree_jit.verify the sort calls the module, which runs
 * the compiled comparator and the server's on every pair.
 *
 * Up to 16 the sort's state is private, and from 16 the build's argument
 * is: sortmirror.h copies their layouts, and a sort is taken only when the
 * copy reads back what the server was just given.  A sort the module does
 * not take compares with the server's code; it is not counted (a build
 * that has no compiled code is counted by btbuild's target, build.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"

#include "sortmirror.h"
#include "targets/targets.h"

typedef Tuplesortstate *(*BtjitBeginIndexBtreeFn) (Relation heapRel,
												   Relation indexRel,
												   bool enforceUnique,
												   bool uniqueNullsNotDistinct,
												   int workMem,
												   SortCoordinate coordinate,
												   int sortopt);

#define BTJIT_STOCK_BUILDSORT \
	((BtjitBeginIndexBtreeFn) btjit_module.stock[BTJIT_TARGET_BUILDSORT])

static Tuplesortstate *btjit_dispatch_buildsort(Relation heapRel,
												Relation indexRel,
												bool enforceUnique,
												bool uniqueNullsNotDistinct,
												int workMem,
												SortCoordinate coordinate,
												int sortopt);

const BtjitTargetImpl btjit_target_buildsort = {
	.dispatcher = (void *) btjit_dispatch_buildsort,
	.declined = (void *) btjit_build_equal_keys,
};

#if PG_VERSION_NUM < 190000
typedef void (*BtjitPerformsortFn) (Tuplesortstate *state);

#define BTJIT_STOCK_PRESORT \
	((BtjitPerformsortFn) btjit_module.stock[BTJIT_TARGET_PRESORT])

static void btjit_dispatch_presort(Tuplesortstate *state);

/* tuplesort_performsort's row (targetlist.h): the sorts it serves are here */
const BtjitTargetImpl btjit_target_presort = {
	.dispatcher = (void *) btjit_dispatch_presort,
};
#else
const BtjitTargetImpl btjit_target_presort = {0};
#endif

/* A sort the module compares for, while it lives (in its main context). */
typedef struct BtjitSort
{
	Tuplesortstate *state;
	struct BtjitSort *next;
	BtjitBuildComparetupFn comparetup;	/* the compiled comparator */
	BtjitBuildPresortFn presort;	/* the compiled presort, or NULL */
	bool		verify;			/* btree_jit.verify when it was taken */
	BtjitIndex *ix;
	SortSupport sortkeys;		/* the sort's, one per key column */
	BtjitSortComparator stock_comparetup;
#if PG_VERSION_NUM >= 170000
	BtjitSortComparator stock_tiebreak;
#endif
	Relation	index;
	MemoryContextCallback unlink;
} BtjitSort;

/*
 * This backend's sorts on compiled code, newest first.  A build has one,
 * or two for a unique index (the second holds dead tuples); each leaves the
 * list when its memory goes (btjit_sort_unlink), at the sort's end or on
 * error.
 */
static BtjitSort *btjit_sorts = NULL;

/* A layout that did not read back: no sort of this backend is taken. */
static bool btjit_sort_layout_refused = false;

/*
 * The counter compiled comparators count in (code_abi.h): the newest
 * sort's index's, else this.  Sorts of one backend at one time are of one
 * index (a build's, its dead tuples', a parallel leader's own part).
 */
static uint64 btjit_build_compares_unattributed = 0;
uint64	   *btjit_build_compares = &btjit_build_compares_unattributed;

static inline BtjitSort *
btjit_sort_find(Tuplesortstate *state)
{
	BtjitSort  *s = btjit_sorts;

	while (s != NULL && s->state != state)
		s = s->next;
	return s;
}

static BtjitSort *
btjit_sort_of(Tuplesortstate *state)
{
	BtjitSort  *s = btjit_sort_find(state);

	if (s == NULL)
		elog(ERROR, "btree_jit: a compiled build comparator was called for a sort the module did not take");
	return s;
}

static void
btjit_sort_unlink(void *arg)
{
	BtjitSort  *gone = (BtjitSort *) arg;

	for (BtjitSort **p = &btjit_sorts; *p != NULL; p = &(*p)->next)
	{
		if (*p == gone)
		{
			*p = gone->next;
			break;
		}
	}
	btjit_build_compares = btjit_sorts != NULL ?
		&btjit_sorts->ix->counts.jit_build_compares :
		&btjit_build_compares_unattributed;
}

/*
 * Called by the compiled comparator for two tuples of a unique index's
 * sort whose keys are all equal: the server's comparator checks them (and
 * raises its error for duplicates) and orders them.
 */
int
btjit_build_equal_keys(const void *a, const void *b, void *state)
{
	BtjitSort  *s = btjit_sort_of((Tuplesortstate *) state);

	return s->stock_comparetup((const BtjitSortTuple *) a,
							   (const BtjitSortTuple *) b,
							   (Tuplesortstate *) state);
}

/* verify mode: the server's comparator must order the pair the same way */
static pg_noinline int
btjit_sort_verify(const BtjitSortTuple *a, const BtjitSortTuple *b,
				  Tuplesortstate *state, bool tiebreak)
{
	BtjitSort  *s = btjit_sort_of(state);
	int			result;
	int			stock_result;

	/*
	 * counted first: the compiled comparator hands a unique sort's equal
	 * keys to the server's comparator, which may raise its duplicate error
	 */
	s->ix->counts.verified_build_compares++;
	result = s->comparetup(a, b, state);
#if PG_VERSION_NUM >= 170000
	stock_result = tiebreak ? s->stock_tiebreak(a, b, state) :
		s->stock_comparetup(a, b, state);
#else
	Assert(!tiebreak);
	stock_result = s->stock_comparetup(a, b, state);
#endif
	if (unlikely((result > 0) != (stock_result > 0) ||
				 (result < 0) != (stock_result < 0)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: compiled build comparison in index \"%s\" differs from the server's own",
						RelationGetRelationName(s->index)),
				 errdetail("Two index tuples of the build's sort: the server's %s returned %d, compiled code returned %d; leading key %s; shape %s.",
						   tiebreak ? "comparetup_tiebreak" : "comparetup",
						   stock_result, result,
						   s->sortkeys->abbrev_converter != NULL ? "abbreviated" : "compared in full",
						   s->ix->signature),
				 errhint(BTJIT_VERIFY_HINT)));
	return result;
}

static int
btjit_sort_verify_comparetup(const BtjitSortTuple *a, const BtjitSortTuple *b,
							 Tuplesortstate *state)
{
	return btjit_sort_verify(a, b, state, false);
}

#if PG_VERSION_NUM >= 170000
static int
btjit_sort_verify_tiebreak(const BtjitSortTuple *a, const BtjitSortTuple *b,
						   Tuplesortstate *state)
{
	return btjit_sort_verify(a, b, state, true);
}
#endif

/*
 * Read the sort's layout, proven on what tuplesort_begin_index_btree was
 * given: the sort's SortSupport array and comparators into sort, where its
 * comparator slots are and its main context; or false.
 */
static bool
btjit_sort_layout_ok(Tuplesortstate *state, Relation heapRel,
					 Relation indexRel, bool enforceUnique,
					 bool uniqueNullsNotDistinct, BtjitSort *sort,
					 BtjitSortComparator **comparetup,
					 BtjitSortComparator **tiebreak, MemoryContext *maincontext)
{
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(indexRel);
#if PG_VERSION_NUM < 160000
	BtjitTuplesortstate15 *m = (BtjitTuplesortstate15 *) state;

	if (m->heapRel != heapRel || m->indexRel != indexRel ||
		m->enforceUnique != enforceUnique ||
		m->uniqueNullsNotDistinct != uniqueNullsNotDistinct ||
		m->nKeys != nkeys || !m->haveDatum1 || m->sortKeys == NULL ||
		m->onlyKey != NULL || m->comparetup == NULL ||
		GetMemoryChunkContext(state) != m->maincontext)
		return false;
	sort->sortkeys = m->sortKeys;
	sort->stock_comparetup = m->comparetup;
	*comparetup = &m->comparetup;
	*tiebreak = NULL;
	*maincontext = m->maincontext;
#else
	TuplesortPublic *base = TuplesortstateGetPublic(state);
	BtjitSortIndexBTreeArg *arg = (BtjitSortIndexBTreeArg *) base->arg;

	if (arg == NULL || arg->heapRel != heapRel || arg->indexRel != indexRel ||
		arg->enforceUnique != enforceUnique ||
		arg->uniqueNullsNotDistinct != uniqueNullsNotDistinct ||
		base->nKeys != nkeys || !base->haveDatum1 || base->sortKeys == NULL ||
		base->onlyKey != NULL || base->comparetup == NULL ||
		GetMemoryChunkContext(arg) != base->maincontext)
		return false;
	sort->sortkeys = base->sortKeys;
	sort->stock_comparetup = base->comparetup;
	*comparetup = &base->comparetup;
#if PG_VERSION_NUM >= 170000
	if (base->comparetup_tiebreak == NULL)
		return false;
	sort->stock_tiebreak = base->comparetup_tiebreak;
	*tiebreak = &base->comparetup_tiebreak;
#else
	*tiebreak = NULL;
#endif
	*maincontext = base->maincontext;
#endif
	return true;
}

/*
 * The in-memory array of a sort just begun, as the presort reads it
 * (sortmirror.h): the initial state, no tuples yet, an array allocated in
 * the sort's main context (tuplesort_begin_batch's, kept by its growth).  Checked once per sort, when it is taken.
 */
static bool
btjit_presort_layout_ok(Tuplesortstate *state)
{
#if PG_VERSION_NUM < 160000
	BtjitTuplesortstate15 *m = BTJIT_SORT_PRIVATE(state);
	MemoryContext maincontext = m->maincontext;
#elif PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 190000
	BtjitTuplesortstate17 *m = BTJIT_SORT_PRIVATE(state);
	MemoryContext maincontext = m->base.maincontext;
#endif

#if PG_VERSION_NUM < 160000 || (PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 190000)
	return m->status == 0 && !m->bounded && m->memtupcount == 0 &&
		m->memtupsize > 0 && m->memtuples != NULL &&
		GetMemoryChunkContext(m->memtuples) == maincontext;
#else
	return false;
#endif
}

#if PG_VERSION_NUM < 190000
/*
 * Before the server's sort of a taken sort's tuples in memory (the serial
 * sort, or a worker's run): order them with the compiled presort, so that
 * the server's quicksort, which checks first whether its input is sorted,
 * finds them so.  Under verify, every neighbouring pair is checked with the
 * server's comparator first.  Whatever the presort does, the server's sort
 * still runs: a presort that gave up leaves it the work.
 */
static pg_noinline void
btjit_sort_presort(Tuplesortstate *state)
{
	BtjitSort  *s = btjit_sort_find(state);
	BtjitSortTuple *tuples;
	int			n;

	if (s == NULL || s->presort == NULL)
		return;
	tuples = (BtjitSortTuple *) BTJIT_SORT_PRIVATE(state)->memtuples;
	n = BTJIT_SORT_PRIVATE(state)->memtupcount;
	if (BTJIT_SORT_PRIVATE(state)->status != 0 || n < 2 ||
		n > BTJIT_SORT_PRIVATE(state)->memtupsize)
		return;
	if (!s->presort(tuples, n, state))
		return;
	s->ix->counts.jit_build_presorts++;
	if (s->verify)
	{
		s->ix->counts.verified_build_presorts++;
		for (int i = 1; i < n; i++)
			if (unlikely(s->stock_comparetup(&tuples[i - 1], &tuples[i], state) > 0))
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("btree_jit: compiled presort in the build of index \"%s\" differs from the server's order",
								RelationGetRelationName(s->index)),
						 errdetail("Tuples %d and %d of %d are out of order by the server's comparator; shape %s.",
								   i - 1, i, n, s->ix->signature),
						 errhint(BTJIT_VERIFY_HINT)));
	}
}

static void
btjit_dispatch_presort(Tuplesortstate *state)
{
	if (btjit_sorts != NULL)
		btjit_sort_presort(state);
	BTJIT_STOCK_PRESORT(state);
}
#endif

/*
 * Take a sort the server just began for indexRel, when the index has
 * compiled code (btbuild's target compiled it, or a parallel worker links
 * what its leader compiled) and the sort's layout reads back: its
 * comparators become the compiled one, or under btree_jit.verify the
 * module's, which run it beside the server's.
 */
static void
btjit_sort_take(Tuplesortstate *state, Relation heapRel, Relation indexRel,
				bool enforceUnique, bool uniqueNullsNotDistinct)
{
	BtjitIndex *ix;
	BtjitBuildComparetupFn compiled;
	BtjitSort	probe;
	BtjitSort  *sort;
	BtjitSortComparator *comparetup;
	BtjitSortComparator *tiebreak;
	MemoryContext maincontext;

	/*
	 * btbuild's target decided whether to compile; a parallel worker, which
	 * does not run btbuild, links what its leader compiled.
	 */
	if (IsParallelWorker())
		ix = btjit_index_open(indexRel, false);
	else
		ix = btjit_index_find(indexRel);
	if (ix == NULL || ix->state != BTJIT_INDEX_JIT)
		return;
	compiled = btjit_entry_BUILDSORT(ix->entries);
	if (compiled == NULL)
		return;

	memset(&probe, 0, sizeof(probe));
	if (!btjit_sort_layout_ok(state, heapRel, indexRel, enforceUnique,
							  uniqueNullsNotDistinct, &probe, &comparetup,
							  &tiebreak, &maincontext))
	{
		btjit_sort_layout_refused = true;
		ereport(LOG,
				(errmsg("btree_jit: builds in this session sort with the server's comparator"),
				 errdetail("The sort begun for index \"%s\" does not read back as the layout the module was built for (PostgreSQL %d).",
						   RelationGetRelationName(indexRel), PG_VERSION_NUM)));
		return;
	}

	sort = MemoryContextAllocZero(maincontext, sizeof(BtjitSort));
	*sort = probe;
	sort->state = state;
	sort->comparetup = compiled;
	sort->verify = btjit_verify;
	if (btjit_module.outcome[BTJIT_TARGET_PRESORT] == BTJIT_REDIRECT_DONE &&
		btjit_presort_layout_ok(state))
		sort->presort = btjit_entry_PRESORT(ix->entries);
	sort->ix = ix;
	sort->index = indexRel;
	sort->unlink.func = btjit_sort_unlink;
	sort->unlink.arg = sort;
	MemoryContextRegisterResetCallback(maincontext, &sort->unlink);
	sort->next = btjit_sorts;
	btjit_sorts = sort;
	btjit_build_compares = &ix->counts.jit_build_compares;

	if (btjit_verify)
	{
		*comparetup = btjit_sort_verify_comparetup;
#if PG_VERSION_NUM >= 170000
		*tiebreak = btjit_sort_verify_tiebreak;
#endif
	}
	else
	{
		*comparetup = (BtjitSortComparator) compiled;
#if PG_VERSION_NUM >= 170000
		*tiebreak = (BtjitSortComparator) compiled;
#endif
	}
}

static Tuplesortstate *
btjit_dispatch_buildsort(Relation heapRel, Relation indexRel,
						 bool enforceUnique, bool uniqueNullsNotDistinct,
						 int workMem, SortCoordinate coordinate, int sortopt)
{
	Tuplesortstate *state = BTJIT_STOCK_BUILDSORT(heapRel, indexRel,
												  enforceUnique,
												  uniqueNullsNotDistinct,
												  workMem, coordinate,
												  sortopt);

	if (btjit_enabled && !btjit_sort_layout_refused)
		btjit_sort_take(state, heapRel, indexRel, enforceUnique,
						uniqueNullsNotDistinct);
	return state;
}
