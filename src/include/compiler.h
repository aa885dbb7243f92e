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
#include "target.h"
#include "why.h"

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
 * shape's, in backend memory and in shared memory); a "why" field is a
 * failure as the library hands it back (BtjitCompileOutput.reason,
 * BtjitServerBitcode.why) and as a shape's code keeps it.  A failure as it
 * is first described travels in a BtjitWhy (why.h), owned by the caller.
 */
#define BTJIT_OBJECT_KEY_LEN 17
#define BTJIT_SYMBOL_LEN 48
#define BTJIT_REASON_LEN 192
#define BTJIT_WHY_LEN 256

/*
 * Set or copy a failure's reason (why.h); as snprintf(why->text, ...), %m
 * included, and cut at the buffer's end.
 */
StaticAssertDecl(BTJIT_WHY_TEXT_LEN >= MAXPGPATH + 256,
				 "a reason must hold a file path and the words around it");

static inline void btjit_why_set(BtjitWhy *why, const char *fmt,...) pg_attribute_printf(2, 3);

static inline void
btjit_why_set(BtjitWhy *why, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(why->text, sizeof(why->text), fmt, ap);
	va_end(ap);
}

static inline void
btjit_why_copy(BtjitWhy *why, const char *text)
{
	strlcpy(why->text, text, sizeof(why->text));
}

/* ---- What a compile hands back ---- */
/*
 * A shape's code as linked into this process, by the compiler library or
 * by compile/objcache.c from a cached object: the plain page search (for
 * verify and the slow path), one entry per target that has a compiled one
 * (target.h), and the per-column bitcode tiers (below).
 */
typedef struct BtjitLinkedCode
{
	BtjitSearchFn search;		/* NULL: nothing linked */
	BtjitEntries entries;
	char		bcinfo[BTJIT_SIGNATURE_LEN];
} BtjitLinkedCode;

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

/*
 * FNV-1a, for the identities of files and shapes (compile/bitcode.c,
 * compile/objcache.c, llvm/specialise.c, runtime/jitcache.c): start from
 * BTJIT_FNV1A_BASIS.
 */
#define BTJIT_FNV1A_BASIS	UINT64CONST(0xcbf29ce484222325)

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

/*
 * A shape's object cache key and the names of its compiled functions: the
 * plain search, one entry per target with a template entry (target.h;
 * empty for the others), and the tiers' function.
 */
typedef struct BtjitObjectNames
{
	char		key[BTJIT_OBJECT_KEY_LEN];
	char		search[BTJIT_SYMBOL_LEN];	/* BtjitSearchFn */
	char		entries[BTJIT_NTARGETS][BTJIT_SYMBOL_LEN];
	char		bcinfo[BTJIT_SYMBOL_LEN];	/* BtjitBcInfoFn */
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
#define BTJIT_CODEGEN_REVISION "3"
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

/* What a compile is asked to do: shape in, names of its symbols out. */
typedef struct BtjitCompileRequest
{
	const BtjitShape *shape;
	const BtjitTemplate *tmpl;
	const BtjitServerBitcode *bc;
	const BtjitObjectNames *names;
	BtjitCompileFault fault;
} BtjitCompileRequest;

/* How a compile ended; every outcome but OK comes with a reason. */
typedef enum BtjitCompileOutcome
{
	BTJIT_COMPILED,				/* linked here; object file in hand */
	BTJIT_COMPILE_GUARD_RAISED, /* an earlier compile left the LLVM error
								 * guard raised: refused */
	BTJIT_COMPILE_BAD_TEMPLATE, /* the template or its specialisation */
	BTJIT_COMPILE_CODEGEN_FAILED,	/* LLVM's code generation */
	BTJIT_COMPILE_NO_MEMORY,	/* for the object file's copy */
	BTJIT_COMPILE_LINK_FAILED,	/* ORC's link or symbol lookup */
	BTJIT_COMPILER_UNAVAILABLE	/* the module could not load the library
								 * (never returned by the library) */
} BtjitCompileOutcome;

/* What a compile hands back: the outcome, the code, the object file. */
typedef struct BtjitCompileOutput
{
	BtjitCompileOutcome outcome;
	char		reason[BTJIT_WHY_LEN];	/* unless BTJIT_COMPILED */
	BtjitLinkedCode code;		/* BTJIT_COMPILED; bcinfo also on failure */
	char	   *object;			/* palloc'd object file, BTJIT_COMPILED */
	size_t		objlen;
} BtjitCompileOutput;

/*
 * What the compiler library offers, filled in by its BTJIT_COMPILER_INIT
 * function.  compile_shape specialises the template for the request's
 * shape, links the result into this backend under the request's names,
 * and hands back the object file for the cache; any failure of LLVM or
 * the template is an outcome with a reason.  It raises an error only for
 * the server's own reasons (out of memory, or the ERROR fault), and then
 * leaves the LLVM guard as it found it.  explain_shape returns palloc'd
 * text (optimised IR, or machine code if assembly) and raises an error if
 * it cannot.
 */
typedef struct BtjitCompiler
{
	BtjitCompileOutcome (*compile_shape) (const BtjitCompileRequest *request,
										  BtjitCompileOutput *output);
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
		BTJIT_NTARGETS, sizeof(BtjitLinkedCode),
		offsetof(BtjitLinkedCode, bcinfo),
		sizeof(BtjitCompileRequest), sizeof(BtjitCompileOutput),
		offsetof(BtjitCompileOutput, code), offsetof(BtjitCompileOutput, object),
		sizeof(BtjitServerBitcode), offsetof(BtjitServerBitcode, why),
		sizeof(BtjitTemplate), sizeof(BtjitObjectNames),
		sizeof(BtjitCompiler), offsetof(BtjitCompiler, explain_shape),
		BTJIT_SIGNATURE_LEN, BTJIT_WHY_LEN, BTJIT_REASON_LEN,
		BTJIT_COMPILE_FAULT_LLVM_FATAL, BTJIT_COMPILER_UNAVAILABLE
	};
	uint64		h = BTJIT_FNV1A_BASIS;

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
