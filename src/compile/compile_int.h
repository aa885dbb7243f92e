/*-------------------------------------------------------------------------
 *
 * compile_int.h
 *	  What the files of the compile layer share among themselves; the
 *	  layers above see compile.h only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_COMPILE_INT_H
#define BTREE_JIT_COMPILE_INT_H

#include "port/pg_crc32c.h"

#include "compile/compile.h"

#pragma GCC visibility push(hidden)

/* ---- The template and the object cache (objcache.c) ---- */
extern bool btjit_template_read(const BtjitTemplate **tmpl, BtjitWhy *why);
extern void btjit_object_names(const BtjitShape *shape,
							   const BtjitTemplate *tmpl,
							   BtjitObjectNames *names);
extern bool btjit_object_cache_load(const BtjitObjectNames *names,
									BtjitCode *code);
extern void btjit_object_cache_store(const BtjitObjectNames *names,
									 const char *data, size_t len);
extern bool btjit_object_cache_write(const BtjitObjectNames *names,
									 const char *data, size_t len,
									 BtjitWhy *why);
extern bool btjit_object_cache_exists(const BtjitObjectNames *names);
extern bool btjit_object_cache_file_exists(const char *key);
extern int	btjit_object_cache_count(void);
extern void btjit_object_cache_dir(char *path);
extern void btjit_object_cache_clean(void);
extern int	btjit_object_cache_evictions_in_use(void);
extern void btjit_object_cache_set_pins(bool (*pinned) (const char *key));
extern pg_crc32c btjit_cache_file_crc(const void *header, size_t header_size,
									  size_t crc_offset, const void *payload,
									  size_t len);

/* ---- The server's bitcode, for imports (bitcode.c) ---- */
extern const BtjitServerBitcode *btjit_server_bitcode(void);
extern void btjit_server_bitcode_for_compile(BtjitServerBitcode *bc);

/* ---- The compiler library (compiler_lib.c) ---- */

/*
 * Compile the shape in this process with the library (loaded on first
 * need): out gets the outcome, the object file (palloc'd ELF bytes) and
 * the entry points.
 */
extern bool btjit_compile_here(const BtjitShape *shape,
							   const BtjitTemplate *tmpl,
							   const BtjitObjectNames *names,
							   BtjitCompileOutput *out);

/* The worker's compile, in its child: compile and store the object. */
/* What btjit_compile_object did (the compile worker's child). */
typedef enum BtjitObjectOutcome
{
	BTJIT_OBJECT_STORED,		/* compiled, and in the object cache */
	BTJIT_OBJECT_COMPILE_FAILED,	/* why */
	BTJIT_OBJECT_STORE_FAILED	/* compiled, but not stored (a full disk,
								 * an unwritable directory): why */
} BtjitObjectOutcome;

extern BtjitObjectOutcome btjit_compile_object(const BtjitShape *shape,
											   BtjitWhy *why);
extern void btjit_compiler_preload(void);

/* ---- The compile queue (worker.c) ---- */
typedef enum BtjitEnqueueResult
{
	BTJIT_ENQUEUE_QUEUED,		/* queued now, or already */
	BTJIT_ENQUEUE_FAILED,		/* the worker failed this shape: why */
	BTJIT_ENQUEUE_UNAVAILABLE	/* no worker or no room: why */
} BtjitEnqueueResult;

typedef enum BtjitQueueStatus
{
	BTJIT_QUEUE_PENDING,		/* queued or being compiled */
	BTJIT_QUEUE_FAILED,			/* why */
	BTJIT_QUEUE_UNSTORED,		/* the worker could not store its object:
								 * compile here (why) */
	BTJIT_QUEUE_ABSENT			/* done (or lost): look in the object cache */
} BtjitQueueStatus;

extern BtjitEnqueueResult btjit_worker_enqueue(const BtjitShape *shape,
											   const char *key,
											   BtjitQueueTicket *ticket,
											   BtjitWhy *why);
extern void btjit_worker_demand(const BtjitQueueTicket *ticket,
								uint64 searches);
extern BtjitQueueStatus btjit_worker_lookup(const char *key, BtjitWhy *why);

#pragma GCC visibility pop

#endif							/* BTREE_JIT_COMPILE_INT_H */
