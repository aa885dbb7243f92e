/*-------------------------------------------------------------------------
 *
 * compile_loader.c
 *	  Compile a key shape: link it from the object cache if another backend
 *	  compiled it, else load the compiler library (btree_jit_llvm.so) and
 *	  compile it, and store the object for the next backend.
 *
 * The compiler links LLVM; the rest of the module does not.  Preloading a
 * module that links LLVM maps LLVM into the postmaster and so into every
 * backend, and every backend then runs LLVM's static destructors at exit
 * (measured: about 0.3 M instructions per connection, 8% of a pgbench -S -C
 * backend's own work).  Loaded on demand, like the server's llvmjit.so, it
 * costs nothing to the backends that never compile, which are most short
 * connections (see btree_jit.compile_threshold).  Loading LLVM costs a
 * process 14-25 ms (its relocations and constructors), so a backend
 * whose shapes are all in the object cache never loads it either: those
 * objects are linked by objload.c.
 *
 * In background mode (btree_jit.compile_mode) a backend does not compile:
 * it queues the shape for the compile worker (compile_worker.c), which
 * compiles it with this same code in a child process, and links the object
 * once the worker has stored it.  Only the worker's children load LLVM
 * then, unless the worker is unavailable.
 *
 * A library that is missing or fails to load is a reason, not an error:
 * the indexes stay on the stock path and btree_jit_index_stats() says why.
 * A failed load is not retried in the same backend.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "portability/instr_time.h"

#include "btree_jit.h"

static BtjitCompiler btjit_compiler;
static bool btjit_compiler_loaded = false;
static char btjit_compiler_failure[256];

/* The library's file name, as dfmgr.c would resolve "$libdir/NAME". */
static void
btjit_compiler_path(char *path)
{
	snprintf(path, MAXPGPATH, "%s/%s%s", pkglib_path,
			 BTJIT_COMPILER_LIBRARY, DLSUFFIX);
}

/*
 * Load the library if this backend has not tried yet.  Returns false with
 * why[] if the compiler is unavailable.
 */
static bool
btjit_compiler_load(char *why, size_t whylen)
{
	char		path[MAXPGPATH];
	struct stat st;
	BtjitCompilerInitFn init;

	if (btjit_compiler_loaded)
		return true;
	if (btjit_compiler_failure[0] != '\0')
	{
		strlcpy(why, btjit_compiler_failure, whylen);
		return false;
	}

	btjit_compiler_path(path);
	if (stat(path, &st) != 0)
	{
		snprintf(btjit_compiler_failure, sizeof(btjit_compiler_failure),
				 "compiler library \"%s\" is not installed: %m", path);
		strlcpy(why, btjit_compiler_failure, whylen);
		return false;
	}

	/*
	 * If loading raises an error (an LLVM library the dynamic linker cannot
	 * find, say), the failure stays recorded and no later search retries.
	 */
	snprintf(btjit_compiler_failure, sizeof(btjit_compiler_failure),
			 "compiler library \"%s\" failed to load in this session", path);
	init = (BtjitCompilerInitFn)
		load_external_function(path, BTJIT_COMPILER_INIT, true, NULL);
	init(&btjit_compiler);
	btjit_compiler_failure[0] = '\0';
	btjit_compiler_loaded = true;
	return true;
}

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
					char *why, size_t whylen)
{
	const BtjitTemplate *tmpl;
	BtjitObjectNames names;
	BtjitServerBitcode bc;
	char	   *object = NULL;
	size_t		object_len = 0;
	instr_time	start,
				duration;
	BtjitCompileResult result = BTJIT_COMPILE_FAILED;
	BtjitCompileFault fault = (BtjitCompileFault) btjit_compile_fault;

	INSTR_TIME_SET_CURRENT(start);
	if (!btjit_template_read(&tmpl, why, whylen))
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
		char		qwhy[256];

		/* read before asking, so that no finished compile goes unseen */
		code->queued_generation = btjit_compile_generation_now();
		switch (btjit_worker_enqueue(shape, names.key, qwhy, sizeof(qwhy)))
		{
			case BTJIT_ENQUEUE_QUEUED:
				code->queued = true;
				result = BTJIT_COMPILE_QUEUED;
				goto done;
			case BTJIT_ENQUEUE_FAILED:
				snprintf(why, whylen, "the compile worker failed: %s", qwhy);
				goto done;
			case BTJIT_ENQUEUE_UNAVAILABLE:
				/* compile here, as in inline mode */
				if (btjit_log_compiles)
					ereport(LOG,
							(errmsg("btree_jit: compiling shape %s in this backend: %s",
									code->signature, qwhy)));
				break;
		}
	}

	if (fault == (BtjitCompileFault) BTJIT_COMPILE_FAULT_SLOW)
		fault = BTJIT_COMPILE_NORMAL;
	btjit_server_bitcode_for_compile(&bc);
	if (!btjit_compiler_load(why, whylen) ||
		!btjit_compiler.compile_shape(shape, tmpl, &bc, &names, fault,
									  code, &object, &object_len,
									  why, whylen))
		goto done;
	if (btjit_object_cache)
		btjit_object_cache_store(&names, object, object_len);
	pfree(object);
	result = BTJIT_COMPILE_OK;

done:
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	code->compile_ms = INSTR_TIME_GET_MILLISEC(duration);
	return result;
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
btjit_compile_poll(BtjitCode *code, char *why, size_t whylen)
{
	const BtjitTemplate *tmpl;
	BtjitObjectNames names;
	char		qwhy[256];
	instr_time	start,
				duration;

	Assert(code->queued);
	if (!btjit_template_read(&tmpl, why, whylen))
	{
		code->queued = false;
		return BTJIT_COMPILE_FAILED;
	}
	btjit_object_names(&code->shape, tmpl, &names);

	switch (btjit_worker_lookup(names.key, qwhy, sizeof(qwhy)))
	{
		case BTJIT_QUEUE_PENDING:
			return BTJIT_COMPILE_QUEUED;
		case BTJIT_QUEUE_FAILED:
			code->queued = false;
			snprintf(why, whylen, "the compile worker failed: %s", qwhy);
			return BTJIT_COMPILE_FAILED;
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
	return btjit_compile_shape(&code->shape, code, false, why, whylen);
}

/*
 * The compile worker loads the library once, so that each compile child it
 * forks inherits LLVM mapped and relocated instead of paying 14-25 ms to
 * load it again.  The worker runs none of LLVM's code beyond its
 * constructors.  A failure is recorded as for a backend (the children then
 * report it for each shape) and never raised.
 */
void
btjit_compiler_preload(void)
{
	char		why[MAXPGPATH + 128];
	MemoryContext oldcxt = CurrentMemoryContext;

	PG_TRY();
	{
		(void) btjit_compiler_load(why, sizeof(why));
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		EmitErrorReport();
		FlushErrorState();
	}
	PG_END_TRY();
}

/*
 * The compile worker's compile, in its child process: compile the shape and
 * store its object in the cache.  False with why[] if either fails: an
 * object that cannot be stored serves no backend.
 */
bool
btjit_compile_object(const BtjitShape *shape, char *why, size_t whylen)
{
	const BtjitTemplate *tmpl;
	BtjitObjectNames names;
	BtjitCode	code;
	char	   *object = NULL;
	size_t		object_len = 0;
	BtjitServerBitcode bc;
	BtjitCompileFault fault = (BtjitCompileFault) btjit_compile_fault;

	if (fault == (BtjitCompileFault) BTJIT_COMPILE_FAULT_SLOW)
		fault = BTJIT_COMPILE_NORMAL;
	memset(&code, 0, sizeof(code));
	if (!btjit_template_read(&tmpl, why, whylen))
		return false;
	btjit_object_names(shape, tmpl, &names);
	btjit_server_bitcode_for_compile(&bc);
	if (!btjit_compiler_load(why, whylen) ||
		!btjit_compiler.compile_shape(shape, tmpl, &bc, &names, fault,
									  &code, &object, &object_len,
									  why, whylen))
		return false;
	return btjit_object_cache_write(&names, object, object_len, why, whylen);
}

/* The IR or machine code of a shape, for btree_jit_explain(). */
char *
btjit_explain_shape(const BtjitShape *shape, bool assembly)
{
	const BtjitTemplate *tmpl;
	BtjitServerBitcode bc;
	char		why[MAXPGPATH + 128];

	btjit_server_bitcode_for_compile(&bc);
	if (!btjit_template_read(&tmpl, why, sizeof(why)) ||
		!btjit_compiler_load(why, sizeof(why)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("btree_jit: the compiler is not available"),
				 errdetail_internal("%s", why),
				 errhint("Check btree_jit.template_path, and that \"make install\" installed %s%s.",
						 BTJIT_COMPILER_LIBRARY, DLSUFFIX)));
	return btjit_compiler.explain_shape(shape, tmpl, &bc, assembly);
}
