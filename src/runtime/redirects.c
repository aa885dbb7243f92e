/*-------------------------------------------------------------------------
 *
 * redirects.c
 *	  Start-up in the postmaster: locate _bt_binsrch in the running server,
 *	  redirect it and the exported nbtree functions the module replaces,
 *	  and keep the stock entry points the dispatchers fall back to.
 *
 * Everything that can go wrong (an unsupported major version or platform,
 * an unknown binary layout, a failed proof of the calling convention, text
 * that cannot be patched) leaves that function unpatched and the server
 * running; one LOG line and btree_jit_status() say why.  _bt_binsrch is the
 * module's reason to exist: without its redirect nothing else is
 * redirected.  The exported functions are redirected each on its own, and
 * a failure leaves the others in place.
 *
 * The binary analysis and the patching are src/binpatch/'s, which knows
 * nothing of PostgreSQL; this file decides what to patch and reports.  The
 * replacements are given by the caller, so that this file depends on no
 * dispatcher.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "runtime/runtime.h"

BtjitModuleState btjit_module;

#if defined(__x86_64__) && defined(__linux__)

/* One exported function the module may redirect after _bt_binsrch. */
typedef struct BtjitExportedTarget
{
	BtjitTarget target;
	const char *name;
	/* what then runs the server's code, for the LOG line of a failure */
	const char *consequence;
} BtjitExportedTarget;

/*
 * _bt_compare is exported: its side of the calling convention is its
 * prototype (its callers', for those compiled with its body in view, is
 * the locator's step 6).  Redirecting it lets the comparisons outside
 * _bt_binsrch (_bt_moveright's high-key checks, unique checks) use
 * compiled code too.
 * _bt_binsrch_insert is exported too, and its callers in the server
 * (_bt_findinsertloc, _bt_check_unique) call the exported entry: the leaf
 * search of every insertion then runs compiled code.  _bt_checkkeys is
 * exported up to 18 and called from _bt_readpage for every tuple a scan
 * reads (17 and 18 pass it a BTReadPageState: pg_compat.h); 19 made it
 * static, called only from the exported _bt_readpage, so there the
 * server's own runs.
 */
static const BtjitExportedTarget btjit_exported_targets[] = {
	{BTJIT_TARGET_COMPARE, "_bt_compare",
	"Page searches use compiled code; other comparisons use the server's own."},
	{BTJIT_TARGET_INSERT, "_bt_binsrch_insert",
	"Insertions search their leaf page with the server's own code."},
#ifdef BTJIT_CHECKKEYS_REDIRECTABLE
	{BTJIT_TARGET_CHECKKEYS, "_bt_checkkeys",
	"Scans test their keys with the server's own code."},
#endif
};

/* How the start-up line says that the scan-key checks are the server's. */
#ifdef BTJIT_CHECKKEYS_REDIRECTABLE
#define BTJIT_CHECKKEYS_NOT_REDIRECTED "; _bt_checkkeys not redirected"
#else
#define BTJIT_CHECKKEYS_NOT_REDIRECTED "; scan-key checks are the server's (_bt_checkkeys is static in 19, inside _bt_readpage: not redirected)"
#endif

/*
 * Where the locator found a target, and its length; 0 and 0, with the
 * locator's reason in *refusal, when it is not to be redirected.
 */
static void
btjit_target_extent(const BtjitLocation *loc, BtjitTarget target,
					uintptr_t *addr, size_t *size, const char **refusal)
{
	*refusal = "the locator does not know it";
	switch (target)
	{
		case BTJIT_TARGET_BINSRCH:
			*addr = loc->binsrch;
			*size = loc->binsrch_size;
			return;
		case BTJIT_TARGET_COMPARE:
			*addr = loc->compare;
			*size = loc->compare_size;
			*refusal = loc->compare_refusal;
			return;
		case BTJIT_TARGET_INSERT:
			*addr = loc->binsrch_insert;
			*size = loc->binsrch_insert_size;
			*refusal = loc->binsrch_insert_refusal;
			return;
		case BTJIT_TARGET_CHECKKEYS:
			*addr = loc->checkkeys;
			*size = loc->checkkeys_size;
			*refusal = loc->checkkeys_refusal;
			return;
		case BTJIT_TARGET_READPAGE:		/* located on its own */
		case BTJIT_NTARGETS:
			break;
	}
	*addr = 0;
	*size = 0;
}

/* Say that the module is inactive, and why; every search stays stock. */
static void
btjit_report_inactive(const char *hint)
{
	ereport(LOG,
			(errmsg("btree_jit is inactive: %s", btjit_module.reason),
			 errdetail("Every B-tree page search uses the server's own code."),
			 hint ? errhint("%s", hint) : 0));
}

/* Is this server's major version one the module was verified against? */
static bool
btjit_check_major(BtjitStartupFault fault)
{
	int			major = PG_VERSION_NUM / 10000;

	if (fault == BTJIT_STARTUP_FAULT_UNSUPPORTED_MAJOR)
		major = 16;
	if (BTJIT_MAJOR_SUPPORTED(major))
		return true;
	snprintf(btjit_module.reason, sizeof(btjit_module.reason),
			 "PostgreSQL %d is not a supported major version (supported: %s)",
			 major, BTJIT_SUPPORTED_MAJORS);
	btjit_report_inactive("The module redirects only server builds whose code it was verified against.");
	return false;
}

/* The locator's share of the start-up test faults. */
static BtjitLocateFault
btjit_locate_fault_of(BtjitStartupFault fault)
{
	switch (fault)
	{
		case BTJIT_STARTUP_FAULT_WRONG_CALLER:
			return BTJIT_LOCATE_FAULT_WRONG_CALLER;
		case BTJIT_STARTUP_FAULT_TRUNCATED:
			return BTJIT_LOCATE_FAULT_TRUNCATED;
		case BTJIT_STARTUP_FAULT_NO_CALLCONV:
			return BTJIT_LOCATE_FAULT_NO_CALLCONV;
		case BTJIT_STARTUP_NORMAL:
		case BTJIT_STARTUP_FAULT_UNSUPPORTED_MAJOR:
			break;
	}
	return BTJIT_LOCATE_NORMAL;
}

/* Find _bt_binsrch and redirect it; false (reported) if either fails. */
static bool
btjit_redirect_binsrch(void *replacement, BtjitStartupFault fault)
{
	char		why[512];
	BtjitLocation *loc = &btjit_module.location;
	BtjitDetour *detour = &btjit_module.detours[BTJIT_TARGET_BINSRCH];

	if (!btjit_locate_binsrch(btjit_locate_fault_of(fault), loc,
							  why, sizeof(why)))
	{
		snprintf(btjit_module.reason, sizeof(btjit_module.reason),
				 "_bt_binsrch not identified: %s", why);
		btjit_report_inactive(NULL);
		return false;
	}

	if (!btjit_detour_install((void *) loc->binsrch, loc->binsrch_size,
							  replacement, detour, why, sizeof(why)))
	{
		snprintf(btjit_module.reason, sizeof(btjit_module.reason),
				 "redirect of _bt_binsrch at %s+0x%lx failed: %s",
				 loc->binary_path,
				 (unsigned long) (loc->binsrch - loc->load_bias), why);
		btjit_report_inactive(NULL);
		return false;
	}

	btjit_module.stock = (BtjitBinsrchFn) detour->stock;
	btjit_module.redirected[BTJIT_TARGET_BINSRCH] = true;
	btjit_module.active = true;
	return true;
}

/*
 * Redirect one exported function (its side of the calling convention is
 * its prototype, its callers' side the locator's step 6).  False, with one
 * LOG line saying what then runs, if the locator refused it or the detour
 * fails.
 */
static bool
btjit_redirect_exported(const BtjitExportedTarget *t, void *replacement)
{
	char		why[512];
	uintptr_t	addr;
	size_t		size;
	const char *refusal;
	BtjitDetour *detour = &btjit_module.detours[t->target];

	btjit_target_extent(&btjit_module.location, t->target, &addr, &size,
						&refusal);
	if (addr != 0 &&
		btjit_detour_install((void *) addr, size, replacement, detour,
							 why, sizeof(why)))
	{
		btjit_module.redirected[t->target] = true;
		return true;
	}
	ereport(LOG,
			(errmsg("btree_jit: %s not redirected: %s", t->name,
					addr != 0 ? why : refusal),
			 errdetail("%s", t->consequence)));
	return false;
}

#ifdef BTJIT_READPAGE_REDIRECTABLE
/*
 * Find _bt_readpage (binpatch/readpage.c) and redirect it.  Its signature
 * is these headers': on 15 (scan, dir, offnum), and _bt_checkkeys is
 * handed &continuescan, a bool, as its fifth argument; on 17 and 18 (scan,
 * dir, offnum, firstPage), and _bt_checkkeys is handed the page's
 * BTReadPageState as its second.  Only with _bt_checkkeys redirected: the
 * leaf read calls the compiled checks, whose declined path runs
 * _bt_checkkeys' stock entry.
 */
static void
btjit_redirect_readpage(void *replacement)
{
#ifdef BTJIT_CHECKKEYS_READPAGE_STATE
	static const BtjitReadpageSignature signature = {4, 1, sizeof(BTReadPageState)};
#else
	static const BtjitReadpageSignature signature = {3, 4, sizeof(bool)};
#endif
	const BtjitLocation *loc = &btjit_module.location;
	BtjitReadpageLocation *rp = &btjit_module.readpage_location;
	BtjitDetour *detour = &btjit_module.detours[BTJIT_TARGET_READPAGE];
	char		why[512];

	if (!btjit_module.redirected[BTJIT_TARGET_CHECKKEYS])
		snprintf(why, sizeof(why), "_bt_checkkeys is not redirected");
	else if (btjit_locate_readpage_at(loc->binary_path, loc->load_bias,
									  &signature, rp, why, sizeof(why)) &&
			 btjit_detour_install((void *) rp->readpage, rp->readpage_size,
								  replacement, detour, why, sizeof(why)))
	{
		btjit_module.stock_readpage = (BtjitReadpageFn) detour->stock;
		btjit_module.redirected[BTJIT_TARGET_READPAGE] = true;
		return;
	}
	ereport(LOG,
			(errmsg("btree_jit: _bt_readpage not redirected: %s", why),
			 errdetail("Scans read their leaf pages with the server's own code.")));
}
#endif

/* The stock entry points of the exported functions that were redirected. */
static void
btjit_take_stock_entries(void)
{
	BtjitDetour *d = btjit_module.detours;

	if (btjit_module.redirected[BTJIT_TARGET_COMPARE])
		btjit_module.stock_compare = (BtjitCompareFn) d[BTJIT_TARGET_COMPARE].stock;
	if (btjit_module.redirected[BTJIT_TARGET_INSERT])
		btjit_module.stock_insert = (BtjitBinsrchInsertFn) d[BTJIT_TARGET_INSERT].stock;
#ifdef BTJIT_CHECKKEYS_REDIRECTABLE
	if (btjit_module.redirected[BTJIT_TARGET_CHECKKEYS])
		btjit_module.stock_check = (BtjitCheckkeysFn) d[BTJIT_TARGET_CHECKKEYS].stock;
#endif
}

/* The start-up line: where _bt_binsrch was, and what else is redirected. */
static void
btjit_report_active(void)
{
	const BtjitLocation *loc = &btjit_module.location;
	const bool *r = btjit_module.redirected;

	snprintf(btjit_module.reason, sizeof(btjit_module.reason),
			 "_bt_binsrch at %s+0x%lx redirected (%d call sites; %s)%s%s%s%s",
			 loc->binary_path,
			 (unsigned long) (loc->binsrch - loc->load_bias),
			 loc->ncallsites,
			 btjit_module.detours[BTJIT_TARGET_BINSRCH].description,
			 r[BTJIT_TARGET_COMPARE] ? "; _bt_compare redirected" : "",
			 r[BTJIT_TARGET_INSERT] ? "; _bt_binsrch_insert redirected" : "",
			 r[BTJIT_TARGET_CHECKKEYS] ? "; _bt_checkkeys redirected" :
			 BTJIT_CHECKKEYS_NOT_REDIRECTED,
			 r[BTJIT_TARGET_READPAGE] ? "; _bt_readpage redirected" : "");
#ifdef BTJIT_READPAGE_REDIRECTABLE
	if (r[BTJIT_TARGET_READPAGE])
	{
		ereport(LOG,
				(errmsg("btree_jit %s on PostgreSQL %s: %s", BTJIT_VERSION,
						PG_VERSION, btjit_module.reason),
				 errdetail_internal("Evidence: %s; leaf read: %s", loc->evidence,
									btjit_module.readpage_location.evidence)));
		return;
	}
#endif
	ereport(LOG,
			(errmsg("btree_jit %s on PostgreSQL %s: %s", BTJIT_VERSION,
					PG_VERSION, btjit_module.reason),
			 errdetail_internal("Evidence: %s", loc->evidence)));
}
#endif							/* x86-64 Linux */

/*
 * Find _bt_binsrch and install the detours.  Runs once, in the postmaster
 * (or a single-user backend) before any page search can happen, so nothing
 * can be executing the code being patched.
 */
void
btjit_install_redirects(const BtjitReplacements *replacements,
						BtjitStartupFault fault)
{
#if defined(__x86_64__) && defined(__linux__)
	if (!btjit_check_major(fault) ||
		!btjit_redirect_binsrch(replacements->functions[BTJIT_TARGET_BINSRCH],
								fault))
		return;
	for (int i = 0; i < lengthof(btjit_exported_targets); i++)
	{
		const BtjitExportedTarget *t = &btjit_exported_targets[i];

		(void) btjit_redirect_exported(t, replacements->functions[t->target]);
	}
	btjit_take_stock_entries();
#ifdef BTJIT_READPAGE_REDIRECTABLE
	btjit_redirect_readpage(replacements->functions[BTJIT_TARGET_READPAGE]);
#endif
	btjit_report_active();
#else
	snprintf(btjit_module.reason, sizeof(btjit_module.reason),
			 "unsupported platform: only x86-64 Linux is supported");
	ereport(LOG,
			(errmsg("btree_jit is inactive: %s", btjit_module.reason)));
#endif
}
