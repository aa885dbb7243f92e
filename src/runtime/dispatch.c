/*-------------------------------------------------------------------------
 *
 * dispatch.c
 *	  The slot table every redirected function's dispatcher reads
 *	  (src/targets/), and the two switches they test.
 *
 * The dispatchers run on the hottest paths in the server, so what they
 * need is one flag test and one slot probe: the slot of a relation (a
 * cache line, found by bits of the Relation pointer) holds its index state
 * and the compiled entry of every target.  This file fills a slot when an
 * index is opened, empties slots on relcache invalidation, and keeps the
 * flags in step with the settings.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/inval.h"
#include "utils/rel.h"

#include "runtime/runtime.h"

/* the settings: btree_jit.cluster_enabled, .enabled, .verify */
bool		btjit_cluster_enabled = true;
bool		btjit_session_enabled = true;
bool		btjit_verify = false;

/* enabled and not verify: a dispatcher may call compiled code directly */
bool		btjit_fast_ok = true;

BtjitSlot	btjit_slots[BTJIT_SLOTS];
BtjitStepIndex btjit_step_index;
BtjitBuildIndex btjit_build_index;

/*
 * What a slot holds for a target of an index without compiled code: the
 * page search's counting stock entry, NULL for the others (start-up hands
 * them down from src/targets/).
 */
static BtjitEntries btjit_stock_entries;

/*
 * Derive the flags the dispatchers test from the three settings:
 * btjit_enabled (the DBA's switch and the session's), btjit_fast_ok
 * (enabled and not verify) for the page search's one test, and
 * btjit_code_active (enabled and some compiled code) for the others'.
 * The DBA's switch is a cap: a session can turn the module off below it,
 * never on above it.
 */
static void
btjit_switches_changed(bool cluster_enabled, bool session_enabled,
					   bool verify)
{
	btjit_enabled = cluster_enabled && session_enabled;
	btjit_fast_ok = btjit_enabled && !verify;
	btjit_code_active = btjit_enabled && btjit_code_present;
}

/* GUC assign hooks: each is called before its variable takes newval */
void
btjit_assign_cluster_enabled(bool newval, void *extra)
{
	btjit_switches_changed(newval, btjit_session_enabled, btjit_verify);
}

void
btjit_assign_enabled(bool newval, void *extra)
{
	btjit_switches_changed(btjit_cluster_enabled, newval, btjit_verify);
}

void
btjit_assign_verify(bool newval, void *extra)
{
	btjit_switches_changed(btjit_cluster_enabled, btjit_session_enabled,
						   newval);
}

/*
 * The step's entry (runtime.h): the descriptor of an index whose tuples
 * have every column at a fixed offset goes with it, for an index-only
 * scan's deform of the tuple the step returns.
 */
void
btjit_step_index_set(Relation rel, BtjitIndex *ix)
{
	btjit_step_index.rel = rel;
	btjit_step_index.relid = rel->rd_id;
	btjit_step_index.ix = ix;
	btjit_step_index.fixed_desc =
		ix->layout.kind == BTJIT_LAYOUT_FIXED &&
		ix->layout.natts == RelationGetDescr(rel)->natts ?
		RelationGetDescr(rel) : NULL;
}

/*
 * Relcache invalidation: empty the slots of the index (or every slot, for
 * InvalidOid), and the step's entry if it holds the index, so that its
 * next search opens it again (jitcache.c forgets its state in a callback
 * of its own).
 */
static void
btjit_slots_invalidate(Datum arg, Oid relid)
{
	if (!OidIsValid(relid) || btjit_step_index.relid == relid)
		memset(&btjit_step_index, 0, sizeof(btjit_step_index));
	if (!OidIsValid(relid) || btjit_build_index.relid == relid)
		memset(&btjit_build_index, 0, sizeof(btjit_build_index));
	if (!OidIsValid(relid))
	{
		memset(btjit_slots, 0, sizeof(btjit_slots));
		return;
	}
	for (int i = 0; i < BTJIT_SLOTS; i++)
		if (btjit_slots[i].relid == relid)
			memset(&btjit_slots[i], 0, sizeof(BtjitSlot));
}

/*
 * Called from _PG_init in the postmaster; backends inherit the callback
 * registration and the stock entries through fork.
 */
void
btjit_dispatch_init(void *const *stock_entries)
{
	memcpy(btjit_stock_entries, stock_entries, sizeof(btjit_stock_entries));
	CacheRegisterRelcacheCallback(btjit_slots_invalidate, (Datum) 0);
}

/*
 * Open the index (jitcache.c: examine it if due) and remember its state in
 * the slot table, settled or not: an index without compiled code then costs
 * the page search's dispatcher a slot hit, a test and a counter per search
 * in its stock entry (src/targets/binsrch.c), rather than a hash probe (a short connection's catalog
 * searches are all of that kind, and every search of an index queued for
 * the compile worker).
 */
BtjitIndex *
btjit_dispatch_open(Relation rel, bool force)
{
	BtjitIndex *ix = btjit_index_open(rel, force);

	btjit_slot_fill(rel, ix);
	return ix;
}

/*
 * Point rel's slot at ix, the state btjit_index_open gave it: no catalog
 * access and no allocation, so that a dispatcher may refill a slot it
 * found taken while the caller holds buffer locks.
 */
void
btjit_slot_fill(Relation rel, BtjitIndex *ix)
{
	BtjitSlot  *slot = btjit_slot_for(rel);

	slot->rel = rel;
	slot->relid = rel->rd_id;
	for (int t = 0; t < BTJIT_SLOT_TARGETS; t++)
		slot->entries[t] = ix->fn != NULL ? ix->entries[t] :
			btjit_stock_entries[t];
	slot->ix = ix;
}

