/*-------------------------------------------------------------------------
 *
 * build.c
 *	  The redirected btbuild: a B-tree build (CREATE INDEX, REINDEX) large
 *	  enough to pay for it compiles the index's key shape before it reads
 *	  the heap, so that its sort compares with compiled code (buildsort.c).
 *
 * The decision is made here rather than when the sort begins because a
 * parallel build launches its workers first, and a worker never compiles
 * (src/compile/policy.c): it links what its leader stored in the object
 * cache.  A compile costs 0.3 to 1 s (src/README); a build of fewer estimated
 * rows than btree_jit.build_compile_rows is not worth one and sorts with
 * the server's comparator, unless the index has compiled code already.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "nodes/execnodes.h"
#include "optimizer/plancat.h"
#include "utils/rel.h"

#include "targets/targets.h"

int			btjit_build_compile_rows = 1000000;

typedef IndexBuildResult *(*BtjitBtbuildFn) (Relation heap, Relation index,
											 IndexInfo *indexInfo);

#define BTJIT_STOCK_BUILD \
	((BtjitBtbuildFn) btjit_module.stock[BTJIT_TARGET_BUILD])

static IndexBuildResult *btjit_dispatch_build(Relation heap, Relation index,
											  IndexInfo *indexInfo);

const BtjitTargetImpl btjit_target_build = {
	.dispatcher = (void *) btjit_dispatch_build,
};

/*
 * The heap's rows as the planner estimates them (the same estimate decides
 * a build's parallel workers): pg_class.reltuples scaled to the heap's
 * current size, or a density guess for a table never vacuumed or analysed.
 */
static double
btjit_build_estimated_rows(Relation heap)
{
	BlockNumber pages;
	double		tuples;
	double		allvisfrac;

	if (!RELKIND_HAS_STORAGE(heap->rd_rel->relkind))
		return 0;
	estimate_rel_size(heap, NULL, &pages, &tuples, &allvisfrac);
	return tuples;
}

static IndexBuildResult *
btjit_dispatch_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;

	btjit_build_index.rel = index;
	btjit_build_index.relid = RelationGetRelid(index);
	btjit_build_index.ix = NULL;
	if (btjit_enabled)
	{
		BtjitIndex *ix;

		/*
		 * Through the slot table, so that the load's key image comparisons
		 * (keepnatts.c) find the index's code without a hash probe.
		 */
		if (btjit_build_estimated_rows(heap) >= (double) btjit_build_compile_rows)
			ix = btjit_dispatch_open(index, true);
		else
		{
			ix = btjit_index_find(index);
			if (ix != NULL && ix->state == BTJIT_INDEX_JIT)
				ix = btjit_dispatch_open(index, false);
		}
		if (ix != NULL && ix->state == BTJIT_INDEX_JIT)
		{
			ix->counts.jit_builds++;
			if (btjit_verify)
				ix->counts.verified_builds++;
			btjit_build_index.ix = ix;
		}
	}

	/*
	 * The index stays findable for the load's key image comparisons
	 * (btjit_build_index) until the server's build returns or fails.  Not
	 * restored to an enclosing build's (an index expression's function
	 * could build another): that state may have been invalidated
	 * meanwhile, and without the entry the comparisons look the index up.
	 */
	PG_TRY();
	{
		result = BTJIT_STOCK_BUILD(heap, index, indexInfo);
	}
	PG_FINALLY();
	{
		memset(&btjit_build_index, 0, sizeof(btjit_build_index));
	}
	PG_END_TRY();
	return result;
}
