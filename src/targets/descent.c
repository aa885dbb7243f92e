/*-------------------------------------------------------------------------
 *
 * descent.c
 *	  The redirected _bt_search, _bt_getroot, _bt_getbuf and
 *	  _bt_relandgetbuf: the descent of an index with compiled code, on its
 *	  compiled page search and compare, and the page reads of a descent and
 *	  of the steps a scan or an insertion takes from page to page, through
 *	  the buffer this backend last found the page in (15, 17, 18).
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
 * _bt_search: see "The descent" in src/README, and the section below.
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
#if PG_VERSION_NUM >= 170000
static BTStack btjit_dispatch_search(Relation rel, Relation heaprel,
									 BTScanInsert key, Buffer *bufP,
									 int access);
static BTStack btjit_dispatch_search_part(Relation rel, Relation heaprel,
										  BTScanInsert key, Buffer *bufP,
										  int access);
#else
static BTStack btjit_dispatch_search(Relation rel, BTScanInsert key,
									 Buffer *bufP, int access,
									 Snapshot snapshot);
static BTStack btjit_dispatch_search_part(Relation rel, BTScanInsert key,
										  Buffer *bufP, int access,
										  Snapshot snapshot);
#endif

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
 * What gcc's split of _bt_search looks like (locate/split.c): its head is
 * "*bufP = _bt_getroot(rel[, heaprel], access)" and the early return; the
 * part hands rel to _bt_moveright (15, 17) or, 18's being static,
 * _bt_relandgetbuf.
 */
#if PG_VERSION_NUM >= 180000
static const BtjitSplitSignature descent_search_split = {
	"_bt_search", 5, 1u << 4, "_bt_getroot", 3, {0, 1, 4}, 3,
	"_bt_relandgetbuf"
};
#elif PG_VERSION_NUM >= 170000
static const BtjitSplitSignature descent_search_split = {
	"_bt_search", 5, 1u << 4, "_bt_getroot", 3, {0, 1, 4}, 3,
	"_bt_moveright"
};
#else
static const BtjitSplitSignature descent_search_split = {
	"_bt_search", 5, 1u << 3, "_bt_getroot", 2, {0, 3}, 2, "_bt_moveright"
};
#endif

const BtjitTargetImpl btjit_target_search = {
	.dispatcher = (void *) btjit_dispatch_search,
	.split_dispatcher = (void *) btjit_dispatch_search_part,
	.split_signature = &descent_search_split,
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

/*
 * Pin blkno, lock it with access and check it, as the server's do.  The
 * check is _bt_checkpage's test, inline; a page that fails it goes to the
 * server's function, which raises the error.
 */
static inline Buffer
descent_read(Relation rel, BlockNumber blkno, int access,
			 uint64 *recent_count, uint64 *verified_count)
{
	Buffer		buffer;
	Page		page;

	if (likely(btjit_fast_ok))
		buffer = btjit_read_recent(rel, blkno, recent_count);
	else
		buffer = descent_read_verify(rel, blkno, recent_count,
									 verified_count);
	_bt_lockbuf(rel, buffer, access);
	page = BufferGetPage(buffer);
	if (unlikely(PageIsNew(page) ||
				 PageGetSpecialSize(page) != MAXALIGN(sizeof(BTPageOpaqueData))))
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

/*
 * ---- _bt_search ----
 *
 * The server's _bt_search, level by level: _bt_moveright, _bt_binsrch on
 * an internal page, a stack entry, _bt_relandgetbuf to the child.  Of
 * _bt_moveright the module tests inline whether it would do anything (the
 * page is live and rightmost, or live, not an incomplete split the caller
 * must finish, and its high key below the scankey), with the compiled
 * compare; when it would, the module's copy of its loop runs from the
 * page, redoing the test before stepping right, finishing a split or
 * reporting a dead rightmost page.  The page search is the compiled entry,
 * called directly; the reads are descent_read's, or the server's functions
 * (by their symbols, so through their redirects) for a temporary index or
 * with recent_buffers off.  Where gcc split _bt_search (locate/split.c),
 * its second half gets the same loop from the root its caller read.
 */
#if PG_VERSION_NUM >= 170000
typedef BTStack (*BtjitBtSearchFn) (Relation rel, Relation heaprel,
									BTScanInsert key, Buffer *bufP,
									int access);
#define BTJIT_STOCK_SEARCH(rel, heaprel, key, bufP, access, snapshot) \
	((BtjitBtSearchFn) btjit_module.stock[BTJIT_TARGET_SEARCH]) \
		((rel), (heaprel), (key), (bufP), (access))
#define BTJIT_STOCK_SEARCH_PART(rel, heaprel, key, bufP, access, snapshot) \
	((BtjitBtSearchFn) btjit_module.split_stock[BTJIT_TARGET_SEARCH]) \
		((rel), (heaprel), (key), (bufP), (access))
#define DESCENT_GETROOT(rel, heaprel, access) \
	_bt_getroot((rel), (heaprel), (access))
#define DESCENT_FINISH_SPLIT(rel, heaprel, buf, stack) \
	_bt_finish_split((rel), (heaprel), (buf), (stack))
#else
typedef BTStack (*BtjitBtSearchFn) (Relation rel, BTScanInsert key,
									Buffer *bufP, int access,
									Snapshot snapshot);
#define BTJIT_STOCK_SEARCH(rel, heaprel, key, bufP, access, snapshot) \
	((BtjitBtSearchFn) btjit_module.stock[BTJIT_TARGET_SEARCH]) \
		((rel), (key), (bufP), (access), (snapshot))
#define BTJIT_STOCK_SEARCH_PART(rel, heaprel, key, bufP, access, snapshot) \
	((BtjitBtSearchFn) btjit_module.split_stock[BTJIT_TARGET_SEARCH]) \
		((rel), (key), (bufP), (access), (snapshot))
#define DESCENT_GETROOT(rel, heaprel, access) \
	_bt_getroot((rel), (access))
#define DESCENT_FINISH_SPLIT(rel, heaprel, buf, stack) \
	_bt_finish_split((rel), (buf), (stack))
#endif

/*
 * The server's _bt_moveright, where it is exported (15, 17; 18 made it
 * static): verify mode hands it each page the module's test kept.
 */
#if PG_VERSION_NUM < 170000
#define DESCENT_SERVER_MOVERIGHT(rel, heaprel, key, buf, forupdate, stack, \
								 access, snapshot) \
	_bt_moveright((rel), (key), (buf), (forupdate), (stack), (access), \
				  (snapshot))
#elif PG_VERSION_NUM < 180000
#define DESCENT_SERVER_MOVERIGHT(rel, heaprel, key, buf, forupdate, stack, \
								 access, snapshot) \
	_bt_moveright((rel), (heaprel), (key), (buf), (forupdate), (stack), \
				  (access))
#endif

typedef OffsetNumber (*BtjitBinsrchFn) (Relation rel, BTScanInsert key,
										Buffer buf);

/* The root, as the server's _bt_search gets it. */
static inline Buffer
descent_search_root(const BtjitDescentCode *dc, Relation rel, Relation heaprel,
					int access)
{
	if (dc->recent && btjit_module.stock[BTJIT_TARGET_GETROOT] != NULL)
#if PG_VERSION_NUM >= 160000
		return descent_getroot(rel, heaprel, access);
#else
		return descent_getroot(rel, access);
#endif
	return DESCENT_GETROOT(rel, heaprel, access);
}

/* From a page to its child (never the page itself: a downlink) */
static inline Buffer
descent_search_child(const BtjitDescentCode *dc, Relation rel, Buffer buf,
					 BlockNumber blkno, BlockNumber child, int access)
{
	if (likely(dc->recent && child != blkno))
	{
		_bt_unlockbuf(rel, buf);
		ReleaseBuffer(buf);
		return descent_read(rel, child, access,
							&dc->ix->counts.jit_recent_steps,
							&dc->ix->counts.verified_recent_steps);
	}
	return _bt_relandgetbuf(rel, buf, child, access);
}

/*
 * The high key against the scankey.  verify mode: the redirected
 * _bt_compare, whose dispatcher runs both and compares.
 */
static inline int32
descent_search_hikey(const BtjitDescentCode *dc, Relation rel, BTScanInsert key,
					 Page page)
{
	if (likely(dc->fast))
		return dc->compare(rel, key, page, P_HIKEY,
						   &dc->ix->counts.jit_compares);
	return _bt_compare(rel, key, page, P_HIKEY);
}

/*
 * The page search of a page of the descent (an internal page, or the leaf
 * a scan starts on); verify mode checks it here.
 */
static inline OffsetNumber
descent_search_page(const BtjitDescentCode *dc, Relation rel, BTScanInsert key,
					Buffer buf)
{
	BtjitIndex *ix = dc->ix;
	uint64		answered_before = ix->counts.jit_searches;
	OffsetNumber offnum = dc->search(rel, key, buf, &ix->counts.jit_searches);
	OffsetNumber stock_offnum;

	if (likely(dc->fast))
		return offnum;
	stock_offnum = ((BtjitBinsrchFn) btjit_module.stock[BTJIT_TARGET_BINSRCH])
		(rel, key, buf);
	if (ix->counts.jit_searches != answered_before)
		ix->counts.verified_searches++;
	if (unlikely(stock_offnum != offnum))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: compiled page search of index \"%s\" differs from the server's own in a descent",
						RelationGetRelationName(rel)),
				 errdetail("Block %u (%s page, level %u, %u items): stock search returned offset %u, compiled code returned %u; scankey has %d of %d key attributes, nextkey=%d, scantid %s; shape %s.",
						   BufferGetBlockNumber(buf),
						   P_ISLEAF(BTPageGetOpaque(BufferGetPage(buf))) ?
						   "leaf" : "internal",
						   BTPageGetOpaque(BufferGetPage(buf))->btpo_level,
						   (unsigned) PageGetMaxOffsetNumber(BufferGetPage(buf)),
						   (unsigned) stock_offnum, (unsigned) offnum,
						   key->keysz,
						   IndexRelationGetNumberOfKeyAttributes(rel),
						   (int) key->nextkey,
						   key->scantid ? "set" : "not set", ix->signature),
				 errhint(BTJIT_VERIFY_HINT)));
	return offnum;
}

/*
 * Whether _bt_moveright would act on the page: it is ignorable (deleted or
 * half-dead: stepped over, or "fell off the end" when rightmost), or it
 * is not rightmost and either an incomplete split an insertion must finish
 * or a page whose high key the scankey is not below.  Otherwise it returns
 * the page at once.
 */
static inline bool
descent_must_move(const BtjitDescentCode *dc, Relation rel, BTScanInsert key,
				  Page page, BTPageOpaque opaque, bool forupdate,
				  int32 cmpval)
{
	if (unlikely(P_IGNORE(opaque)))
		return true;
	if (P_RIGHTMOST(opaque))
		return false;
	if (forupdate && P_INCOMPLETE_SPLIT(opaque))
		return true;
	return descent_search_hikey(dc, rel, key, page) >= cmpval;
}

/*
 * _bt_moveright, from a page descent_must_move() sent here: the same
 * steps in the same order, on the server's exported functions (the reads
 * and _bt_compare by their symbols, so through their redirects).  18 made
 * the server's function static, so the module carries the loop itself on
 * every version (mirrorlist.h fingerprints the source it follows).
 */
static pg_noinline Buffer
descent_moveright(Relation rel, Relation heaprel, BTScanInsert key,
				  Buffer buf, bool forupdate, BTStack stack, int access,
				  Snapshot snapshot, int32 cmpval)
{
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		BTPageOpaque opaque;

#if PG_VERSION_NUM < 170000
		TestForOldSnapshot(snapshot, rel, page);
#endif
		opaque = BTPageGetOpaque(page);
		if (P_RIGHTMOST(opaque))
		{
			if (P_IGNORE(opaque))
				elog(ERROR, "fell off the end of index \"%s\"",
					 RelationGetRelationName(rel));
			return buf;
		}
		if (forupdate && P_INCOMPLETE_SPLIT(opaque))
		{
			BlockNumber blkno = BufferGetBlockNumber(buf);

			/* finish it under a write lock, then read the page again */
			if (access == BT_READ)
			{
				_bt_unlockbuf(rel, buf);
				_bt_lockbuf(rel, buf, BT_WRITE);
			}
			if (P_INCOMPLETE_SPLIT(opaque))
				DESCENT_FINISH_SPLIT(rel, heaprel, buf, stack);
			else
				_bt_relbuf(rel, buf);
			buf = _bt_getbuf(rel, blkno, access);
			continue;
		}
		if (!P_IGNORE(opaque) && _bt_compare(rel, key, page, P_HIKEY) < cmpval)
			return buf;
		buf = _bt_relandgetbuf(rel, buf, opaque->btpo_next, access);
	}
}

#ifdef DESCENT_SERVER_MOVERIGHT
/*
 * verify mode, 15 and 17: where the module's test says _bt_moveright would
 * return at once, the server's must return the page it was given (it then
 * only reads the page, which is locked).
 */
static pg_noinline void
descent_verify_stay(Relation rel, Relation heaprel, BTScanInsert key,
					Buffer buf, bool forupdate, BTStack stack, int access,
					Snapshot snapshot)
{
	BlockNumber blkno = BufferGetBlockNumber(buf);
	Buffer		stock_buf = DESCENT_SERVER_MOVERIGHT(rel, heaprel, key, buf,
													 forupdate, stack, access,
													 snapshot);

	if (unlikely(stock_buf != buf))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("btree_jit: the descent of index \"%s\" stayed on a page the server's _bt_moveright leaves",
						RelationGetRelationName(rel)),
				 errdetail("The module's test kept block %u; _bt_moveright moved to block %u.",
						   blkno, BufferGetBlockNumber(stock_buf)),
				 errhint(BTJIT_VERIFY_HINT)));
}
#endif

/*
 * What a descent of rel calls, or false when rel has no compiled code (the
 * server's function then runs).
 */
bool
btjit_descent_code(Relation rel, BtjitDescentCode *dc)
{
	dc->ix = btjit_slot_index(btjit_slot_for(rel), rel);
	if (dc->ix == NULL || dc->ix->fn == NULL ||
		(dc->search = btjit_entry_BINSRCH(dc->ix->entries)) == NULL ||
		(dc->compare = btjit_entry_COMPARE(dc->ix->entries)) == NULL)
		return false;
	dc->recent = btjit_recent_buffers && !RelationUsesLocalBuffers(rel);
	dc->fast = btjit_fast_ok;
	return true;
}

/* A descent the module ran, and whether verify checked it */
static inline void
descent_counted(const BtjitDescentCode *dc)
{
	dc->ix->counts.jit_descents++;
	if (!dc->fast)
		dc->ix->counts.verified_descents++;
}

/*
 * _bt_search from the root in *bufP (valid, read-locked) down: what the
 * server's function does after its first statement, and what the part gcc
 * split off it does.
 */
static BTStack
descent_search_from(const BtjitDescentCode *dc, Relation rel, Relation heaprel,
					BTScanInsert key, Buffer *bufP, int access,
					Snapshot snapshot, bool keep_stack)
{
	BTStack		stack = NULL;
	int			page_access = BT_READ;
	bool		forupdate = (access == BT_WRITE);
	int32		cmpval = key->nextkey ? 0 : 1;
	BlockNumber blkno = InvalidBlockNumber; /* of *bufP, where known */

	for (;;)
	{
		Page		page = BufferGetPage(*bufP);
		BTPageOpaque opaque;
		OffsetNumber offnum;
		BlockNumber child;
		BTStack		parent;

#if PG_VERSION_NUM < 170000
		TestForOldSnapshot(snapshot, rel, page);
#endif
		opaque = BTPageGetOpaque(page);
		if (unlikely(descent_must_move(dc, rel, key, page, opaque,
									   forupdate, cmpval)))
		{
			*bufP = descent_moveright(rel, heaprel, key, *bufP, forupdate,
									  stack, page_access, snapshot, cmpval);
			page = BufferGetPage(*bufP);
			opaque = BTPageGetOpaque(page);
			blkno = InvalidBlockNumber;
		}
#ifdef DESCENT_SERVER_MOVERIGHT
		else if (unlikely(!dc->fast))
			descent_verify_stay(rel, heaprel, key, *bufP, forupdate, stack,
								page_access, snapshot);
#endif
		if (P_ISLEAF(opaque))
			break;

		offnum = descent_search_page(dc, rel, key, *bufP);
		if (blkno == InvalidBlockNumber)
			blkno = BufferGetBlockNumber(*bufP);
		if (keep_stack)
		{
			parent = stack;
			stack = (BTStack) palloc(sizeof(BTStackData));
			stack->bts_blkno = blkno;
			stack->bts_offset = offnum;
			stack->bts_parent = parent;
		}

		/* an insertion write-locks the leaf from level 1 down */
		if (opaque->btpo_level == 1 && access == BT_WRITE)
			page_access = BT_WRITE;
		child = BTreeTupleGetDownLink((IndexTuple)
									  PageGetItem(page, PageGetItemId(page, offnum)));
		*bufP = descent_search_child(dc, rel, *bufP, blkno, child,
									 page_access);
		blkno = child;
	}

	/*
	 * The root was the leaf: an insertion trades its read lock for a write
	 * lock, and the leaf may have split meanwhile.
	 */
	if (access == BT_WRITE && page_access == BT_READ)
	{
		_bt_unlockbuf(rel, *bufP);
		_bt_lockbuf(rel, *bufP, BT_WRITE);
		*bufP = descent_moveright(rel, heaprel, key, *bufP, true, stack,
								  BT_WRITE, snapshot, cmpval);
	}
	descent_counted(dc);
	return stack;
}

/*
 * The root, then the levels; *bufP is InvalidBuffer for an empty index
 * read with BT_READ (no root is created, no stack returned).
 */
static BTStack
descent_search_whole(const BtjitDescentCode *dc, Relation rel,
					 Relation heaprel, BTScanInsert key, Buffer *bufP,
					 int access, Snapshot snapshot, bool keep_stack)
{
	*bufP = descent_search_root(dc, rel, heaprel, access);
	if (!BufferIsValid(*bufP))
	{
		descent_counted(dc);
		return NULL;
	}
	return descent_search_from(dc, rel, heaprel, key, bufP, access,
							   snapshot, keep_stack);
}

/* The whole of _bt_search */
static pg_noinline BTStack
descent_search(Relation rel, Relation heaprel, BTScanInsert key, Buffer *bufP,
			   int access, Snapshot snapshot)
{
	BtjitDescentCode dc;

	if (!btjit_descent_code(rel, &dc))
		return BTJIT_STOCK_SEARCH(rel, heaprel, key, bufP, access, snapshot);
	return descent_search_whole(&dc, rel, heaprel, key, bufP, access,
								snapshot, true);
}

/* The part gcc split off _bt_search: the levels, from the root in *bufP */
static pg_noinline BTStack
descent_search_part(Relation rel, Relation heaprel, BTScanInsert key,
					Buffer *bufP, int access, Snapshot snapshot)
{
	BtjitDescentCode dc;

	if (!btjit_descent_code(rel, &dc))
		return BTJIT_STOCK_SEARCH_PART(rel, heaprel, key, bufP, access,
									   snapshot);
	return descent_search_from(&dc, rel, heaprel, key, bufP, access,
							   snapshot, true);
}

/*
 * A scan's descent (targets/first.c): _bt_search with BT_READ, whose
 * stack the scan frees unread, so none is built (a read descent hands the
 * stack only to the caller: _bt_moveright uses it to finish a split, which
 * a read never does).  *bufP is InvalidBuffer for an empty index.
 */
void
btjit_descend_scan(const BtjitDescentCode *dc, Relation rel,
				   BTScanInsert key, Buffer *bufP, Snapshot snapshot)
{
	(void) descent_search_whole(dc, rel, NULL, key, bufP, BT_READ, snapshot,
								false);
}

/* The page search of the leaf a scan starts on, as the descent's. */
OffsetNumber
btjit_descent_leaf_search(const BtjitDescentCode *dc, Relation rel,
						  BTScanInsert key, Buffer buf)
{
	return descent_search_page(dc, rel, key, buf);
}

static BTStack
#if PG_VERSION_NUM >= 170000
btjit_dispatch_search(Relation rel, Relation heaprel, BTScanInsert key,
					  Buffer *bufP, int access)
{
	if (likely(btjit_code_active))
		return descent_search(rel, heaprel, key, bufP, access, NULL);
	return BTJIT_STOCK_SEARCH(rel, heaprel, key, bufP, access, NULL);
}
#else
btjit_dispatch_search(Relation rel, BTScanInsert key, Buffer *bufP,
					  int access, Snapshot snapshot)
{
	if (likely(btjit_code_active))
		return descent_search(rel, NULL, key, bufP, access, snapshot);
	return BTJIT_STOCK_SEARCH(rel, NULL, key, bufP, access, snapshot);
}
#endif

static BTStack
#if PG_VERSION_NUM >= 170000
btjit_dispatch_search_part(Relation rel, Relation heaprel, BTScanInsert key,
						   Buffer *bufP, int access)
{
	if (likely(btjit_code_active))
		return descent_search_part(rel, heaprel, key, bufP, access, NULL);
	return BTJIT_STOCK_SEARCH_PART(rel, heaprel, key, bufP, access, NULL);
}
#else
btjit_dispatch_search_part(Relation rel, BTScanInsert key, Buffer *bufP,
						   int access, Snapshot snapshot)
{
	if (likely(btjit_code_active))
		return descent_search_part(rel, NULL, key, bufP, access, snapshot);
	return BTJIT_STOCK_SEARCH_PART(rel, NULL, key, bufP, access, snapshot);
}
#endif
#endif							/* PG_VERSION_NUM < 190000 */

#if PG_VERSION_NUM >= 190000
/* 19: targetlist.h's rows end at 18 */
const BtjitTargetImpl btjit_target_getroot = {0};
const BtjitTargetImpl btjit_target_getbuf = {0};
const BtjitTargetImpl btjit_target_relandgetbuf = {0};
const BtjitTargetImpl btjit_target_search = {0};
#endif
