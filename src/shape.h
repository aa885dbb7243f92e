/*-------------------------------------------------------------------------
 *
 * shape.h
 *	  The key shape: everything the specialised page search is allowed to
 *	  assume about an index, as a plain constant value.
 *
 * This header is shared by the module's C code and by the bitcode template
 * (llvm-ir/search_template.c), so that both agree on the layout: the
 * compiler binds one BtjitShape as the initializer of the template's
 * btjit_shape_param and lets the optimiser fold every test on it.
 *
 * Only plain integer fields: the value is hashed and compared bytewise, so
 * it must be built zeroed (padding included) before filling it in.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_SHAPE_H
#define BTREE_JIT_SHAPE_H

/* More key columns than this: stock path. */
#define BTJIT_MAX_KEYS 8

/* Cross-type procs accepted per key column (the column's own proc first). */
#define BTJIT_MAX_PROCS 4

#define BTJIT_SIGNATURE_LEN 256

/*
 * How a value is read and widened to int64 before comparing.  Every
 * first-wave comparison proc is an exact comparison of such values.
 */
typedef enum BtjitValueKind
{
	BTJIT_KIND_NONE = 0,
	BTJIT_KIND_INT16,			/* int2 */
	BTJIT_KIND_INT32,			/* int4, date */
	BTJIT_KIND_INT64,			/* int8, time, timestamp, timestamptz */
	BTJIT_KIND_UINT32,			/* oid */
	BTJIT_KIND_BOOL,			/* bool: zero or not */
	BTJIT_KIND_UINT8			/* "char": compared unsigned */
} BtjitValueKind;

typedef struct BtjitColumnShape
{
	uint8		kind;			/* BtjitValueKind of the stored value */
	uint8		attlen;			/* 1, 2, 4 or 8 */
	uint8		attalign;		/* 1, 2, 4 or 8 (bytes, not the char code) */
	uint8		desc;			/* SK_BT_DESC */
	uint8		nulls_first;	/* SK_BT_NULLS_FIRST */
	uint8		nprocs;			/* valid entries in procs[] */
	uint16		fixed_offset;	/* from tuple start when the tuple has no
								 * NULLs */
	uint32		procs[BTJIT_MAX_PROCS]; /* accepted sk_func.fn_oid values */
	uint8		argkinds[BTJIT_MAX_PROCS];	/* how to read sk_argument */
} BtjitColumnShape;

typedef struct BtjitShape
{
	uint16		nkeys;			/* key columns (INCLUDE columns excluded) */
	uint16		flags;			/* BTJIT_SHAPE_* options */
	BtjitColumnShape cols[BTJIT_MAX_KEYS];
} BtjitShape;

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

#endif							/* BTREE_JIT_SHAPE_H */
