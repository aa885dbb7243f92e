/*-------------------------------------------------------------------------
 *
 * descent.c
 *	  The redirected _bt_getroot, _bt_getbuf and _bt_relandgetbuf: the page
 *	  reads of a descent, and of the steps a scan or an insertion takes
 *	  from page to page, through the buffer this backend last found the
 *	  page in (15, 17, 18).
 *
 * All three are exported.  _bt_search starts at _bt_getroot, which reads
 * the root its metapage cache (rd_amcache) names with an inlined
 * _bt_getbuf, and reads every level below with _bt_relandgetbuf, as do
 * _bt_moveright and page deletion; a scan steps to a sibling with
 * _bt_getbuf.  Of _bt_getroot the module takes the cached root's read and
 * its test that the page is still the root; when the test fails it drops
 * the cache as the server does and hands the call to the server's
 * function, which then reads the metapage (and may create the root), as
 * it would have after its own failed test.
 *
 * For an index with compiled code, the page is pinned with
 * runtime/recentbuf.c (ReadRecentBuffer on the remembered buffer, else
 * ReadBuffer), then locked and checked with the server's own _bt_lockbuf
 * and _bt_checkpage, exactly as the server's functions do after their
 * ReadBuffer: the pin is the only thing done differently, and a pin on the
 * right buffer is the same pin whichever way the buffer was found.  The
 * locking protocol, and with it every rule of concurrent splits and page
 * deletion (_bt_moveright, the high key, half-dead pages), is the callers'
 * and unchanged.
 *
 * What stays the server's: an index whose metapage is not cached, 15's
 * new-page allocation (_bt_getbuf with P_NEW), a step to the page the
 * caller already holds (the server keeps its pin), temporary indexes
 * (local buffers), indexes without compiled code, and everything while
 * btree_jit.recent_buffers is off.  On 19 nothing: its rows end at 18.
 *
 * verify mode: a page pinned through the remembered buffer is read again
 * through the server's buffer mapping table, which must name the same
 * buffer; the second pin is released at once.  (The second read counts
 * in pg_statio and pg_stat_io like any other.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "targets/targets.h"

typedef Buffer (*BtjitGetbufFn) (Relation rel, BlockNumber blkno,
								 int access);
#if PG_VERSION_NUM >= 160000
typedef Buffer (*BtjitGetrootFn) (Relation rel, Relation heaprel, int access);
#define BTJIT_STOCK_GETROOT(rel, heaprel, access) \
	((BtjitGetrootFn) btjit_module.stock[BTJIT_TARGET_GETROOT]) \
		((rel), (heaprel), (access))
#else
typedef Buffer (*BtjitGetrootFn) (Relation rel, int access);
#define BTJIT_STOCK_GETROOT(rel, heaprel, access) \
	((BtjitGetrootFn) btjit_module.stock[BTJIT_TARGET_GETROOT]) \
		((rel), (access))
#endif
typedef Buffer (*BtjitRelandgetbufFn) (Relation rel, Buffer obuf,
									   BlockNumber blkno, int access);

#define BTJIT_STOCK_GETBUF \
	((BtjitGetbufFn) btjit_module.stock[BTJIT_TARGET_GETBUF])
#define BTJIT_STOCK_RELANDGETBUF \
	((BtjitRelandgetbufFn) btjit_module.stock[BTJIT_TARGET_RELANDGETBUF])

#if PG_VERSION_NUM < 190000
#if PG_VERSION_NUM >= 160000
static Buffer btjit_dispatch_getroot(Relation rel, Relation heaprel,
									 int access);
#else
static Buffer btjit_dispatch_getroot(Relation rel, int access);
#endif
static Buffer btjit_dispatch_getbuf(Relation rel, BlockNumber blkno,
									int access);
static Buffer btjit_dispatch_relandgetbuf(Relation rel, Buffer obuf,
										  BlockNumber blkno, int access);

const BtjitTargetImpl btjit_target_getroot = {
	.dispatcher = (void *) btjit_dispatch_getroot,
};
const BtjitTargetImpl btjit_target_getbuf = {
	.dispatcher = (void *) btjit_dispatch_getbuf,
};
const BtjitTargetImpl btjit_target_relandgetbuf = {
	.dispatcher = (void *) btjit_dispatch_relandgetbuf,
};

/*
 * Whether page reads may be the module's at all: the dispatchers test this
 * first and otherwise tail-call the server's function, so that a session
 * with the module off pays a few instructions a read.
 */
static inline bool
descent_on(void)
{
	return btjit_code_active && btjit_recent_buffers;
}

/*
 * The index state of rel when its page reads are the module's: compiled
 * code, shared buffers.  NULL sends the call to the server's function.
 */
static inline BtjitIndex *
descent_index(Relation rel)
{
	BtjitIndex *ix;

	if (RelationUsesLocalBuffers(rel))
		return NULL;
	ix = btjit_slot_index(btjit_slot_for(rel), rel);
	if (ix == NULL || ix->fn == NULL)
		return NULL;
	return ix;
}

/* verify mode: the buffer must be the one the mapping table names */
static pg_noinline Buffer
descent_read_verify(Relation rel, BlockNumber blkno, uint64 *recent_count,
					uint64 *verified_count)
{
	uint64		recent = 0;
	Buffer		buffer = btjit_read_recent(rel, blkno, &recent);
	Buffer		stock_buffer;

	if (recent == 0)
		return buffer;
	(*recent_count)++;
	stock_buffer = ReadBuffer(rel, blkno);
	ReleaseBuffer(stock_buffer);
	(*verified_count)++;
	if (unlikely(stock_buffer != buffer))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: block %u of index \"%s\" was pinned in the wrong buffer",
						blkno, RelationGetRelationName(rel)),
				 errdetail("The buffer this backend last found it in is %d; the buffer mapping table names buffer %d.",
						   buffer, stock_buffer),
				 errhint(BTJIT_VERIFY_HINT)));
	return buffer;
}

/* Pin blkno, lock it with access and check it, as the server's do. */
static inline Buffer
descent_read(Relation rel, BlockNumber blkno, int access,
			 uint64 *recent_count, uint64 *verified_count)
{
	Buffer		buffer;

	if (likely(btjit_fast_ok))
		buffer = btjit_read_recent(rel, blkno, recent_count);
	else
		buffer = descent_read_verify(rel, blkno, recent_count,
									 verified_count);
	_bt_lockbuf(rel, buffer, access);
	_bt_checkpage(rel, buffer);
	return buffer;
}

/*
 * The root the metapage cache names, if it still is the root: not deleted
 * or half-dead, of the cached level, with no sibling.  (The cached root is
 * read with a read lock whatever access the caller asked for, as the
 * server's does.)
 */
static pg_noinline Buffer
#if PG_VERSION_NUM >= 160000
descent_getroot(Relation rel, Relation heaprel, int access)
#else
descent_getroot(Relation rel, int access)
#endif
{
	BtjitIndex *ix;
	BTMetaPageData *metad = (BTMetaPageData *) rel->rd_amcache;
	Buffer		rootbuf;
	BTPageOpaque rootopaque;

	if (metad == NULL || (ix = descent_index(rel)) == NULL)
		return BTJIT_STOCK_GETROOT(rel, heaprel, access);
	rootbuf = descent_read(rel, metad->btm_fastroot, BT_READ,
						   &ix->counts.jit_recent_roots,
						   &ix->counts.verified_recent_roots);
	rootopaque = BTPageGetOpaque(BufferGetPage(rootbuf));
	if (!P_IGNORE(rootopaque) &&
		rootopaque->btpo_level == metad->btm_fastlevel &&
		P_LEFTMOST(rootopaque) && P_RIGHTMOST(rootopaque))
		return rootbuf;
	/* stale: what the server does next, from the metapage */
	_bt_relbuf(rel, rootbuf);
	pfree(rel->rd_amcache);
	rel->rd_amcache = NULL;
	return BTJIT_STOCK_GETROOT(rel, heaprel, access);
}

static Buffer
#if PG_VERSION_NUM >= 160000
btjit_dispatch_getroot(Relation rel, Relation heaprel, int access)
#else
btjit_dispatch_getroot(Relation rel, int access)
#endif
{
	if (likely(descent_on()))
#if PG_VERSION_NUM >= 160000
		return descent_getroot(rel, heaprel, access);
#else
		return descent_getroot(rel, access);
#endif
	return BTJIT_STOCK_GETROOT(rel, heaprel, access);
}

static pg_noinline Buffer
descent_getbuf(Relation rel, BlockNumber blkno, int access)
{
	BtjitIndex *ix;

	if (blkno == P_NEW || (ix = descent_index(rel)) == NULL)
		return BTJIT_STOCK_GETBUF(rel, blkno, access);
	return descent_read(rel, blkno, access,
						&ix->counts.jit_recent_reads,
						&ix->counts.verified_recent_reads);
}

static Buffer
btjit_dispatch_getbuf(Relation rel, BlockNumber blkno, int access)
{
	if (likely(descent_on()))
		return descent_getbuf(rel, blkno, access);
	return BTJIT_STOCK_GETBUF(rel, blkno, access);
}

static pg_noinline Buffer
descent_relandgetbuf(Relation rel, Buffer obuf, BlockNumber blkno,
					 int access)
{
	BtjitIndex *ix = descent_index(rel);

	/* a step to the page held keeps its pin: the server's function */
	if (ix == NULL ||
		(BufferIsValid(obuf) && BufferGetBlockNumber(obuf) == blkno))
		return BTJIT_STOCK_RELANDGETBUF(rel, obuf, blkno, access);
	if (BufferIsValid(obuf))
	{
		_bt_unlockbuf(rel, obuf);
		ReleaseBuffer(obuf);
	}
	return descent_read(rel, blkno, access,
						&ix->counts.jit_recent_steps,
						&ix->counts.verified_recent_steps);
}

static Buffer
btjit_dispatch_relandgetbuf(Relation rel, Buffer obuf, BlockNumber blkno,
							int access)
{
	if (likely(descent_on()))
		return descent_relandgetbuf(rel, obuf, blkno, access);
	return BTJIT_STOCK_RELANDGETBUF(rel, obuf, blkno, access);
}
#endif							/* PG_VERSION_NUM < 190000 */

#if PG_VERSION_NUM >= 190000
/* 19: targetlist.h's rows end at 18 */
const BtjitTargetImpl btjit_target_getroot = {0};
const BtjitTargetImpl btjit_target_getbuf = {0};
const BtjitTargetImpl btjit_target_relandgetbuf = {0};
#endif
