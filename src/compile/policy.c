/*-------------------------------------------------------------------------
 *
 * policy.c
 *	  Where a key shape's code comes from: linked from the object cache if
 *	  any process compiled it, else queued for the compile worker
 *	  (background mode), else compiled by this backend with the compiler
 *	  library, and stored for the next backend.
 *
 * In background mode (btree_jit.compile_mode) a backend does not compile:
 * it queues the shape for the compile worker (worker.c), which compiles it
 * in a child process, and links the object once the worker has stored it.
 * Only the worker's children load LLVM then, unless the worker is
 * unavailable (not running, queue full), or the object cache is off (the
 * worker hands its code over through the cache), or btree_jit_compile()
 * asks for the code now.  A parallel worker never compiles: it links what
 * is cached and leaves the rest on the stock path for its one query.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "miscadmin.h"
#include "portability/instr_time.h"

#include "compile/compile_int.h"

int			btjit_compile_mode = BTJIT_COMPILE_MODE_BACKGROUND;

/*
 * Code for a shape in this backend: link it from the object cache; else, in
 * background mode, queue it for the compile worker and return QUEUED (the
 * index stays on the stock path meanwhile); else compile it here and store
 * the object for other backends.  A worker that is not running or a full
 * queue fall back to compiling here; a shape the worker failed is failed
 * here too, without another attempt.  inline_only (btree_jit_compile())
 * skips the worker.  Records the time it took in code->compile_ms.
 */
BtjitCompileResult
btjit_compile_shape(const BtjitShape *shape, BtjitCode *code, bool inline_only,
					BtjitWhy *why)
{
	const BtjitTemplate *tmpl;
	BtjitObjectNames names;
	BtjitCompileOutput out;
	instr_time	start,
				duration;
	BtjitCompileResult result = BTJIT_COMPILE_FAILED;

	INSTR_TIME_SET_CURRENT(start);
	if (!btjit_template_read(&tmpl, why))
		goto done;
	btjit_object_names(shape, tmpl, &names);

	if (btjit_object_cache && btjit_object_cache_load(&names, code))
	{
		code->from_object_cache = true;
		result = BTJIT_COMPILE_OK;
		goto done;
	}

	/*
	 * The worker hands its code over through the object cache, so without
	 * the cache there is nothing it can do for us.
	 */
	if (!inline_only && btjit_object_cache &&
		btjit_compile_mode == BTJIT_COMPILE_MODE_BACKGROUND)
	{
		BtjitWhy	qwhy;

		/* read before asking, so that no finished compile goes unseen */
		code->queued_generation = btjit_compile_generation_now();
		switch (btjit_worker_enqueue(shape, names.key, &code->queue_ticket,
									 &qwhy))
		{
			case BTJIT_ENQUEUE_QUEUED:
				code->queued = true;
				result = BTJIT_COMPILE_QUEUED;
				goto done;
			case BTJIT_ENQUEUE_FAILED:
				btjit_why_set(why, "the compile worker failed: %s", qwhy.text);
				result = BTJIT_COMPILE_FAILED_BY_WORKER;
				goto done;
			case BTJIT_ENQUEUE_UNAVAILABLE:
				/* compile here, as in inline mode */
				if (btjit_log_compiles)
					ereport(LOG,
							(errmsg("btree_jit: compiling shape %s in this backend: %s",
									code->signature, qwhy.text)));
				break;
		}
	}

	/*
	 * A parallel worker lives for one query: a compile of half a second in
	 * each worker of each query would cost more than it saves.  What its
	 * leader compiled, or the compile worker, is in the object cache.
	 */
	if (IsParallelWorker())
	{
		btjit_why_set(why, "not in the object cache, and a parallel worker does not compile");
		result = BTJIT_COMPILE_NOT_CACHED;
		goto done;
	}

	if (!btjit_compile_here(shape, tmpl, &names, &out))
	{
		btjit_why_copy(why, out.reason);
		goto done;
	}
	code->linked = out.code;
	if (btjit_object_cache)
		btjit_object_cache_store(&names, out.object, out.objlen);
	pfree(out.object);
	result = BTJIT_COMPILE_OK;

done:
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	code->compile_ms = INSTR_TIME_GET_MILLISEC(duration);
	return result;
}

/*
 * Searches of an index waiting for this queued shape, for the worker's
 * choice of what to compile next.
 */
void
btjit_compile_demand(BtjitCode *code, uint64 searches)
{
	if (code->queued)
		btjit_worker_demand(&code->queue_ticket, searches);
}

/*
 * A queued shape, after the compile generation moved: linked from the
 * object cache if the worker stored it, failed if the worker failed it,
 * else still queued.  A shape neither queued nor in the cache (its entry
 * was lost when the worker's shared memory was reinitialised, or the file
 * was removed) is handed to btjit_compile_shape again.  The caller has set
 * code->queued_generation to the generation read before calling.
 */
BtjitCompileResult
btjit_compile_poll(BtjitCode *code, BtjitWhy *why)
{
	const BtjitTemplate *tmpl;
	BtjitObjectNames names;
	BtjitWhy	qwhy;
	instr_time	start,
				duration;

	Assert(code->queued);
	if (!btjit_template_read(&tmpl, why))
	{
		code->queued = false;
		return BTJIT_COMPILE_FAILED;
	}
	btjit_object_names(&code->shape, tmpl, &names);

	switch (btjit_worker_lookup(names.key, &qwhy))
	{
		case BTJIT_QUEUE_PENDING:
			return BTJIT_COMPILE_QUEUED;
		case BTJIT_QUEUE_FAILED:
			code->queued = false;
			btjit_why_set(why, "the compile worker failed: %s", qwhy.text);
			return BTJIT_COMPILE_FAILED_BY_WORKER;
		case BTJIT_QUEUE_UNSTORED:
			/* as when enqueueing finds it so: compile it here */
			if (btjit_log_compiles)
				ereport(LOG,
						(errmsg("btree_jit: compiling shape %s in this backend: the compile worker could not store it: %s",
								code->signature, qwhy.text)));
			code->queued = false;
			return btjit_compile_shape(&code->shape, code, true, why);
		case BTJIT_QUEUE_ABSENT:
			break;
	}

	INSTR_TIME_SET_CURRENT(start);
	if (btjit_object_cache && btjit_object_cache_load(&names, code))
	{
		INSTR_TIME_SET_CURRENT(duration);
		INSTR_TIME_SUBTRACT(duration, start);
		code->compile_ms = INSTR_TIME_GET_MILLISEC(duration);
		code->from_object_cache = true;
		code->queued = false;
		return BTJIT_COMPILE_OK;
	}
	code->queued = false;
	return btjit_compile_shape(&code->shape, code, false, why);
}
