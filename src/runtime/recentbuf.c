/*-------------------------------------------------------------------------
 *
 * recentbuf.c
 *	  Read a B-tree page through the buffer this backend last found it in,
 *	  without the buffer mapping table, with the buffer manager's own
 *	  accounting of a hit.
 *
 * A descent pins a page per level.  ReadBuffer finds its buffer by hashing
 * the block's tag and probing the shared mapping table under a partition
 * lock, about 400 instructions of a hit; ReadRecentBuffer (PostgreSQL 14
 * and later) pins a buffer the caller believes holds the block, after
 * checking the buffer's tag under its header lock, for about a third of
 * that.  What it needs is a belief: this file remembers, per backend, the
 * buffer each page of a compiled index was last pinned in (a table of
 * BTJIT_RECENT_BUFFERS entries, 96 kB of static storage, zero until
 * written), keyed by relation file number and block.
 *
 * A remembered buffer is never trusted: ReadRecentBuffer compares the
 * whole tag (tablespace, database, relation file, fork, block) with the
 * buffer's, under the header spinlock, and pins only a valid buffer that
 * holds exactly that block; anything else (evicted, reused, the relation
 * rewritten, another database's file of the same number) is a miss, and
 * the read goes through ReadBuffer, whose buffer is remembered instead.
 * Nothing is read from the page before the pin, and the caller locks it
 * as the server would (targets/descent.c).  So the table needs no lock
 * and no invalidation.
 *
 * ReadRecentBuffer counts pgBufferUsage's hit, and nothing else that
 * ReadBuffer counts for a hit of a relation's page: the relation's
 * pg_statio counters, pg_stat_io's hit (17, 18), VacuumPageHit (15, 17)
 * and the vacuum cost balance are counted here, as PinBufferForBlock (17,
 * 18) and ReadBufferExtended with ReadBuffer_common (15) count them.  And
 * where it pins a buffer this backend had not pinned, it does not raise
 * the buffer's usage count, which ReadBuffer's PinBuffer does (strategy
 * NULL): raised here, so that the clock sweep sees the page as used
 * (src/README, "The descent's page reads").  Those functions' source is
 * in mirrorlist.h, per major; 19's buffer manager is not at hand (and its
 * buffer descriptor's state word changed type), so the targets end at 18
 * and this file builds nothing for 19 but the setting.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/instrument.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "runtime/runtime.h"

bool		btjit_recent_buffers = true;

#if PG_VERSION_NUM < 190000

typedef struct BtjitRecentBuffer
{
	RelFileNumberCompat relfile;	/* the relation's file number */
	BlockNumber block;
	Buffer		buffer;			/* where that block was last pinned */
} BtjitRecentBuffer;

#define BTJIT_RECENT_BUFFERS	8192

static BtjitRecentBuffer btjit_recent_table[BTJIT_RECENT_BUFFERS];

/*
 * An index's entries are consecutive from a base its file number hashes
 * to, so that one index of up to BTJIT_RECENT_BUFFERS pages never evicts
 * its own entries (its upper levels are its lowest block numbers but one).
 */
static inline BtjitRecentBuffer *
btjit_recent_entry(RelFileNumberCompat relfile, BlockNumber block)
{
	uint32		base = (uint32) relfile * 0x9E3779B1U;

	return &btjit_recent_table[((base >> 19) + block) &
							   (BTJIT_RECENT_BUFFERS - 1)];
}

/*
 * Raise the usage count of a buffer we hold a pin on, as PinBuffer does
 * for a backend's first pin with no strategy.  The state word is changed
 * only by compare-and-swap while its header spinlock is free; when the
 * header is locked (someone is examining it right now) the raise is
 * skipped: the count is a replacement heuristic, and a pinned buffer is
 * not replaceable anyway.
 */
static inline void
btjit_buffer_mark_used(Buffer buffer)
{
	BufferDesc *desc = GetBufferDescriptor(buffer - 1);
	uint32		old_state = pg_atomic_read_u32(&desc->state);

	while (!(old_state & BM_LOCKED) &&
		   BUF_STATE_GET_USAGECOUNT(old_state) < BM_MAX_USAGE_COUNT)
	{
		if (pg_atomic_compare_exchange_u32(&desc->state, &old_state,
										   old_state + BUF_USAGECOUNT_ONE))
			break;
	}
}

/* What ReadBuffer counts for a hit of rel's page and ReadRecentBuffer not. */
static inline void
btjit_count_buffer_hit(Relation rel)
{
	pgstat_count_buffer_read(rel);
	pgstat_count_buffer_hit(rel);
#if PG_VERSION_NUM < 180000
	VacuumPageHit++;
#endif
#if PG_VERSION_NUM >= 180000
	pgstat_count_io_op(IOOBJECT_RELATION, IOCONTEXT_NORMAL, IOOP_HIT, 1, 0);
#elif PG_VERSION_NUM >= 160000
	pgstat_count_io_op(IOOBJECT_RELATION, IOCONTEXT_NORMAL, IOOP_HIT);
#endif
	if (VacuumCostActive)
		VacuumCostBalance += VacuumCostPageHit;
}

/*
 * ReadBuffer(rel, block) for a permanent or unlogged relation: the page
 * pinned, not locked.  *recent_count is incremented when the remembered
 * buffer held it (the mapping table was skipped).
 */
Buffer
btjit_read_recent(Relation rel, BlockNumber block, uint64 *recent_count)
{
	RelFileNumberCompat relfile = BTJIT_REL_FILE_NUMBER(rel);
	BtjitRecentBuffer *entry = btjit_recent_entry(relfile, block);
	Buffer		buffer;

	Assert(!RelationUsesLocalBuffers(rel));
	if (entry->relfile == relfile && entry->block == block &&
		entry->buffer != InvalidBuffer &&
		ReadRecentBuffer(BTJIT_REL_LOCATOR(rel), MAIN_FORKNUM, block,
						 entry->buffer))
	{
		btjit_buffer_mark_used(entry->buffer);
		btjit_count_buffer_hit(rel);
		(*recent_count)++;
		return entry->buffer;
	}
	buffer = ReadBuffer(rel, block);
	entry->relfile = relfile;
	entry->block = block;
	entry->buffer = buffer;
	return buffer;
}
#endif							/* PG_VERSION_NUM < 190000 */
