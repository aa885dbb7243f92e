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

/* Longest C symbol of a comparison proc whose body may be imported. */
#define BTJIT_BCSYM_LEN 32

/*
 * How a stored value (and, for the argument kinds, a scankey argument) is
 * read before comparing.  The integer kinds are widened to int64: every
 * integer-family proc is an exact comparison of such values.  The other
 * inline kinds are compared by code of the template that reproduces the
 * proc's order exactly.  BTJIT_KIND_CALL is any other column: the compiled
 * loop calls the scankey's own comparison proc.
 */
typedef enum BtjitValueKind
{
	BTJIT_KIND_NONE = 0,
	BTJIT_KIND_INT16,			/* int2 */
	BTJIT_KIND_INT32,			/* int4, date */
	BTJIT_KIND_INT64,			/* int8, time, timestamp, timestamptz */
	BTJIT_KIND_UINT32,			/* oid */
	BTJIT_KIND_BOOL,			/* bool: zero or not */
	BTJIT_KIND_UINT8,			/* "char": compared unsigned */
	BTJIT_KIND_FLOAT4,			/* float4: NaN highest, -0 = 0 */
	BTJIT_KIND_FLOAT8,			/* float8, likewise */
	BTJIT_KIND_UUID,			/* 16 bytes, unsigned byte order */
	BTJIT_KIND_VARBYTES,		/* varlena, unsigned byte order then length */
	BTJIT_KIND_BPCHAR,			/* varlena, likewise after trailing blanks */
	BTJIT_KIND_CSTRING,			/* stored name: NUL-terminated, byte order */
	BTJIT_KIND_NAME,			/* argument only: a Name, byte order */
	BTJIT_KIND_NUMERIC,			/* numeric, read in place (cmp_numerics) */
	BTJIT_KIND_CALL				/* the scankey's proc is called */
} BtjitValueKind;

/* Integer kinds: compared as widened int64 values. */
#define BTJIT_KIND_IS_INT(k) ((k) >= BTJIT_KIND_INT16 && (k) <= BTJIT_KIND_UINT8)

/* Byte-order string kinds: compared as (pointer, length) pairs. */
#define BTJIT_KIND_IS_BYTES(k) ((k) >= BTJIT_KIND_VARBYTES && (k) <= BTJIT_KIND_NAME)

/*
 * Which scankey collations an inline comparison may see (collmode): for
 * procs whose order depends on the collation, only those the server itself
 * compares in byte order (C and POSIX; the database default when it is C
 * in the backend that derived the shape).  Any other collation makes the
 * compiled code call the proc for that column.
 */
#define BTJIT_COLL_ANY		0	/* the proc ignores the collation */
#define BTJIT_COLL_C		1	/* C or POSIX */
#define BTJIT_COLL_C_DEFAULT 2	/* C, POSIX or the default collation */

typedef struct BtjitColumnShape
{
	uint8		kind;			/* BtjitValueKind of the stored value */
	uint8		attalign;		/* 1, 2, 4 or 8 (bytes, not the char code) */
	int16		attlen;			/* > 0 fixed, -1 varlena, -2 cstring */
	uint8		attbyval;		/* passed by value (for the proc call) */
	uint8		desc;			/* SK_BT_DESC */
	uint8		nulls_first;	/* SK_BT_NULLS_FIRST */
	uint8		nprocs;			/* valid entries in procs[] */
	uint8		collmode;		/* BTJIT_COLL_* for the inline comparison */
	uint8		pad[3];			/* zero */
	uint32		procs[BTJIT_MAX_PROCS]; /* sk_func.fn_oid values compared
										 * inline */
	uint8		argkinds[BTJIT_MAX_PROCS];	/* how to read sk_argument */

	/*
	 * A called column (BTJIT_KIND_CALL) whose own proc is a built-in
	 * function: its OID and C symbol, whose body the compiler imports from
	 * the server's bitcode if its rules allow (llvm/specialise.c, llvm/bcimport.c).  The
	 * compiled code runs the imported body only when the scankey's
	 * fn_addr is that very function, and calls fn_addr otherwise.  Zero
	 * and empty: no import.
	 */
	uint32		bcproc;
	char		bcsym[BTJIT_BCSYM_LEN];
} BtjitColumnShape;

typedef struct BtjitShape
{
	uint16		nkeys;			/* key columns (INCLUDE columns excluded) */
	uint16		flags;			/* BTJIT_SHAPE_* options */
	BtjitColumnShape cols[BTJIT_MAX_KEYS];
} BtjitShape;

#endif							/* BTREE_JIT_SHAPE_H */
