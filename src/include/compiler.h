/*-------------------------------------------------------------------------
 *
 * compiler.h
 *	  The interface between the module and its compiler library,
 *	  btree_jit_llvm.so (the files of src/llvm/: specialise.c, bcimport.c,
 *	  llvm_bitcode.cpp, llvm_error.cpp).
 *
 * The library links LLVM and is loaded by compile/compiler_lib.c on a
 * process's first compile; everything the two sides exchange is declared
 * here, and the library includes nothing else of the module's but the
 * headers of src/include/ (shape.h, code_abi.h).  This is
 * the split PostgreSQL makes between jit.h (what the server sees) and
 * llvmjit.h (the provider's own).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_COMPILER_H
#define BTREE_JIT_COMPILER_H

#include "datatype/timestamp.h"

#include "code_abi.h"
#include "shape.h"

/*
 * Internal to whichever library includes it: hidden symbols are reached
 * without a GOT load.  (PostgreSQL 15's PGDLLEXPORT does not set
 * visibility, hence the pragma.)
 */
#pragma GCC visibility push(hidden)

/*
 * Buffer lengths shared by the module and the library.  An object key is
 * 16 hex digits of a 64-bit hash; a symbol is an entry point's name in a
 * compiled object; a reason is kept with a state (an index's, a failed
 * shape's, in backend memory and in shared memory); a "why" buffer holds a
 * failure as it is first described.
 */
#define BTJIT_OBJECT_KEY_LEN 17
#define BTJIT_SYMBOL_LEN 48
#define BTJIT_REASON_LEN 192
#define BTJIT_WHY_LEN 256

/* ---- A compiled shape (filled by llvm/specialise.c or compile/objcache.c) ---- */
/*
 * Which entry of the compile worker's queue holds a queued shape (slot),
 * and which shape it held then (seq: slots are reused), so that a backend
 * can add to its demand without a search (compile/worker.c).
 */
typedef struct BtjitQueueTicket
{
	int			slot;			/* -1: none */
	uint64		seq;
} BtjitQueueTicket;

typedef struct BtjitCode
{
	uint32		hash;			/* of the shape */
	BtjitShape	shape;
	char		signature[BTJIT_SIGNATURE_LEN];
	BtjitSearchFn fn;			/* NULL if compilation failed */
	BtjitEntryFn entry;			/* fused entry; set with fn */
	BtjitCompareEntryFn cmp_entry;	/* compiled _bt_compare; set with fn */
	BtjitInsertEntryFn ins_entry;	/* compiled _bt_binsrch_insert; likewise */
	BtjitCheckEntryFn chk_entry;	/* compiled _bt_checkkeys; likewise */
	double		compile_ms;		/* to compile, or to load from the cache */
	bool		from_object_cache;	/* loaded, not compiled, here */
	char		failure[BTJIT_WHY_LEN];	/* why compilation failed */
	char		bcinfo[BTJIT_SIGNATURE_LEN];	/* per-column bitcode tiers
												 * (below) */
	bool		queued;			/* fn NULL: the compile worker has it */
	uint64		queued_generation;	/* compile generation last looked at */
	BtjitQueueTicket queue_ticket;	/* while queued */
	TimestampTz failed_at;		/* when fn became NULL by a failure */
	struct BtjitCode *next;
} BtjitCode;

/*
 * The compiler's verdict on each column of a shape for importing the
 * column's proc from the server's bitcode (BtjitColumnShape.bcsym), as a
 * string: BTJIT_MAX_KEYS characters, one per column, then the reason of the
 * first refusal.  The compiled object carries it too (a function returning
 * it, BtjitObjectNames.bcinfo), so a backend linking a cached object knows
 * it without LLVM.
 */
#define BTJIT_BC_NONE		'-' /* no import named: called, or inline */
#define BTJIT_BC_IMPORTED	'B' /* the body is imported, behind its guard */
#define BTJIT_BC_REFUSED	'C' /* named but not importable: called */
typedef const char *(*BtjitBcInfoFn) (void);

/*
 * The server's bitcode ($pkglibdir/bitcode, or btree_jit.server_bitcode_path
 * for tests), identified once per path (compile/bitcode.c): the running binary's
 * build-id and the bytes of postgres.index.bc.  The identity is part of the
 * object cache key of every shape that names an import; the compiler
 * imports only from an index whose bytes still hash to index_hash, and not
 * at all when usable is false.
 */
typedef struct BtjitServerBitcode
{
	char		dir[1024];		/* the bitcode directory */
	uint64		identity;		/* build-id and index; for the object key */
	uint64		index_hash;		/* of postgres.index.bc's bytes */
	bool		usable;			/* false: why[] */
	char		why[BTJIT_WHY_LEN];
} BtjitServerBitcode;

/* FNV-1a, for the identities of files (compile/bitcode.c, llvm/specialise.c). */
static inline uint64
btjit_fnv1a(uint64 h, const void *data, size_t len)
{
	const unsigned char *p = (const unsigned char *) data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * UINT64CONST(0x100000001b3);
	return h;
}

/* ---- The bitcode template, as read by compile/objcache.c ---- */
typedef struct BtjitTemplate
{
	const char *path;
	const char *data;			/* the bitcode file's bytes */
	size_t		len;
	uint64		hash;			/* of the bytes */
} BtjitTemplate;

/* A shape's object cache key and the names of its compiled functions. */
typedef struct BtjitObjectNames
{
	char		key[BTJIT_OBJECT_KEY_LEN];
	char		search[BTJIT_SYMBOL_LEN];		/* BtjitSearchFn */
	char		entry[BTJIT_SYMBOL_LEN];		/* BtjitEntryFn */
	char		compare[BTJIT_SYMBOL_LEN];	/* BtjitCompareEntryFn */
	char		insert[BTJIT_SYMBOL_LEN];		/* BtjitInsertEntryFn */
	char		check[BTJIT_SYMBOL_LEN];		/* BtjitCheckEntryFn */
	char		bcinfo[BTJIT_SYMBOL_LEN];		/* BtjitBcInfoFn */
} BtjitObjectNames;

/*
 * The code generator's settings (llvm/specialise.c), part of the object
 * cache key: the optimisation pipeline, and LLVM's JIT code model, which
 * makes every symbol reference an absolute 64-bit one (what objload.c
 * expects).  The revision is not the extension's version: bump it when the
 * code generator changes in a way that neither the template's bytes nor
 * the settings named here show, so that no older object is linked.
 */
#define BTJIT_PASSES "function(sccp,simplifycfg),default<O2>"
#define BTJIT_CODEGEN_REVISION "2"
#define BTJIT_CODEGEN_ID "btree_jit codegen " BTJIT_CODEGEN_REVISION " " \
	BTJIT_PASSES " jit-code-model bcimport"

/*
 * Test hook (btree_jit.compile_fault, a superuser-only setting hidden from
 * SHOW ALL): make a compile fail inside the LLVM fatal-error guard, either
 * with an ERROR (as a failed palloc would) or with an LLVM fatal error.
 */
typedef enum BtjitCompileFault
{
	BTJIT_COMPILE_NORMAL = 0,
	BTJIT_COMPILE_FAULT_ERROR,	/* ereport(ERROR) inside the guard */
	BTJIT_COMPILE_FAULT_LLVM_FATAL	/* llvm::report_fatal_error() */
} BtjitCompileFault;

/*
 * What the compiler library offers, filled in by its BTJIT_COMPILER_INIT
 * function.  compile_shape specialises tmpl for shape, links the result
 * into this backend under names, and returns the object file as palloc'd
 * bytes for the cache; on any failure of LLVM or the template it returns
 * false with why[].  It raises an error only for the server's own reasons
 * (out of memory, or the ERROR fault), and then leaves the LLVM guard as it
 * found it.  explain_shape returns palloc'd text (optimised IR, or machine
 * code if assembly) and raises an error if it cannot.
 */
typedef struct BtjitCompiler
{
	bool		(*compile_shape) (const BtjitShape *shape,
								  const BtjitTemplate *tmpl,
								  const BtjitServerBitcode *bc,
								  const BtjitObjectNames *names,
								  BtjitCompileFault fault,
								  BtjitCode *code, char **object,
								  size_t *objlen, char *why, size_t whylen);
	char	   *(*explain_shape) (const BtjitShape *shape,
								  const BtjitTemplate *tmpl,
								  const BtjitServerBitcode *bc,
								  bool assembly);
} BtjitCompiler;

#define BTJIT_COMPILER_LIBRARY "btree_jit_llvm"
#define BTJIT_COMPILER_INIT "btjit_compiler_init"
typedef void (*BtjitCompilerInitFn) (BtjitCompiler *compiler);

/*
 * The interface's identity.  A package upgrade replaces btree_jit.so and
 * btree_jit_llvm.so on disk under a running server, whose processes keep
 * the old module mapped; the first process to load the library afterwards
 * would load the new one into the old module.  So the library exports
 * BTJIT_COMPILER_ABI, which returns the module version it was built as
 * (BTJIT_VERSION) and sets *layout to btjit_abi_layout() as it was
 * compiled there, and compile/compiler_lib.c refuses a library whose
 * version or layout is not its own, before calling anything else of it.
 * The function's signature never changes.  The layout is a hash of the
 * sizes and offsets of what the two sides exchange and of the code
 * generator's identity: a change to any structure above changes it.
 * objcache.c writes the same identity into every object's header.
 */
#define BTJIT_COMPILER_ABI "btjit_compiler_abi"
typedef const char *(*BtjitCompilerAbiFn) (uint64 *layout);

static inline uint64
btjit_abi_layout(void)
{
	const uint64 layout[] = {
		sizeof(BtjitShape), sizeof(BtjitColumnShape), BTJIT_MAX_KEYS,
		sizeof(BtjitCode), offsetof(BtjitCode, fn),
		offsetof(BtjitCode, compile_ms), offsetof(BtjitCode, failure),
		offsetof(BtjitCode, bcinfo), offsetof(BtjitCode, next),
		sizeof(BtjitServerBitcode), offsetof(BtjitServerBitcode, why),
		sizeof(BtjitTemplate), sizeof(BtjitObjectNames),
		sizeof(BtjitCompiler), offsetof(BtjitCompiler, explain_shape),
		BTJIT_SIGNATURE_LEN, BTJIT_WHY_LEN, BTJIT_REASON_LEN,
		BTJIT_COMPILE_FAULT_LLVM_FATAL
	};
	uint64		h = UINT64CONST(0xcbf29ce484222325);

	h = btjit_fnv1a(h, layout, sizeof(layout));
	return btjit_fnv1a(h, BTJIT_CODEGEN_ID, strlen(BTJIT_CODEGEN_ID));
}

/*
 * ---- LLVM fatal-error guard (llvm_error.cpp, inside the library) ----
 * Between enter and leave, LLVM's fatal errors and failed allocations end
 * the session with FATAL instead of aborting the server.  Calls nest; every
 * enter must be matched by a leave on every path, the error path included
 * (llvm/specialise.c leaves in PG_FINALLY).  The depth is 0 outside the library's
 * entry points.
 */
extern void btjit_llvm_enter_guard(void);
extern void btjit_llvm_leave_guard(void);
extern int	btjit_llvm_guard_depth(void);
/* For BTJIT_COMPILE_FAULT_LLVM_FATAL: raise an LLVM fatal error. */
extern void btjit_llvm_raise_fatal_error(const char *reason);

#pragma GCC visibility pop

#endif							/* BTREE_JIT_COMPILER_H */
