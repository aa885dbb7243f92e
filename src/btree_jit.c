/*-------------------------------------------------------------------------
 *
 * btree_jit.c
 *	  Module start-up: GUC definitions, and locating and redirecting
 *	  _bt_binsrch (and _bt_compare) in the postmaster.
 *
 * Everything that can go wrong at start-up (unsupported platform, unknown
 * binary layout, failed proof of the calling convention, text that cannot
 * be patched) leaves the server unpatched and running; one LOG line and
 * btree_jit_status() say why.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "btree_jit.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* ---- GUCs: every btree_jit.* setting is defined here ---- */
bool		btjit_enabled = true;
bool		btjit_verify = false;
bool		btjit_log_compiles = false;
int			btjit_max_signatures = 64;
char	   *btjit_template_path = NULL;
char	   *btjit_server_bitcode_path = NULL;
int			btjit_compile_threshold = 64;
bool		btjit_object_cache = true;
int			btjit_object_cache_max_files = 1000;
int			btjit_max_indexes = 5000;
static int	btjit_locate_fault = BTJIT_LOCATE_NORMAL;
int			btjit_compile_fault = BTJIT_COMPILE_NORMAL;
int			btjit_compile_mode = BTJIT_COMPILE_MODE_BACKGROUND;
int			btjit_compile_queue_size = 64;
bool		btjit_fast_ok = true;

/*
 * Keep btjit_fast_ok = enabled && !verify for the dispatcher's one test,
 * and btjit_code_active = enabled && btjit_code_present for the others'.
 */
static void
btjit_assign_enabled(bool newval, void *extra)
{
	btjit_fast_ok = newval && !btjit_verify;
	btjit_code_active = newval && btjit_code_present;
}

static void
btjit_assign_verify(bool newval, void *extra)
{
	btjit_fast_ok = btjit_enabled && !newval;
}

/*
 * Not a locator input: makes start-up take this server for a major version
 * the module does not support (test/suite-startup.sh).
 */
#define BTJIT_STARTUP_FAULT_UNSUPPORTED_MAJOR 100

static const struct config_enum_entry locate_fault_options[] = {
	{"none", BTJIT_LOCATE_NORMAL, false},
	{"wrong_caller", BTJIT_LOCATE_FAULT_WRONG_CALLER, false},
	{"truncated", BTJIT_LOCATE_FAULT_TRUNCATED, false},
	{"no_callconv", BTJIT_LOCATE_FAULT_NO_CALLCONV, false},
	{"unsupported_major", BTJIT_STARTUP_FAULT_UNSUPPORTED_MAJOR, false},
	{NULL, 0, false}
};

static const struct config_enum_entry compile_fault_options[] = {
	{"none", BTJIT_COMPILE_NORMAL, false},
	{"error", BTJIT_COMPILE_FAULT_ERROR, false},
	{"llvm_fatal", BTJIT_COMPILE_FAULT_LLVM_FATAL, false},
	{"slow", BTJIT_COMPILE_FAULT_SLOW, false},
	{NULL, 0, false}
};

static const struct config_enum_entry compile_mode_options[] = {
	{"background", BTJIT_COMPILE_MODE_BACKGROUND, false},
	{"inline", BTJIT_COMPILE_MODE_INLINE, false},
	{NULL, 0, false}
};

BtjitModuleState btjit_module;

static void btjit_install_redirect(void);
static void btjit_define_gucs(void);

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
	btjit_install_redirect();
	btjit_objcache_preload();
	btjit_server_bitcode_preload();
	btjit_worker_register();
}

static void
btjit_define_gucs(void)
{
	DefineCustomBoolVariable("btree_jit.enabled",
							 "Routes B-tree page searches through specialised compiled code.",
							 "When off, every page search runs the server's own code.",
							 &btjit_enabled,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, btjit_assign_enabled, NULL);

	DefineCustomBoolVariable("btree_jit.verify",
							 "Runs the server's own page search beside the compiled code and raises an error on any difference.",
							 NULL,
							 &btjit_verify,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, btjit_assign_verify, NULL);

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

	DefineCustomEnumVariable("btree_jit.locate_fault",
							 "Test hook: feeds the locator wrong input so that it must refuse.",
							 NULL,
							 &btjit_locate_fault,
							 BTJIT_LOCATE_NORMAL,
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
							 BTJIT_COMPILE_NORMAL,
							 compile_fault_options,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("btree_jit");
}

#if defined(__x86_64__) && defined(__linux__)
/*
 * Redirect an exported function of the nbtree code (its calling convention
 * is its prototype) to replacement.  False, with one LOG line saying what
 * then runs, if its extent is unknown or the detour fails.
 */
static bool
btjit_redirect_exported(const char *name, uintptr_t addr, size_t size,
						void *replacement, BtjitDetour *detour,
						const char *consequence)
{
	char		why[512];

	if (addr != 0 &&
		btjit_detour_install((void *) addr, size, replacement, detour,
							 why, sizeof(why)))
		return true;
	ereport(LOG,
			(errmsg("btree_jit: %s not redirected: %s", name,
					addr != 0 ? why : "its extent is unknown"),
			 errdetail("%s", consequence)));
	return false;
}
#endif

/* How the start-up line says that the scan-key checks are the server's. */
#if PG_VERSION_NUM < 160000
#define BTJIT_CHECKKEYS_NOT_REDIRECTED "; _bt_checkkeys not redirected"
#else
#define BTJIT_CHECKKEYS_NOT_REDIRECTED "; _bt_checkkeys is the server's (compiled for PostgreSQL 15 only)"
#endif

/*
 * Find _bt_binsrch and install the detour.  Runs once, in the postmaster (or
 * a single-user backend) before any page search can happen, so nothing can
 * be executing the code being patched.
 */
static void
btjit_install_redirect(void)
{
#if defined(__x86_64__) && defined(__linux__)
	char		why[512];
	BtjitLocation *loc = &btjit_module.location;
	int			major = PG_VERSION_NUM / 10000;

	if (btjit_locate_fault == BTJIT_STARTUP_FAULT_UNSUPPORTED_MAJOR)
		major = 16;
	if (!BTJIT_MAJOR_SUPPORTED(major))
	{
		snprintf(btjit_module.reason, sizeof(btjit_module.reason),
				 "PostgreSQL %d is not a supported major version (supported: %s)",
				 major, BTJIT_SUPPORTED_MAJORS);
		ereport(LOG,
				(errmsg("btree_jit is inactive: %s", btjit_module.reason),
				 errdetail("Every B-tree page search uses the server's own code."),
				 errhint("The module redirects only server builds whose code it was verified against.")));
		return;
	}

	if (!btjit_locate_binsrch((BtjitLocateFault) btjit_locate_fault, loc,
							  why, sizeof(why)))
	{
		snprintf(btjit_module.reason, sizeof(btjit_module.reason),
				 "_bt_binsrch not identified: %s", why);
		ereport(LOG,
				(errmsg("btree_jit is inactive: %s", btjit_module.reason),
				 errdetail("Every B-tree page search uses the server's own code.")));
		return;
	}

	if (!btjit_detour_install((void *) loc->binsrch, loc->binsrch_size,
							  (void *) btjit_dispatch, &btjit_module.detour,
							  why, sizeof(why)))
	{
		snprintf(btjit_module.reason, sizeof(btjit_module.reason),
				 "redirect of _bt_binsrch at %s+0x%lx failed: %s",
				 loc->binary_path,
				 (unsigned long) (loc->binsrch - loc->load_bias), why);
		ereport(LOG,
				(errmsg("btree_jit is inactive: %s", btjit_module.reason),
				 errdetail("Every B-tree page search uses the server's own code.")));
		return;
	}

	btjit_module.stock = (BtjitBinsrchFn) btjit_module.detour.stock;
	btjit_module.active = true;

	/*
	 * _bt_compare is exported: its calling convention is its prototype.
	 * Redirecting it lets the comparisons outside _bt_binsrch (_bt_moveright's
	 * high-key checks, unique checks) use compiled code too.
	 * _bt_binsrch_insert is exported too, and its callers in the server
	 * (_bt_findinsertloc, _bt_check_unique) call the exported entry: the leaf
	 * search of every insertion then runs compiled code.  If either fails,
	 * the rest stays redirected.
	 */
	btjit_module.compare_active =
		btjit_redirect_exported("_bt_compare", loc->compare, loc->compare_size,
								(void *) btjit_dispatch_compare,
								&btjit_module.compare_detour,
								"Page searches use compiled code; other comparisons use the server's own.");
	if (btjit_module.compare_active)
		btjit_module.stock_compare = (BtjitCompareFn) btjit_module.compare_detour.stock;
	btjit_module.insert_active =
		btjit_redirect_exported("_bt_binsrch_insert", loc->binsrch_insert,
								loc->binsrch_insert_size,
								(void *) btjit_dispatch_insert,
								&btjit_module.insert_detour,
								"Insertions search their leaf page with the server's own code.");
	if (btjit_module.insert_active)
		btjit_module.stock_insert = (BtjitBinsrchInsertFn) btjit_module.insert_detour.stock;

	/*
	 * _bt_checkkeys is exported and called from _bt_readpage for every tuple
	 * a scan reads.  Only PostgreSQL 15's function is reproduced by the
	 * template: 17 and 18 rewrote it (BTReadPageState, array advancement,
	 * skip scan), so there the server's own runs.
	 */
#if PG_VERSION_NUM < 160000
	btjit_module.check_active =
		btjit_redirect_exported("_bt_checkkeys", loc->checkkeys,
								loc->checkkeys_size,
								(void *) btjit_dispatch_check,
								&btjit_module.check_detour,
								"Scans test their keys with the server's own code.");
	if (btjit_module.check_active)
		btjit_module.stock_check = (BtjitCheckkeysFn) btjit_module.check_detour.stock;
#endif
	snprintf(btjit_module.reason, sizeof(btjit_module.reason),
			 "_bt_binsrch at %s+0x%lx redirected (%d call sites; %s)%s%s%s",
			 loc->binary_path,
			 (unsigned long) (loc->binsrch - loc->load_bias),
			 loc->ncallsites, btjit_module.detour.description,
			 btjit_module.compare_active ? "; _bt_compare redirected" : "",
			 btjit_module.insert_active ? "; _bt_binsrch_insert redirected" : "",
			 btjit_module.check_active ? "; _bt_checkkeys redirected" :
			 BTJIT_CHECKKEYS_NOT_REDIRECTED);
	ereport(LOG,
			(errmsg("btree_jit %s on PostgreSQL %s: %s", BTJIT_VERSION,
					PG_VERSION, btjit_module.reason),
			 errdetail_internal("Evidence: %s", loc->evidence)));
#else
	snprintf(btjit_module.reason, sizeof(btjit_module.reason),
			 "unsupported platform: only x86-64 Linux is supported");
	ereport(LOG,
			(errmsg("btree_jit is inactive: %s", btjit_module.reason)));
#endif
}
