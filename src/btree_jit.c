/*-------------------------------------------------------------------------
 *
 * btree_jit.c
 *	  The module's entry: _PG_init defines every btree_jit.* setting and
 *	  starts each layer, in the postmaster.
 *
 * Each setting's variable lives in the file that reads it (declared in its
 * layer's header); this file only defines the settings, in one place, and
 * calls each layer's start-up in order: statistics, per-backend caches and
 * dispatchers, the redirects (src/runtime/redirects.c), then the compile
 * layer's preloads and its worker.  See src/README for the layers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "compile/compile.h"
#include "runtime/runtime.h"
#include "stats/stats.h"
#include "targets/targets.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* btree_jit.locate_fault: a BtjitStartupFault (test hook) */
static int	btjit_locate_fault = BTJIT_STARTUP_NORMAL;

static const struct config_enum_entry locate_fault_options[] = {
	{"none", BTJIT_STARTUP_NORMAL, false},
	{"wrong_caller", BTJIT_STARTUP_FAULT_WRONG_CALLER, false},
	{"truncated", BTJIT_STARTUP_FAULT_TRUNCATED, false},
	{"no_callconv", BTJIT_STARTUP_FAULT_NO_CALLCONV, false},
	{"unsupported_major", BTJIT_STARTUP_FAULT_UNSUPPORTED_MAJOR, false},
	{"unchecked_release", BTJIT_STARTUP_FAULT_UNCHECKED_RELEASE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry unchecked_release_options[] = {
	{"server", BTJIT_UNCHECKED_RELEASE_SERVER, false},
	{"module", BTJIT_UNCHECKED_RELEASE_MODULE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry compile_fault_options[] = {
	{"none", BTJIT_COMPILE_FAULT_SETTING_NONE, false},
	{"error", BTJIT_COMPILE_FAULT_SETTING_ERROR, false},
	{"llvm_fatal", BTJIT_COMPILE_FAULT_SETTING_LLVM_FATAL, false},
	{"slow", BTJIT_COMPILE_FAULT_SETTING_SLOW, false},
	{NULL, 0, false}
};

static const struct config_enum_entry compile_mode_options[] = {
	{"background", BTJIT_COMPILE_MODE_BACKGROUND, false},
	{"inline", BTJIT_COMPILE_MODE_INLINE, false},
	{NULL, 0, false}
};

static void btjit_define_gucs(void);
static void btjit_start_targets(void);

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
	{
		snprintf(btjit_module.reason, sizeof(btjit_module.reason),
				 "not loaded via shared_preload_libraries");
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("btree_jit is inactive: it must be loaded via shared_preload_libraries"),
				 errhint("Add btree_jit to shared_preload_libraries in postgresql.conf and restart the server.")));
		return;
	}

	btjit_define_gucs();

	btjit_stats_init();
	btjit_cache_init();
	btjit_start_targets();
	btjit_server_bitcode_preload();
	btjit_worker_register(btjit_module.active);
}

/*
 * Hand each layer what the targets' files offer (targets.h), from the top,
 * so that no lower layer refers to src/targets/: the slot table the stock
 * entries, the redirects the dispatchers, the object cache the declined
 * callbacks compiled code calls by name.
 */
static void
btjit_start_targets(void)
{
	BtjitEntries stock_entries;
	BtjitReplacements replacements;
	BtjitCallbackAddresses callbacks;

	memset(&callbacks, 0, sizeof(callbacks));
	for (int t = 0; t < BTJIT_NTARGETS; t++)
	{
		const BtjitTargetImpl *impl = btjit_target_impl(t);

		stock_entries[t] = impl->stock_entry;
		replacements.functions[t] = impl->dispatcher;
		callbacks.declined[t] = impl->declined;
		replacements.split_functions[t] = impl->split_dispatcher;
		replacements.split_signatures[t] = impl->split_signature;
	}
	replacements.readpage_signature = btjit_readpage_signature;
	callbacks.block_hints = (void *) &btjit_block_hints;
	callbacks.build_compares = (void *) &btjit_build_compares;

	btjit_dispatch_init(stock_entries);
	btjit_install_redirects(&replacements,
							(BtjitStartupFault) btjit_locate_fault);
	btjit_objcache_preload(&callbacks);
}

/*
 * The switches of the redirected searches: the DBA's and the session's,
 * verify, prefetch hints; and what a point release the module was not
 * checked against gets.
 */
static void
btjit_define_search_gucs(void)
{
	DefineCustomBoolVariable("btree_jit.cluster_enabled",
							 "Allows sessions to route B-tree searches through compiled code.",
							 "When off, every search in every session runs the server's own code, "
							 "whatever the session's btree_jit.enabled.",
							 &btjit_cluster_enabled,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, btjit_assign_cluster_enabled, NULL);

	DefineCustomBoolVariable("btree_jit.enabled",
							 "Routes this session's B-tree searches through specialised compiled code.",
							 "When off, every search runs the server's own code.  Has no effect while "
							 "btree_jit.cluster_enabled is off.",
							 &btjit_session_enabled,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, btjit_assign_enabled, NULL);

	DefineCustomEnumVariable("btree_jit.unchecked_release",
							 "Who runs the server functions the module reproduces on a point release it was not checked against.",
							 "server: they are not redirected (the page search still is); "
							 "module: they are redirected as on a checked release.",
							 &btjit_unchecked_release,
							 BTJIT_UNCHECKED_RELEASE_SERVER,
							 unchecked_release_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("btree_jit.verify",
							 "Runs the server's own page search beside the compiled code and raises an error on any difference.",
							 NULL,
							 &btjit_verify,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, btjit_assign_verify, NULL);

	DefineCustomBoolVariable("btree_jit.prefetch_hints",
							 "Lets compiled code prefetch the leaf a descent reads next from where this backend last found it.",
							 "Costs each backend up to 1 MB; a prefetch never changes a result.",
							 &btjit_prefetch_hints,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, btjit_assign_prefetch_hints, NULL);

	DefineCustomBoolVariable("btree_jit.recent_buffers",
							 "Lets a descent pin each page of an index with compiled code through the buffer this backend last found it in.",
							 "The buffer's tag is checked before the pin; otherwise the page is looked up in the buffer mapping table as usual.",
							 &btjit_recent_buffers,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/* When and where key shapes are compiled, and how many are kept. */
static void
btjit_define_compile_gucs(void)
{
	DefineCustomBoolVariable("btree_jit.log_compiles",
							 "Logs each compilation of a key shape with its duration.",
							 NULL,
							 &btjit_log_compiles,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("btree_jit.max_signatures",
							"Maximum number of compiled key shapes kept per backend.",
							"Indexes with further shapes use the server's own code.",
							&btjit_max_signatures,
							64, 1, 4096,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("btree_jit.compile_threshold",
							"Page searches of an index in a backend before its key shape is compiled.",
							"Until then the index uses the server's own page search; 0 compiles at the first search.",
							&btjit_compile_threshold,
							64, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("btree_jit.build_compile_rows",
							"Estimated heap rows from which a B-tree build compiles its key shape before sorting.",
							"A smaller build sorts with the server's own comparator unless the index has compiled "
							"code already; 0 compiles for every build.",
							&btjit_build_compile_rows,
							1000000, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("btree_jit.compile_mode",
							 "Where a key shape missing from the object cache is compiled.",
							 "background: the compile worker compiles it while the index uses the server's own page search; "
							 "inline: the backend that needs it compiles it at once.  Without the object cache, "
							 "or when the worker is not running or its queue is full, shapes are compiled inline.",
							 &btjit_compile_mode,
							 BTJIT_COMPILE_MODE_BACKGROUND,
							 compile_mode_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("btree_jit.compile_queue_size",
							"Maximum number of key shapes waiting for the compile worker.",
							"A shape that finds the queue full is compiled by the backend that needs it.",
							&btjit_compile_queue_size,
							64, 1, 4096,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

/* What is kept in shared memory and on disk, and where the inputs are. */
static void
btjit_define_storage_gucs(void)
{
	DefineCustomIntVariable("btree_jit.max_indexes",
							"Maximum number of indexes tracked in the cluster-wide statistics.",
							"When more indexes are searched, the least used entries are evicted.",
							&btjit_max_indexes,
							5000, 10, INT_MAX / 2,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("btree_jit.object_cache",
							 "Shares compiled code between backends through files in the data directory.",
							 NULL,
							 &btjit_object_cache,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("btree_jit.object_cache_max_files",
							"Maximum number of compiled objects kept in the object cache directory.",
							"0 means no limit.",
							&btjit_object_cache_max_files,
							1000, 0, INT_MAX,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomStringVariable("btree_jit.template_path",
							   "Path of the bitcode template (default: the installed one).",
							   NULL,
							   &btjit_template_path,
							   "",
							   PGC_SUSET,
							   GUC_NOT_IN_SAMPLE,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("btree_jit.server_bitcode_path",
							   "Directory of the server's bitcode, from which comparison procs are imported (default: the installed one).",
							   "For testing: a directory without postgres.index.bc makes every import fall back to calling the proc.",
							   &btjit_server_bitcode_path,
							   "",
							   PGC_SUSET,
							   GUC_NOT_IN_SAMPLE,
							   NULL, NULL, NULL);
}

/* Test hooks, hidden from SHOW ALL and postgresql.conf.sample. */
static void
btjit_define_test_hooks(void)
{
	DefineCustomEnumVariable("btree_jit.locate_fault",
							 "Test hook: feeds the locator wrong input so that it must refuse.",
							 NULL,
							 &btjit_locate_fault,
							 BTJIT_STARTUP_NORMAL,
							 locate_fault_options,
							 PGC_POSTMASTER,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, NULL, NULL);

	/*
	 * Test only, for superusers: makes the next compile in the library fail
	 * inside LLVM's fatal-error guard, with an ERROR ("error") or an LLVM
	 * fatal error ("llvm_fatal", which ends the session); "slow" makes the
	 * compile worker's child sleep 3 s before compiling, so that a test can
	 * kill it mid-compile.  The regression
	 * test guard.sql and test/suite-stress.sh use it to show that the guard
	 * is left on the error path and that LLVM's fatal errors end only the
	 * session.  Hidden from SHOW ALL and postgresql.conf.sample.
	 */
	DefineCustomEnumVariable("btree_jit.compile_fault",
							 "Test hook: makes compiling a key shape fail inside the LLVM error guard.",
							 "For the module's own tests only; \"llvm_fatal\" ends the session.",
							 &btjit_compile_fault,
							 BTJIT_COMPILE_FAULT_SETTING_NONE,
							 compile_fault_options,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, NULL, NULL);
}

static void
btjit_define_gucs(void)
{
	btjit_define_search_gucs();
	btjit_define_compile_gucs();
	btjit_define_storage_gucs();
	btjit_define_test_hooks();
	MarkGUCPrefixReserved("btree_jit");
}
