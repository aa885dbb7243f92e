/*-------------------------------------------------------------------------
 *
 * compiler_lib.c
 *	  The compiler library, btree_jit_llvm.so: loaded on a process's first
 *	  compile, and the one place that calls into it.
 *
 * The compiler links LLVM; the rest of the module does not.  Preloading a
 * module that links LLVM maps LLVM into the postmaster and so into every
 * backend, and every backend then runs LLVM's static destructors at exit
 * (measured: about 0.3 M instructions per connection, 8% of a pgbench -S -C
 * backend's own work).  Loaded on demand, like the server's llvmjit.so, it
 * costs nothing to the processes that never compile, which are most short
 * connections (see btree_jit.compile_threshold) and, in background mode,
 * every backend: only the compile worker loads it (once, so that each
 * compile child it forks inherits LLVM mapped).  Loading LLVM costs a
 * process 14-25 ms (its relocations and constructors).
 *
 * A library that is missing or fails to load is a reason, not an error:
 * the indexes stay on the stock path and btree_jit_index_stats() says why.
 * A failed load is not retried in the same process.  So is a library of
 * another build than this module (an upgrade installed under a running
 * server): it is refused, with a LOG line, before anything of it but its
 * identity is called (compiler.h, BTJIT_COMPILER_ABI); cached objects still
 * link, and a restart loads the new pair.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "fmgr.h"
#include "miscadmin.h"

#include "compile/compile_int.h"

int			btjit_compile_fault = BTJIT_COMPILE_FAULT_SETTING_NONE;
bool		btjit_log_compiles = false;

static BtjitCompiler btjit_compiler;
static bool btjit_compiler_loaded = false;
static BtjitWhy btjit_compiler_failure;

/* The library's file name, as dfmgr.c would resolve "$libdir/NAME". */
static void
btjit_compiler_path(char *path)
{
	snprintf(path, MAXPGPATH, "%s/%s%s", pkglib_path,
			 BTJIT_COMPILER_LIBRARY, DLSUFFIX);
}

/*
 * Is the library at path the one built with this module (compiler.h,
 * BTJIT_COMPILER_ABI)?  Loads it (its constructors run) but calls nothing
 * else of it.  False with why: a package upgrade replaced it under a
 * running server, whose processes still run the old module.
 */
static bool
btjit_compiler_identity_matches(const char *path, BtjitWhy *why)
{
	BtjitCompilerAbiFn abi;
	const char *version;
	uint64		layout = 0;

	abi = (BtjitCompilerAbiFn)
		load_external_function(path, BTJIT_COMPILER_ABI, false, NULL);
	if (abi == NULL)
	{
		btjit_why_set(why,
					  "the compiler library on disk is of an older version than this server's btree_jit %s (it has no %s): restart the server",
					  BTJIT_VERSION, BTJIT_COMPILER_ABI);
		return false;
	}
	version = abi(&layout);
	if (strcmp(version, BTJIT_VERSION) != 0)
	{
		btjit_why_set(why,
					  "the compiler library on disk is version %.32s, this server runs %s: restart the server",
					  version, BTJIT_VERSION);
		return false;
	}
	if (layout != btjit_abi_layout())
	{
		btjit_why_set(why,
					  "the compiler library on disk is another build of version %s (interface %016llx, this server's is %016llx): restart the server",
					  BTJIT_VERSION, (unsigned long long) layout,
					  (unsigned long long) btjit_abi_layout());
		return false;
	}
	return true;
}

/*
 * Load the library if this process has not tried yet.  Returns false with
 * why if the compiler is unavailable.
 */
static bool
btjit_compiler_load(BtjitWhy *why)
{
	char		path[MAXPGPATH];
	struct stat st;
	BtjitCompilerInitFn init;

	if (btjit_compiler_loaded)
		return true;
	if (btjit_compiler_failure.text[0] != '\0')
	{
		*why = btjit_compiler_failure;
		return false;
	}

	btjit_compiler_path(path);
	if (stat(path, &st) != 0)
	{
		btjit_why_set(&btjit_compiler_failure,
					  "compiler library \"%s\" is not installed: %m", path);
		*why = btjit_compiler_failure;
		return false;
	}

	/*
	 * If loading raises an error (an LLVM library the dynamic linker cannot
	 * find, say), the failure stays recorded and no later search retries.
	 */
	btjit_why_set(&btjit_compiler_failure,
				  "compiler library \"%s\" failed to load in this session", path);
	if (!btjit_compiler_identity_matches(path, &btjit_compiler_failure))
	{
		*why = btjit_compiler_failure;
		ereport(LOG,
				(errmsg("btree_jit: refusing the compiler library: %s",
						btjit_compiler_failure.text)));
		return false;
	}
	init = (BtjitCompilerInitFn)
		load_external_function(path, BTJIT_COMPILER_INIT, true, NULL);
	init(&btjit_compiler);
	btjit_compiler_failure.text[0] = '\0';
	btjit_compiler_loaded = true;
	return true;
}

/* The library's share of btree_jit.compile_fault (the worker's is not). */
static BtjitCompileFault
btjit_library_fault(void)
{
	switch ((BtjitCompileFaultSetting) btjit_compile_fault)
	{
		case BTJIT_COMPILE_FAULT_SETTING_ERROR:
			return BTJIT_COMPILE_FAULT_ERROR;
		case BTJIT_COMPILE_FAULT_SETTING_LLVM_FATAL:
			return BTJIT_COMPILE_FAULT_LLVM_FATAL;
		case BTJIT_COMPILE_FAULT_SETTING_NONE:
		case BTJIT_COMPILE_FAULT_SETTING_SLOW:
			break;
	}
	return BTJIT_COMPILE_NORMAL;
}

/*
 * Compile a shape in this process: load the library if need be, and let it
 * specialise the template into out's object file and entry points.  False,
 * with out's outcome and reason, if the library is unavailable or the
 * compile failed.
 */
bool
btjit_compile_here(const BtjitShape *shape, const BtjitTemplate *tmpl,
				   const BtjitObjectNames *names, BtjitCompileOutput *out)
{
	BtjitServerBitcode bc;
	BtjitCompileRequest request;
	BtjitWhy	why;

	memset(out, 0, sizeof(*out));
	btjit_server_bitcode_for_compile(&bc);
	if (!btjit_compiler_load(&why))
	{
		out->outcome = BTJIT_COMPILER_UNAVAILABLE;
		strlcpy(out->reason, why.text, sizeof(out->reason));
		return false;
	}
	request.shape = shape;
	request.tmpl = tmpl;
	request.bc = &bc;
	request.names = names;
	request.fault = btjit_library_fault();
	return btjit_compiler.compile_shape(&request, out) == BTJIT_COMPILED;
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
	BtjitWhy	why;
	MemoryContext oldcxt = CurrentMemoryContext;

	PG_TRY();
	{
		(void) btjit_compiler_load(&why);
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
 * store its object in the cache.  False with why if either fails: an
 * object that cannot be stored serves no backend.
 */
BtjitObjectOutcome
btjit_compile_object(const BtjitShape *shape, BtjitWhy *why)
{
	const BtjitTemplate *tmpl;
	BtjitObjectNames names;
	BtjitCompileOutput out;

	if (!btjit_template_read(&tmpl, why))
		return BTJIT_OBJECT_COMPILE_FAILED;
	btjit_object_names(shape, tmpl, &names);
	if (!btjit_compile_here(shape, tmpl, &names, &out))
	{
		btjit_why_copy(why, out.reason);
		return BTJIT_OBJECT_COMPILE_FAILED;
	}
	if (!btjit_object_cache_write(&names, out.object, out.objlen, why))
		return BTJIT_OBJECT_STORE_FAILED;
	return BTJIT_OBJECT_STORED;
}

/* The IR or machine code of a shape, for btree_jit_explain(). */
char *
btjit_explain_shape(const BtjitShape *shape, bool assembly)
{
	const BtjitTemplate *tmpl;
	BtjitServerBitcode bc;
	BtjitWhy	why;

	btjit_server_bitcode_for_compile(&bc);
	if (!btjit_template_read(&tmpl, &why) ||
		!btjit_compiler_load(&why))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("btree_jit: the compiler is not available"),
				 errdetail_internal("%s", why.text),
				 errhint("Check btree_jit.template_path, and that \"make install\" installed %s%s.",
						 BTJIT_COMPILER_LIBRARY, DLSUFFIX)));
	return btjit_compiler.explain_shape(shape, tmpl, &bc, assembly);
}
