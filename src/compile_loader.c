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
 * Compile a shape for this backend: link it from the object cache, else
 * compile it with the library and store the object for other backends.
 * Records the time it took in code->compile_ms either way.
 */
bool
btjit_compile_shape(const BtjitShape *shape, BtjitCode *code,
					char *why, size_t whylen)
{
	const BtjitTemplate *tmpl;
	BtjitObjectNames names;
	BtjitServerBitcode bc;
	char	   *object = NULL;
	size_t		object_len = 0;
	instr_time	start,
				duration;
	bool		ok = false;

	INSTR_TIME_SET_CURRENT(start);
	if (!btjit_template_read(&tmpl, why, whylen))
		goto done;
	btjit_object_names(shape, tmpl, &names);

	if (btjit_object_cache && btjit_object_cache_load(&names, code))
	{
		code->from_object_cache = true;
		ok = true;
		goto done;
	}

	btjit_server_bitcode_for_compile(&bc);
	if (!btjit_compiler_load(why, whylen) ||
		!btjit_compiler.compile_shape(shape, tmpl, &bc, &names,
									  (BtjitCompileFault) btjit_compile_fault,
									  code, &object, &object_len,
									  why, whylen))
		goto done;
	if (btjit_object_cache)
		btjit_object_cache_store(&names, object, object_len);
	pfree(object);
	ok = true;

done:
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	code->compile_ms = INSTR_TIME_GET_MILLISEC(duration);
	return ok;
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
