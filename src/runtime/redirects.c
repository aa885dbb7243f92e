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
 * a failure leaves the others in place.  Where gcc split an exported
 * function's body and its own file calls the part directly (Debian 15's
 * _bt_search, called by _bt_first), the part is redirected too, once
 * locate/split.c has proven what it is.
 *
 * Which functions, how each is found, what each requires and what runs
 * when it is not redirected are the rows of targetlist.h; this file walks
 * them.  The binary analysis and the patching are src/binpatch/'s (whose
 * locator still names the nbtree functions it proves); this file decides
 * what to patch and reports.  The replacements are given by the caller, so
 * that this file depends on no dispatcher.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/guc.h"

#include "runtime/runtime.h"

BtjitModuleState btjit_module;

/* btree_jit.unchecked_release: a BtjitUncheckedRelease */
int			btjit_unchecked_release = BTJIT_UNCHECKED_RELEASE_SERVER;

/* The releases mirrorlist.h lists as checked. */
static const int btjit_checked_releases[] = {
#define BTJIT_CHECKED(major, version_num, what) version_num,
#include "mirrorlist.h"
#undef BTJIT_CHECKED
};

/* The exported targets of targetlist.h fit the locator's request. */
enum
{
	BTJIT_EXPORTED_ROWS = 0
#define BTJIT_TARGET(id, name, symbol, locate, prereq, tmpl, pfx, sfx, \
					 declined, type, counter, first, last, releases, \
					 consequence) \
	+ ((locate) == BTJIT_LOCATE_EXPORTED)
#include "targetlist.h"
#undef BTJIT_TARGET
};
StaticAssertDecl(BTJIT_EXPORTED_ROWS <= BTJIT_MAX_EXPORTED,
				 "more exported targets than the locator's request holds");

#if defined(__x86_64__) && defined(__linux__)

/* Say that the module is inactive, and why; every search stays stock. */
static void
btjit_report_inactive(const char *hint)
{
	ereport(LOG,
			(errmsg("btree_jit is inactive: %s", btjit_module.reason),
			 errdetail("Every B-tree page search uses the server's own code."),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * The running server's release, from its server_version_num (the headers'
 * PG_VERSION_NUM is that of the build, which a point release leaves behind),
 * and whether mirrorlist.h lists it as checked.
 */
static void
btjit_check_release(BtjitStartupFault fault)
{
	const char *num = GetConfigOption("server_version_num", false, false);

	btjit_module.server_version_num = num != NULL ? atoi(num) : 0;
	btjit_module.release_checked = false;
	if (fault == BTJIT_STARTUP_FAULT_UNCHECKED_RELEASE)
		return;
	for (int i = 0; i < lengthof(btjit_checked_releases); i++)
		if (btjit_checked_releases[i] == btjit_module.server_version_num)
			btjit_module.release_checked = true;
}

/* "15.18, 15.19": the checked releases of a major. */
static void
btjit_describe_checked(int major, char *buf, size_t buflen)
{
	size_t		len = 0;

	buf[0] = '\0';
	for (int i = 0; i < lengthof(btjit_checked_releases); i++)
	{
		int			v = btjit_checked_releases[i];

		if (v / 10000 != major || len >= buflen)
			continue;
		len += snprintf(buf + len, buflen - len, "%s%d.%d",
						len > 0 ? ", " : "", v / 10000, v % 10000);
	}
	if (len == 0)
		snprintf(buf, buflen, "none");
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
		case BTJIT_STARTUP_FAULT_UNCHECKED_RELEASE:
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
	BtjitLocateRequest request;

	/* every exported target of this major, for the callers' proof */
	memset(&request, 0, sizeof(request));
	request.fault = btjit_locate_fault_of(fault);
	for (int t = 0; t < BTJIT_NTARGETS; t++)
		if (btjit_target_info(t)->locate == BTJIT_LOCATE_EXPORTED &&
			btjit_target_in_major(t, PG_VERSION_NUM / 10000))
		{
			request.exported[request.nexported++] = btjit_target_info(t)->symbol;
		}

	if (!btjit_locate_binsrch(&request, loc, why, sizeof(why)))
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

	btjit_module.stock[BTJIT_TARGET_BINSRCH] = detour->stock;
	btjit_module.outcome[BTJIT_TARGET_BINSRCH] = BTJIT_REDIRECT_DONE;
	btjit_module.active = true;
	return true;
}

/*
 * Find one target other than _bt_binsrch by its row's rule: its extent, or
 * false with why.
 */
static bool
btjit_find_target(BtjitTarget target, const BtjitReplacements *replacements,
				  uintptr_t *addr, size_t *size, BtjitWhy *why)
{
	const BtjitLocation *loc = &btjit_module.location;

	switch (btjit_target_info(target)->locate)
	{
		case BTJIT_LOCATE_EXPORTED:
			{
				const BtjitExportedLocation *e =
					btjit_location_exported(loc, btjit_target_info(target)->symbol);

				*addr = e != NULL ? e->addr : 0;
				*size = e != NULL ? e->size : 0;
				if (*addr == 0)
					btjit_why_copy(why, e != NULL ? e->refusal :
								   "the locator was not asked for it");
				return *addr != 0;
			}
		case BTJIT_LOCATE_CALLER_OF_EXPORTED:
			{
				BtjitReadpageLocation *rp = &btjit_module.readpage_location;

				if (!btjit_locate_readpage_at(loc->binary_path, loc->load_bias,
											  &replacements->readpage_signature,
											  rp, why->text, sizeof(why->text)))
					return false;
				*addr = rp->readpage;
				*size = rp->readpage_size;
				return true;
			}
		case BTJIT_LOCATE_CALLEE_GROUP:
			break;				/* _bt_binsrch's: btjit_redirect_binsrch */
	}
	btjit_why_set(why, "no locator for its rule");
	return false;
}

/*
 * Leave a target that reproduces server code to a point release the
 * module was not checked against (one LOG line), unless the DBA said
 * otherwise.
 */
static bool
btjit_leave_to_release(BtjitTarget target)
{
	const BtjitTargetInfo *info = btjit_target_info(target);
	int			v = btjit_module.server_version_num;
	char		checked[128];

	if (info->releases != BTJIT_RELEASES_CHECKED ||
		btjit_module.release_checked ||
		btjit_unchecked_release == BTJIT_UNCHECKED_RELEASE_MODULE)
		return false;
	btjit_describe_checked(v / 10000, checked, sizeof(checked));
	ereport(LOG,
			(errmsg("btree_jit: %s not redirected: PostgreSQL %d.%d is a release the module's copy of it was not checked against (checked: %s)",
					info->symbol, v / 10000, v % 10000, checked),
			 errdetail("%s", info->consequence),
			 errhint("Install a btree_jit build whose checked releases include %d.%d, or set btree_jit.unchecked_release = module once the release's changes to %s are known not to matter.",
					 v / 10000, v % 10000, info->symbol)));
	return true;
}

/*
 * A target whose body gcc may have split (locate/split.c): the part its
 * head jumps to, which callers in its own file call directly, is
 * redirected as well.  Located before the function itself is patched (the
 * head is read from the running text), redirected after it.  A body that
 * is whole needs nothing; a part not proven or not patched is one LOG line,
 * and those callers keep the server's code.
 */
static void
btjit_locate_split(BtjitTarget target, const BtjitReplacements *replacements,
				   BtjitSplitLocation *sl, BtjitWhy *why)
{
	const BtjitLocation *loc = &btjit_module.location;

	btjit_module.split_outcome[target] = BTJIT_SPLIT_NONE;
	if (replacements->split_functions[target] == NULL)
		return;
	btjit_module.split_outcome[target] =
		btjit_locate_split_at(loc->binary_path, loc->load_bias,
							  replacements->split_signatures[target], sl,
							  why->text, sizeof(why->text));
}

static void
btjit_redirect_split(BtjitTarget target, const BtjitReplacements *replacements,
					 const BtjitSplitLocation *sl, BtjitWhy *why)
{
	BtjitDetour *detour = &btjit_module.split_detours[target];

	if (btjit_module.split_outcome[target] == BTJIT_SPLIT_NONE)
		return;
	if (btjit_module.split_outcome[target] == BTJIT_SPLIT_FOUND &&
		btjit_detour_install((void *) sl->part, sl->part_size,
							 replacements->split_functions[target], detour,
							 why->text, sizeof(why->text)))
	{
		btjit_module.split_stock[target] = detour->stock;
		snprintf(btjit_module.split_evidence,
				 sizeof(btjit_module.split_evidence), "%s", sl->evidence);
		return;
	}
	btjit_module.split_outcome[target] = BTJIT_SPLIT_REFUSED;
	ereport(LOG,
			(errmsg("btree_jit: the part of %s that this build split off its body is not redirected: %s",
					btjit_target_info(target)->symbol, why->text),
			 errdetail("Its callers in its own source file call that part directly, and keep the server's code.")));
}

/*
 * Redirect one target after _bt_binsrch, by its row of targetlist.h: only
 * in the majors the row names, only on a checked release if it reproduces
 * server code, only once the target it requires is redirected, and only
 * where this build has a dispatcher for it.  A refusal or failure is one
 * LOG line saying what then runs the server's code; the other targets are
 * unaffected.
 */
static void
btjit_redirect_target(BtjitTarget target,
					  const BtjitReplacements *replacements)
{
	const BtjitTargetInfo *info = btjit_target_info(target);
	void	   *replacement = replacements->functions[target];
	BtjitDetour *detour = &btjit_module.detours[target];
	BtjitWhy	why;
	BtjitSplitLocation split;
	BtjitWhy	split_why;
	uintptr_t	addr;
	size_t		size;

	if (!btjit_target_in_major(target, PG_VERSION_NUM / 10000) ||
		replacement == NULL)
	{
		/* not in this server: the start-up line says so */
		btjit_module.outcome[target] = BTJIT_REDIRECT_NOT_IN_MAJOR;
		return;
	}
	if (btjit_leave_to_release(target))
	{
		btjit_module.outcome[target] = BTJIT_REDIRECT_UNCHECKED_RELEASE;
		return;
	}
	btjit_module.outcome[target] = BTJIT_REDIRECT_REFUSED;
	if (info->prerequisite != BTJIT_TARGET_NONE &&
		btjit_module.outcome[info->prerequisite] != BTJIT_REDIRECT_DONE)
		btjit_why_set(&why, "%s is not redirected",
					  btjit_target_info(info->prerequisite)->symbol);
	else if (btjit_find_target(target, replacements, &addr, &size, &why))
	{
		/* a split part's head is read before the function is patched */
		btjit_locate_split(target, replacements, &split, &split_why);
		if (btjit_detour_install((void *) addr, size, replacement, detour,
								 why.text, sizeof(why.text)))
		{
			btjit_module.stock[target] = detour->stock;
			btjit_module.outcome[target] = BTJIT_REDIRECT_DONE;
			btjit_redirect_split(target, replacements, &split, &split_why);
			return;
		}
	}
	ereport(LOG,
			(errmsg("btree_jit: %s not redirected: %s", info->symbol, why.text),
			 errdetail("%s", info->consequence)));
}

/* What the start-up line says of one target other than _bt_binsrch. */
static void
btjit_describe_target(BtjitTarget target, char *buf, size_t buflen)
{
	const BtjitTargetInfo *info = btjit_target_info(target);
	size_t		len = strlen(buf);
	int			v = btjit_module.server_version_num;

	switch (btjit_module.outcome[target])
	{
		case BTJIT_REDIRECT_DONE:
			if (btjit_module.split_outcome[target] == BTJIT_SPLIT_FOUND)
				snprintf(buf + len, buflen - len,
						 "; %s redirected, with the part split off its body at %s+0x%lx",
						 info->symbol, btjit_module.location.binary_path,
						 (unsigned long) (btjit_module.split_detours[target].target -
										  btjit_module.location.load_bias));
			else
				snprintf(buf + len, buflen - len, "; %s redirected", info->symbol);
			break;
		case BTJIT_REDIRECT_NOT_IN_MAJOR:
			snprintf(buf + len, buflen - len,
					 "; %s not redirected (not replaceable in PostgreSQL %d)",
					 info->symbol, PG_VERSION_NUM / 10000);
			break;
		case BTJIT_REDIRECT_UNCHECKED_RELEASE:
			snprintf(buf + len, buflen - len,
					 "; %s not redirected (release %d.%d not checked)",
					 info->symbol, v / 10000, v % 10000);
			break;
		case BTJIT_REDIRECT_NOT_TRIED:
		case BTJIT_REDIRECT_REFUSED:
			snprintf(buf + len, buflen - len, "; %s not redirected",
					 info->symbol);
			break;
	}
}

/* The start-up line: where _bt_binsrch was, and what else is redirected. */
static void
btjit_report_active(void)
{
	const BtjitLocation *loc = &btjit_module.location;
	const char *server_version = GetConfigOption("server_version", false, false);
	StringInfoData evidence;

	snprintf(btjit_module.reason, sizeof(btjit_module.reason),
			 "_bt_binsrch at %s+0x%lx redirected (%d call sites; %s)",
			 loc->binary_path,
			 (unsigned long) (loc->binsrch - loc->load_bias),
			 loc->ncallsites,
			 btjit_module.detours[BTJIT_TARGET_BINSRCH].description);
	for (int t = BTJIT_TARGET_BINSRCH + 1; t < BTJIT_NTARGETS; t++)
		btjit_describe_target(t, btjit_module.reason,
							  sizeof(btjit_module.reason));
	/*
	 * The evidence: _bt_binsrch's and the exported functions'; the leaf
	 * read's where it was found as a caller (to 18); a split part's.
	 */
	initStringInfo(&evidence);
	appendStringInfo(&evidence, "Evidence: %s", loc->evidence);
	if (btjit_module.outcome[BTJIT_TARGET_READPAGE] == BTJIT_REDIRECT_DONE &&
		btjit_target_info(BTJIT_TARGET_READPAGE)->locate ==
		BTJIT_LOCATE_CALLER_OF_EXPORTED)
		appendStringInfo(&evidence, "; leaf read: %s",
						 btjit_module.readpage_location.evidence);
	if (btjit_module.split_evidence[0] != '\0')
		appendStringInfo(&evidence, "; %s", btjit_module.split_evidence);
	ereport(LOG,
			(errmsg("btree_jit %s on PostgreSQL %s: %s", BTJIT_VERSION,
					server_version, btjit_module.reason),
			 errdetail_internal("%s", evidence.data)));
	pfree(evidence.data);
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
	btjit_check_release(fault);
	if (!btjit_check_major(fault) ||
		!btjit_redirect_binsrch(replacements->functions[BTJIT_TARGET_BINSRCH],
								fault))
		return;
	/* in the list's order, which puts each target after what it requires */
	for (int t = BTJIT_TARGET_BINSRCH + 1; t < BTJIT_NTARGETS; t++)
		btjit_redirect_target(t, replacements);
	btjit_report_active();
#else
	snprintf(btjit_module.reason, sizeof(btjit_module.reason),
			 "unsupported platform: only x86-64 Linux is supported");
	ereport(LOG,
			(errmsg("btree_jit is inactive: %s", btjit_module.reason)));
#endif
}
