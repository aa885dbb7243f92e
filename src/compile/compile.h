/*-------------------------------------------------------------------------
 *
 * compile.h
 *	  The compile layer: getting machine code for a key shape without
 *	  linking LLVM.  What the layers above (src/runtime/, src/stats/ and
 *	  start-up) may call.
 *
 *	  policy.c		where a shape's code comes from: the object cache,
 *					the compile worker's queue, or a compile here
 *	  worker.c		the compile queue in shared memory and the
 *					background worker that serves it
 *	  compiler_lib.c  the compiler library (btree_jit_llvm.so), loaded on
 *					first need; the one place that calls into it
 *	  objcache.c	the template's identity; compiled objects on disk
 *	  objload.c		link a cached object without LLVM (objload.h; no
 *					PostgreSQL headers)
 *	  bitcode.c		the identity of the server's bitcode that imports
 *					come from
 *
 * Dependencies point down: policy.c -> worker.c -> compiler_lib.c ->
 * objcache.c -> objload.c, bitcode.c.  compile_int.h declares what the
 * files of this layer share among themselves.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_COMPILE_H
#define BTREE_JIT_COMPILE_H

#include "datatype/timestamp.h"
#include "port/atomics.h"

#include "compiler.h"
#include "shape.h"

#pragma GCC visibility push(hidden)

/* ---- Settings (defined in the file that reads them) ---- */
typedef enum BtjitCompileMode
{
	BTJIT_COMPILE_MODE_BACKGROUND = 0,	/* the compile worker compiles */
	BTJIT_COMPILE_MODE_INLINE	/* the backend that needs the shape */
} BtjitCompileMode;

/*
 * btree_jit.compile_fault, a test hook: the library's own faults
 * (compiler.h), and one of the compile worker's, which the library never
 * sees: the worker's child sleeps 3 s before compiling, so that tests can
 * kill it in the middle.
 */
typedef enum BtjitCompileFaultSetting
{
	BTJIT_COMPILE_FAULT_SETTING_NONE,
	BTJIT_COMPILE_FAULT_SETTING_ERROR,
	BTJIT_COMPILE_FAULT_SETTING_LLVM_FATAL,
	BTJIT_COMPILE_FAULT_SETTING_SLOW
} BtjitCompileFaultSetting;

extern int	btjit_compile_mode;		/* BtjitCompileMode; policy.c */
extern int	btjit_compile_fault;	/* BtjitCompileFaultSetting;
									 * compiler_lib.c */
extern bool btjit_log_compiles; /* compiler_lib.c */
extern bool btjit_object_cache; /* objcache.c */
extern int	btjit_compile_queue_size;	/* worker.c */
extern int	btjit_object_cache_max_files;	/* objcache.c */
extern char *btjit_template_path;	/* objcache.c */
extern char *btjit_server_bitcode_path; /* bitcode.c */

/* ---- Code for a shape (policy.c) ---- */

/*
 * Which entry of the compile worker's queue holds a queued shape (slot),
 * and which shape it held then (seq: slots are reused), so that a backend
 * can add to its demand without a search (worker.c).
 */
typedef struct BtjitQueueTicket
{
	int			slot;			/* -1: none */
	uint64		seq;
} BtjitQueueTicket;

/*
 * A shape's code in this backend (runtime/jitcache.c keeps one per shape):
 * what was linked, how, and, while there is none, why.  The compiler
 * library never sees it: it fills a BtjitCompileOutput (compiler.h).
 */
typedef struct BtjitCode
{
	uint32		hash;			/* of the shape */
	BtjitShape	shape;
	char		signature[BTJIT_SIGNATURE_LEN];
	BtjitLinkedCode linked;		/* linked.search NULL: none (yet) */
	double		compile_ms;		/* to compile, or to load from the cache */
	bool		from_object_cache;	/* loaded, not compiled, here */
	char		failure[BTJIT_WHY_LEN];	/* why compilation failed */
	bool		queued;			/* no code: the compile worker has it */
	uint64		queued_generation;	/* compile generation last looked at */
	BtjitQueueTicket queue_ticket;	/* while queued */
	TimestampTz failed_at;		/* when the code went by a failure */
	struct BtjitCode *next;
} BtjitCode;


/*
 * Get code for a shape (entry points, compile_ms, from_object_cache): from
 * the object cache, else queued for the compile worker (background mode),
 * else compiled here; or fail with why.  Raises no error for anything
 * LLVM, the template or the object cache does (only for the server's own
 * reasons, such as running out of memory).  btjit_compile_poll asks again
 * about a queued shape.
 */
typedef enum BtjitCompileResult
{
	BTJIT_COMPILE_OK,
	BTJIT_COMPILE_FAILED,		/* a compile or link here failed: why */
	BTJIT_COMPILE_FAILED_BY_WORKER, /* the compile worker failed the shape
									 * (and logged it once): why */
	BTJIT_COMPILE_QUEUED,
	BTJIT_COMPILE_NOT_CACHED	/* a parallel worker: not in the object
								 * cache, and not compiled here: why */
} BtjitCompileResult;

extern BtjitCompileResult btjit_compile_shape(const BtjitShape *shape,
											  BtjitCode *code, bool inline_only,
											  BtjitWhy *why);
extern BtjitCompileResult btjit_compile_poll(BtjitCode *code,
											 BtjitWhy *why);
extern void btjit_compile_demand(BtjitCode *code, uint64 searches);

/*
 * A shape that failed to compile (in the worker or in a backend) is
 * refused this long, then tried again: a passing cause (a full disk, a
 * killed compile, a compiler library from another build) must not keep it
 * on the stock path until the server restarts.
 */
#define BTJIT_FAILED_RETRY_SECS	300

/*
 * A backend reports the stock searches of a queued index to the compile
 * queue every this many searches (the worker compiles the busiest shape
 * first: worker.c, "Demand").
 */
#define BTJIT_DEMAND_REPORT_SEARCHES	1024

/* For btree_jit_explain(): raises an error if the shape cannot compile. */
extern char *btjit_explain_shape(const BtjitShape *shape, bool assembly);

/* ---- Start-up, in the postmaster ---- */
/*
 * The addresses of the module's callbacks that compiled code calls
 * (code_abi.h), given by the layer that defines them, so that a cached
 * object links without a dlsym of them and this layer calls nothing above.
 */
typedef struct BtjitCallbackAddresses
{
	void	   *declined[BTJIT_NTARGETS];	/* by target, as targetlist.h
											 * names them */
	void	   *block_hints;	/* &btjit_block_hints */
	void	   *build_compares; /* &btjit_build_compares */
} BtjitCallbackAddresses;

extern void btjit_objcache_preload(const BtjitCallbackAddresses *callbacks);	/* objcache.c */
extern void btjit_server_bitcode_preload(void); /* bitcode.c */
/*
 * worker.c: the queue's shared memory, and the worker itself when the
 * module is active (an inactive module compiles nothing).
 */
extern void btjit_worker_register(bool module_active);

/* ---- The compile worker (worker.c) ---- */
typedef struct BtjitWorkerStatus
{
	int			worker_pid;		/* 0: not running */
	int			queue_length;	/* queued or being compiled */
	uint64		compiles;
	uint64		failures;
	uint64		queue_full;
	double		last_compile_ms;
	TimestampTz last_compile_at;	/* 0: none yet */
	uint64		generation;
} BtjitWorkerStatus;

extern void btjit_worker_status(BtjitWorkerStatus *out);

/*
 * Bumped (in shared memory) each time the worker finishes a shape; a
 * backend with queued indexes compares it with the value it last saw, on
 * the dispatcher's stock path only.
 */
extern pg_atomic_uint64 *btjit_compile_generation;

static inline uint64
btjit_compile_generation_now(void)
{
	return btjit_compile_generation != NULL ?
		pg_atomic_read_u64(btjit_compile_generation) : 0;
}

#pragma GCC visibility pop

#endif							/* BTREE_JIT_COMPILE_H */
