/*-------------------------------------------------------------------------
 *
 * blockhints.c
 *	  Storage and switch of the block hints compiled code prefetches from.
 *
 * An index larger than the CPU's cache costs a descent a chain of
 * dependent misses on reaching a leaf: the buffer manager's mapping table,
 * the buffer descriptor, the leaf's header, special space and high key,
 * then its bisection.  The compiled search of a level-1 page knows which
 * leaf comes next before the buffer manager does; with a hint of the buffer
 * this backend last found that block in, it prefetches the leaf while the
 * lookup runs (llvm-ir/search_template.c, "Across levels"; the table's
 * entry is code_abi.h's BtjitBlockHint).
 *
 * The table is per backend and private: compiled code writes an entry for
 * every leaf it searches and reads one for every downlink a level-1 search
 * returns.  An
 * entry is only ever used to form a prefetch address inside the buffer
 * pool, so it needs no lock and no invalidation: after an eviction or a
 * split it names the wrong memory and the prefetch is wasted.  It is static
 * storage, zero until written, so a backend that never searches an index
 * of more than a few pages touches a few of its pages only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "runtime/runtime.h"

bool		btjit_prefetch_hints = true;

static BtjitBlockHint btjit_block_hint_table[BTJIT_BLOCK_HINTS];

/* NULL while btree_jit.prefetch_hints is off: compiled code tests it. */
BtjitBlockHint *btjit_block_hints = btjit_block_hint_table;

/* GUC assign hook of btree_jit.prefetch_hints. */
void
btjit_assign_prefetch_hints(bool newval, void *extra)
{
	btjit_block_hints = newval ? btjit_block_hint_table : NULL;
}
