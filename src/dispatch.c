/*-------------------------------------------------------------------------
 *
 * dispatch.c
 *	  The function every call of _bt_binsrch now reaches.
 *
 * It runs on the hottest path in the server, so the common case (module
 * enabled, index already examined, compiled code accepts the scankey) is a
 * slot-table hit and an indirect call: no hash probe, no palloc, no elog.
 * Everything else goes to the stock path, the server's original machine
 * code, reached through the detour's trampoline.
 *
 * With btree_jit.verify on, the stock path also runs for every search the
 * compiled code answered, and any difference is an ERROR naming the index,
 * block and both results, in the manner of amcheck.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "btree_jit.h"

static void btjit_verify_search(Relation rel, BTScanInsert key, Buffer buf,
								BtjitIndex *ix, int jit_result);

OffsetNumber
btjit_dispatch(Relation rel, BTScanInsert key, Buffer buf)
{
	BtjitSlot  *slot = btjit_slot_for(rel);
	BtjitIndex *ix;
	int			result;

	if (likely(slot->rel == rel && slot->relid == rel->rd_id))
		ix = slot->ix;
	else if (likely(btjit_enabled))
		ix = btjit_index_open(rel, false);
	else
		return btjit_module.stock(rel, key, buf);

	if (likely(ix->fn != NULL && btjit_enabled))
	{
		result = ix->fn(key, BufferGetPage(buf));
		if (likely(result != BTJIT_DECLINE))
		{
			if (unlikely(btjit_verify))
				btjit_verify_search(rel, key, buf, ix, result);
			ix->jit_searches++;
			return (OffsetNumber) result;
		}
		ix->declined_searches++;
	}
	ix->stock_searches++;
	return btjit_module.stock(rel, key, buf);
}

static void
btjit_verify_search(Relation rel, BTScanInsert key, Buffer buf,
					BtjitIndex *ix, int jit_result)
{
	OffsetNumber stock_result = btjit_module.stock(rel, key, buf);
	Page		page;
	BTPageOpaque opaque;

	ix->verified_searches++;
	if (likely(stock_result == (OffsetNumber) jit_result))
		return;

	page = BufferGetPage(buf);
	opaque = BTPageGetOpaque(page);
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("btree_jit: compiled page search of index \"%s\" differs from the server's own",
					RelationGetRelationName(rel)),
			 errdetail("Block %u (%s page, level %u, %u items): stock search returned offset %u, compiled code returned %d; scankey has %d of %d key attributes, nextkey=%d, pivotsearch=%d, scantid %s; shape %s.",
					   BufferGetBlockNumber(buf),
					   P_ISLEAF(opaque) ? "leaf" : "internal",
					   opaque->btpo_level,
					   (unsigned) PageGetMaxOffsetNumber(page),
					   (unsigned) stock_result, jit_result,
					   key->keysz,
					   IndexRelationGetNumberOfKeyAttributes(rel),
					   (int) key->nextkey, (int) key->pivotsearch,
					   key->scantid ? "set" : "not set",
					   ix->signature),
			 errhint("Set btree_jit.enabled = off to bypass the compiled code, and please report this.")));
}
