/*-------------------------------------------------------------------------
 *
 * binsrch.c
 *	  Find the static function _bt_binsrch in the running, stripped server
 *	  binary, and prove that it has the calling convention
 *	  (Relation, BTScanInsert, Buffer) -> OffsetNumber before anybody
 *	  redirects it.
 *
 * _bt_binsrch is static, so it has no symbol; the binary is stripped, so
 * there is no .symtab either.  What we do have: the dynamic symbol table
 * (the server exports every global function for extensions), the
 * .eh_frame unwind tables (one FDE per function, giving exact extents),
 * and the machine code itself.  The identification goes:
 *
 *	1. Resolve _bt_search, _bt_first, _bt_compare, BufferBlocks and
 *	   LocalBufferBlockPointers in .dynsym.
 *	2. Decode _bt_search and _bt_first (FDE extents) with Zydis.  gcc moves
 *	   most of _bt_search into a local ".part" function that the exported
 *	   entry tail-jumps to; follow such jumps into non-exported functions.
 *	3. The candidate is the one function called directly from both callers
 *	   that is not exported, starts an FDE, and calls _bt_compare.
 *	4. Prove the calling convention by a forward data-flow analysis over
 *	   the candidate's decoded body: at each call to _bt_compare, rdi and
 *	   rsi still hold the values they had on entry, and rdx is a page
 *	   address derived from the 32-bit entry edx through BufferBlocks or
 *	   LocalBufferBlockPointers (the BufferGetPage expansion).  gcc may
 *	   clone static functions with changed arguments (.isra, .constprop);
 *	   a clone fails this proof.
 *	5. Check that nothing else refers to the candidate: every direct call,
 *	   jump or RIP-relative reference anywhere in the executable segments,
 *	   and every relocation that would store its address.  The references
 *	   must be exactly the two calls found in step 2.
 *	6. Show that its callers expect of it no more than the ABI: it reaches
 *	   an indirect call, so no compiler could have kept a value in a
 *	   call-clobbered register across its call (clobbers.c).  The same is
 *	   shown for each exported function the caller may redirect, and one
 *	   that fails is reported as not to be redirected.
 *
 * All of this reads the in-memory code (load bias + vaddr), which is what
 * will run and what will be patched; the ELF tables come from the file.
 * Anything unexpected makes us refuse, with the reason in why[].
 *
 * This file holds that policy (steps 1-3 and 5's verdict, the names of
 * every function involved) and the public entry points; the analysis it
 * relies on is src/binpatch/'s (analysis.h): elf_image.c (the ELF file and
 * its .eh_frame extents), callconv.c (step 4), refsweep.c (the references
 * of step 5) and clobbers.c (step 6), with messages.c for the reasons.
 *
 * Plain C over <elf.h> and Zydis, with no PostgreSQL headers, so that
 * test/patcher can run it against any server binary outside a server.
 *
 * src/locate/binsrch.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "binpatch/analysis.h"
#include "locate.h"

/* A direct call found in a caller */
typedef struct CallSite
{
	uint64_t	site;
	uint64_t	target;
} CallSite;

/* A caller and the local functions it jumps into (gcc's .part/.cold) */
typedef struct Group
{
	const char *name;
	uint64_t	start[MAX_BODIES];
	uint64_t	end[MAX_BODIES];
	int			nbodies;
	CallSite	calls[MAX_CALLS];
	int			ncalls;
} Group;

/* ----------------------------------------------------------------
 *		The callers: _bt_search and _bt_first
 * ----------------------------------------------------------------
 */

/*
 * Decode one caller (and the local functions it jumps into) and collect
 * its direct calls.
 */
static bool
scan_group(LocCtx *cx, Group *g, uint64_t entry, const char *name)
{
	const Fde  *f = fde_starting_at(&cx->img, entry);
	int			b;
	char		nb[64];

	g->name = name;
	if (f == NULL)
		return loc_fail(cx, "no .eh_frame FDE starts at %s (%s): cannot tell its extent",
						name, addr_name(cx, entry, nb, sizeof(nb)));
	g->start[0] = f->start;
	g->end[0] = f->end;
	g->nbodies = 1;

	for (b = 0; b < g->nbodies; b++)
	{
		uint64_t	start = g->start[b];
		uint64_t	end = g->end[b];
		uint64_t	addr;
		const uint8_t *code;

		if (end - start > MAX_CALLER_BYTES)
			return loc_fail(cx, "%s body at %s is implausibly large", name,
							addr_name(cx, start, nb, sizeof(nb)));
		if (cx->fault == BTJIT_LOCATE_FAULT_TRUNCATED && end - start > TRUNCATED_BYTES)
			end = start + TRUNCATED_BYTES;
		code = code_at(&cx->img, start, end - start);
		if (code == NULL)
			return loc_fail(cx, "%s (%s) is not in an executable segment", name,
							addr_name(cx, start, nb, sizeof(nb)));

		for (addr = start; addr < end;)
		{
			ZydisDecodedInstruction zi;
			uint64_t	t;

			if (!x86_decode(&cx->dec, code + (addr - start), end - addr, &zi))
			{
				/* a cut-off last instruction is expected when truncating */
				if (cx->fault == BTJIT_LOCATE_FAULT_TRUNCATED)
					break;
				return loc_fail(cx, "cannot decode %s at %s", name,
								addr_name(cx, addr, nb, sizeof(nb)));
			}
			if (x86_rel_target(&zi, addr, &t))
			{
				if (zi.mnemonic == ZYDIS_MNEMONIC_CALL)
				{
					if (g->ncalls == MAX_CALLS)
						return loc_fail(cx, "too many calls in %s", name);
					g->calls[g->ncalls].site = addr;
					g->calls[g->ncalls].target = t;
					g->ncalls++;
				}
				else if ((t < start || t >= g->end[b]) &&
						 exported_at(&cx->img, t) == NULL &&
						 fde_starting_at(&cx->img, t) != NULL)
				{
					/* jump into a local function: gcc's .part or .cold */
					int			k;

					for (k = 0; k < g->nbodies; k++)
						if (g->start[k] == t)
							break;
					if (k == g->nbodies && g->nbodies < MAX_BODIES)
					{
						const Fde  *tf = fde_starting_at(&cx->img, t);

						g->start[g->nbodies] = tf->start;
						g->end[g->nbodies] = tf->end;
						g->nbodies++;
					}
				}
			}
			addr += zi.length;
		}
	}
	return true;
}

/* Does the function [start, end) contain a direct call to target? */
static bool
body_calls(LocCtx *cx, uint64_t start, uint64_t end, uint64_t target)
{
	const uint8_t *code = code_at(&cx->img, start, end - start);
	uint64_t	addr;

	if (code == NULL)
		return false;
	for (addr = start; addr < end;)
	{
		ZydisDecodedInstruction zi;
		uint64_t	t;

		if (!x86_decode(&cx->dec, code + (addr - start), end - addr, &zi))
			return false;
		if (zi.mnemonic == ZYDIS_MNEMONIC_CALL && x86_rel_target(&zi, addr, &t) && t == target)
			return true;
		addr += zi.length;
	}
	return false;
}

/* ----------------------------------------------------------------
 *		The locator
 * ----------------------------------------------------------------
 */

/*
 * One identification in progress: what each step of locate_common() found,
 * for the next steps and for the evidence text.
 */
typedef struct Ident
{
	uint64_t	bt_search;		/* the exported functions of step 1 */
	uint64_t	bt_first;
	uint64_t	bt_compare;
	uint64_t	bt_binsrch_insert;
	Group	   *ga;				/* _bt_search and the local bodies it enters */
	Group	   *gb;				/* _bt_first (another caller, on purpose) */
	const char *second_name;
	uint64_t	second;
	int			ncommon;		/* distinct callees common to both */
	uint64_t	cand;			/* the candidate's vaddr */
	const Fde  *cf;				/* its extent */
	char		proof[512];		/* what callconv.c showed */
	char		clobbers[256];	/* what clobbers.c showed */
	int			ntaken;			/* relocations storing its address */
	size_t		nrelocs;
	Ref			refs[MAX_REFS]; /* code references to it */
	int			nrefs;
	int			nhits;
	uint64_t	nbytes;
} Ident;

/* Resolve an exported symbol, of function or data type, in .dynsym */
static bool
resolve(LocCtx *cx, const char *name, uint64_t *addr, size_t *idx, bool func)
{
	const Elf64_Sym *s = dynsym_lookup(&cx->img, name, idx);
	int			type;

	if (s == NULL)
		return loc_fail(cx, "%s is not in the dynamic symbol table of %s: not a PostgreSQL server binary, or built differently",
						name, cx->img.path);
	type = ELF64_ST_TYPE(s->st_info);
	if (func ? (type != STT_FUNC) : (type != STT_OBJECT))
		return loc_fail(cx, "%s in %s is not a %s symbol", name, cx->img.path,
						func ? "function" : "data");
	*addr = s->st_value;
	return true;
}

/*
 * Step 1: the exported functions and variables the identification starts
 * from, and which second caller to look at (_bt_first, unless a fault
 * injection asks for the wrong one).
 */
static bool
resolve_symbols(LocCtx *cx, Ident *id)
{
	if (!resolve(cx, "_bt_search", &id->bt_search, NULL, true) ||
		!resolve(cx, "_bt_first", &id->bt_first, NULL, true) ||
		!resolve(cx, "_bt_compare", &id->bt_compare, NULL, true) ||
		!resolve(cx, "BufferBlocks", &cx->bufblocks, &cx->bufblocks_symidx, false) ||
		!resolve(cx, "LocalBufferBlockPointers", &cx->localbufptrs,
				 &cx->localbufptrs_symidx, false))
		return false;
	cx->bb_refs[cx->nbb_refs++] = cx->bufblocks;
	cx->lbp_refs[cx->nlbp_refs++] = cx->localbufptrs;

	id->second_name = "_bt_first";
	id->second = id->bt_first;
	if (cx->fault == BTJIT_LOCATE_FAULT_WRONG_CALLER)
	{
		if (!resolve(cx, "_bt_binsrch_insert", &id->bt_binsrch_insert, NULL, true))
			return false;
		id->second_name = "_bt_binsrch_insert";
		id->second = id->bt_binsrch_insert;
	}
	return true;
}

/*
 * Step 3: the candidate is the one function called directly from both
 * callers that is not exported, starts an FDE, and calls _bt_compare.
 * Zero or several such functions: refuse.
 */
static bool
find_candidate(LocCtx *cx, Ident *id)
{
	const Group *ga = id->ga;
	const Group *gb = id->gb;
	uint64_t	common[MAX_CALLS];
	int			ncommon = 0;
	int			ncommon_exported = 0;
	uint64_t	cands[MAX_CANDS];
	int			ncands = 0;
	const Fde  *cf;
	int			i;
	int			j;
	char		nb[64];
	char		nb2[64];

	for (i = 0; i < ga->ncalls; i++)
	{
		uint64_t	t = ga->calls[i].target;
		int			k;

		for (k = 0; k < ncommon; k++)
			if (common[k] == t)
				break;
		if (k < ncommon)
			continue;
		for (j = 0; j < gb->ncalls; j++)
			if (gb->calls[j].target == t)
				break;
		if (j == gb->ncalls)
			continue;
		common[ncommon++] = t;
		if (exported_at(&cx->img, t) != NULL)
		{
			ncommon_exported++;
			continue;
		}
		if ((cf = fde_starting_at(&cx->img, t)) == NULL)
			continue;
		if (!body_calls(cx, cf->start, cf->end, id->bt_compare))
			continue;
		if (ncands < MAX_CANDS)
			cands[ncands++] = t;
	}
	id->ncommon = ncommon;
	if (ncands == 0)
	{
		if (ncommon == ncommon_exported)
			return loc_fail(cx, "no non-exported function is called from both _bt_search (%d bodies, %d calls) and %s (%d calls): %d common callees, all exported%s",
							ga->nbodies, ga->ncalls, id->second_name, gb->ncalls, ncommon,
							cx->fault == BTJIT_LOCATE_FAULT_TRUNCATED ? " (callers decoded only partly)" : "");
		return loc_fail(cx, "none of the %d non-exported functions called from both _bt_search and %s starts an FDE and calls _bt_compare",
						ncommon - ncommon_exported, id->second_name);
	}
	if (ncands > 1)
		return loc_fail(cx, "%d functions called from both _bt_search and %s call _bt_compare (%s, %s%s): ambiguous",
						ncands, id->second_name, addr_name(cx, cands[0], nb, sizeof(nb)),
						addr_name(cx, cands[1], nb2, sizeof(nb2)), ncands > 2 ? ", ..." : "");
	id->cand = cands[0];
	id->cf = fde_starting_at(&cx->img, id->cand);
	return true;
}

/*
 * Step 4, with the relocations of step 5: scan the relocations first (they
 * also give the GOT slots the proof may need), then prove the calling
 * convention; a candidate whose address a relocation stores is refused,
 * since calls through pointers would be missed.
 */
static bool
check_candidate(LocCtx *cx, Ident *id)
{
	char		nb[64];
	const CallconvClaim claim = {
		.shape = CC_PAGE_SEARCH,
		.subject = "_bt_binsrch",
		.witness_name = "_bt_compare",
		.witness = id->bt_compare,
		.arg_types = {"Relation", "BTScanInsert"},
	};

	if (!scan_relocs(cx, id->cand, &id->ntaken, &id->nrelocs))
		return false;
	if (!prove_callconv(cx, id->cf->start, id->cf->end, &claim,
						id->proof, sizeof(id->proof)))
		return false;
	if (id->ntaken > 0)
		return loc_fail(cx, "the address of %s is taken (%d relocation%s store it): calls through pointers would be missed",
						addr_name(cx, id->cand, nb, sizeof(nb)), id->ntaken,
						id->ntaken > 1 ? "s" : "");
	return true;
}

/* Is (site, cand) one of the direct calls found in caller group g? */
static bool
group_has_call(const Group *g, uint64_t site, uint64_t cand)
{
	int			j;

	for (j = 0; j < g->ncalls; j++)
		if (g->calls[j].site == site && g->calls[j].target == cand)
			return true;
	return false;
}

/*
 * Step 5: sweep the code for every reference to the candidate and compare
 * with the calls seen in the callers, both ways: every reference must be
 * one of those calls, and the sweep must have seen each of them.
 */
static bool
check_references(LocCtx *cx, Ident *id)
{
	uint64_t	cand = id->cand;
	int			i;
	int			j;
	char		nb[64];
	char		nb2[64];

	if (!sweep_refs(cx, cand, id->refs, &id->nrefs, &id->nhits, &id->nbytes))
		return false;
	for (i = 0; i < id->nrefs; i++)
	{
		const Ref  *r = &id->refs[i];
		bool		known;

		if (r->kind == REF_RIP || r->kind == REF_ABS)
			return loc_fail(cx, "the address of %s is taken by the instruction at %s",
							addr_name(cx, cand, nb, sizeof(nb)),
							addr_name(cx, r->site, nb2, sizeof(nb2)));
		known = group_has_call(id->ga, r->site, cand) ||
			group_has_call(id->gb, r->site, cand);
		if (!known || r->kind != REF_CALL)
			return loc_fail(cx, "%s is also reached by a %s at %s, outside _bt_search and %s",
							addr_name(cx, cand, nb, sizeof(nb)),
							r->kind == REF_CALL ? "call" : "jump",
							addr_name(cx, r->site, nb2, sizeof(nb2)), id->second_name);
	}
	/* ... and the other way round: the sweep must have seen each call */
	for (i = 0; i < id->ga->ncalls + id->gb->ncalls; i++)
	{
		const CallSite *c = (i < id->ga->ncalls) ? &id->ga->calls[i] :
			&id->gb->calls[i - id->ga->ncalls];

		if (c->target != cand)
			continue;
		for (j = 0; j < id->nrefs; j++)
			if (id->refs[j].site == c->site)
				break;
		if (j == id->nrefs)
			return loc_fail(cx, "the sweep of the code missed the call at %s: refusing",
							addr_name(cx, c->site, nb, sizeof(nb)));
	}
	if (id->nrefs > BTJIT_MAX_CALLSITES)
		return loc_fail(cx, "%s has %d call sites, more than %d", addr_name(cx, cand, nb, sizeof(nb)),
						id->nrefs, BTJIT_MAX_CALLSITES);
	return true;
}

/*
 * The runtime address and length (from its FDE) of an exported function, or
 * 0 and 0 when the binary does not export it as a function with an FDE.
 */
static void
exported_extent(LocCtx *cx, const char *name, uintptr_t *addr, size_t *size)
{
	const Elf64_Sym *sym = dynsym_lookup(&cx->img, name, NULL);
	const Fde  *f;

	*addr = 0;
	*size = 0;
	if (sym == NULL || ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
		return;
	f = fde_starting_at(&cx->img, sym->st_value);
	if (f == NULL)
		return;
	*addr = cx->img.bias + sym->st_value;
	*size = f->end - f->start;
}

/*
 * An exported function the caller may redirect: its extent, and the proof
 * of step 6 for it, whose chain is appended to the evidence text; else 0
 * and 0, and why in refusal[].
 */
static void
exported_target(LocCtx *cx, const char *name, uintptr_t *addr, size_t *size,
				char *refusal, size_t refusallen, BtjitLocation *loc)
{
	char	   *why = cx->why;
	size_t		whylen = cx->whylen;
	bool		failed = cx->failed;
	char		chain[256];

	exported_extent(cx, name, addr, size);
	if (*addr == 0)
	{
		snprintf(refusal, refusallen, "%s is not exported as a function with unwind information", name);
		return;
	}
	/* a refusal here is this function's, not the locator's */
	cx->why = refusal;
	cx->whylen = refusallen;
	cx->failed = false;
	if (prove_clobbers_all(cx, *addr - cx->img.bias, chain, sizeof(chain)))
		loc_append(loc->evidence, sizeof(loc->evidence), "; %s %s", name, chain);
	else
	{
		*addr = 0;
		*size = 0;
	}
	cx->why = why;
	cx->whylen = whylen;
	cx->failed = failed;
}

/* The result, in runtime addresses */
static void
fill_location(LocCtx *cx, const Ident *id, BtjitLocation *loc)
{
	int			i;

	loc->binsrch = cx->img.bias + id->cand;
	loc->binsrch_size = id->cf->end - id->cf->start;
	loc->ncallsites = id->nrefs;
	for (i = 0; i < id->nrefs; i++)
		loc->callsites[i] = cx->img.bias + id->refs[i].site;
	loc->load_bias = cx->img.bias;
	snprintf(loc->build_id, sizeof(loc->build_id), "%s", cx->img.build_id);
}

/*
 * The exported functions requested, after the evidence text for
 * _bt_binsrch: each is exported, so its own side of the calling convention
 * is its prototype; its callers' side is step 6.
 */
static void
fill_exported(LocCtx *cx, const BtjitLocateRequest *request,
			  BtjitLocation *loc)
{
	loc->nexported = request->nexported < BTJIT_MAX_EXPORTED ?
		request->nexported : BTJIT_MAX_EXPORTED;
	for (int i = 0; i < loc->nexported; i++)
	{
		BtjitExportedLocation *e = &loc->exported[i];

		e->name = request->exported[i];
		exported_target(cx, e->name, &e->addr, &e->size, e->refusal,
						sizeof(e->refusal), loc);
	}
}

/* The location of an exported function requested by name (locate.h) */
const BtjitExportedLocation *
btjit_location_exported(const BtjitLocation *loc, const char *name)
{
	for (int i = 0; i < loc->nexported; i++)
		if (strcmp(loc->exported[i].name, name) == 0)
			return &loc->exported[i];
	return NULL;
}

/* The evidence text for the status row: what each step found */
static void
write_evidence(LocCtx *cx, const Ident *id, BtjitLocation *loc)
{
	char	   *ev = loc->evidence;
	size_t		evlen = sizeof(loc->evidence);
	const Group *ga = id->ga;
	int			i;
	char		nb[64];

	ev[0] = '\0';
	loc_append(ev, evlen, "_bt_binsrch=%s size %#zx: only non-exported callee shared by _bt_search",
			   addr_name(cx, id->cand, nb, sizeof(nb)), (size_t) (id->cf->end - id->cf->start));
	for (i = 1; i < ga->nbodies; i++)
		loc_append(ev, evlen, "%s%s", i == 1 ? " (via jmp to " : ", ",
				   addr_name(cx, ga->start[i], nb, sizeof(nb)));
	if (ga->nbodies > 1)
		loc_append(ev, evlen, ")");
	loc_append(ev, evlen, " and %s that calls _bt_compare (of %d common callees); %s; refs: ",
			   id->second_name, id->ncommon, id->proof);
	for (i = 0; i < id->nrefs; i++)
		loc_append(ev, evlen, "%scall@%s", i ? ", " : "",
				   addr_name(cx, id->refs[i].site, nb, sizeof(nb)));
	loc_append(ev, evlen, " only (swept %#llx code bytes, %d filter hits; %zu relocations, none to it); callers: it %s; build-id %.12s",
			   (unsigned long long) id->nbytes, id->nhits, id->nrelocs,
			   id->clobbers, cx->img.build_id[0] ? cx->img.build_id : "none");
}

/*
 * The identification proper, on an opened and bias-checked image: the
 * steps in the file header comment, in order.  Fills loc on success.
 */
static bool
locate_common(LocCtx *cx, const BtjitLocateRequest *request,
			  BtjitLocation *loc)
{
	Ident	   *id;
	bool		ok = false;

	if (!load_fdes(cx))
		return false;
	id = calloc(1, sizeof(Ident));
	if (id == NULL)
		return loc_fail(cx, "out of memory");
	if (!resolve_symbols(cx, id))
		goto done;

	id->ga = calloc(1, sizeof(Group));
	id->gb = calloc(1, sizeof(Group));
	if (id->ga == NULL || id->gb == NULL)
	{
		loc_fail(cx, "out of memory");
		goto done;
	}
	/* step 2: decode both callers, collecting their direct calls */
	if (!scan_group(cx, id->ga, id->bt_search, "_bt_search") ||
		!scan_group(cx, id->gb, id->second, id->second_name))
		goto done;
	if (!find_candidate(cx, id) ||
		!check_candidate(cx, id) ||
		!check_references(cx, id))
		goto done;

	/* step 6: its callers expect of it no more than the ABI */
	if (!prove_clobbers_all(cx, id->cand, id->clobbers, sizeof(id->clobbers)))
		goto done;

	fill_location(cx, id, loc);
	write_evidence(cx, id, loc);
	fill_exported(cx, request, loc);
	ok = true;

done:
	free(id->ga);
	free(id->gb);
	free(id);
	return ok;
}

/* Start a locate call: empty context and result, the decoder set up */
static void
ctx_init(LocCtx *cx, const BtjitLocateRequest *request, BtjitLocation *loc,
		 char *why, size_t whylen)
{
	memset(cx, 0, sizeof(*cx));
	cx->fault = request->fault;
	cx->why = why;
	cx->whylen = whylen;
	if (why && whylen)
		why[0] = '\0';
	memset(loc, 0, sizeof(*loc));
	ZydisDecoderInit(&cx->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisFormatterInit(&cx->fmt, ZYDIS_FORMATTER_STYLE_INTEL);
}

/* dl_iterate_phdr's first entry is the main program */
typedef struct MainInfo
{
	bool		found;
	uintptr_t	bias;
	const Elf64_Phdr *phdr;
	int			phnum;
	const char *name;
} MainInfo;

/* dl_iterate_phdr callback: record the first entry, the main program */
static int
main_program_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	MainInfo   *mi = arg;

	(void) size;
	mi->found = true;
	mi->bias = info->dlpi_addr;
	mi->phdr = info->dlpi_phdr;
	mi->phnum = info->dlpi_phnum;
	mi->name = info->dlpi_name;
	return 1;					/* stop after the first */
}

/*
 * Find _bt_binsrch in the running program (see locate.h).  The binary is
 * read through /proc/self/exe; its load bias comes from dl_iterate_phdr,
 * cross-checked with the auxiliary vector and the program headers.
 */
bool
btjit_locate_binsrch(const BtjitLocateRequest *request, BtjitLocation *loc,
					 char *why, size_t whylen)
{
	LocCtx		cx;
	MainInfo	mi;
	ssize_t		n;
	bool		ok = false;

	ctx_init(&cx, request, loc, why, whylen);

#if !defined(__x86_64__)
	/* the running server is not x86-64 code; the image check would say so */
	return loc_fail(&cx, "this build is not for x86-64: only x86-64 servers are supported");
#endif

	n = readlink("/proc/self/exe", loc->binary_path, sizeof(loc->binary_path) - 1);
	if (n <= 0)
		return loc_fail(&cx, "cannot read /proc/self/exe: %s", strerror(errno));
	loc->binary_path[n] = '\0';

	memset(&mi, 0, sizeof(mi));
	dl_iterate_phdr(main_program_cb, &mi);
	if (!mi.found || (mi.name != NULL && mi.name[0] != '\0'))
		return loc_fail(&cx, "dl_iterate_phdr did not report the main program first");
	if ((uintptr_t) mi.phdr != getauxval(AT_PHDR) || (unsigned long) mi.phnum != getauxval(AT_PHNUM))
		return loc_fail(&cx, "dl_iterate_phdr and the auxiliary vector disagree about the main program");

	/* the file behind /proc/self/exe, even if replaced on disk since */
	if (!image_open(&cx, loc->binary_path, "/proc/self/exe", mi.bias))
		goto done;
	if (mi.phnum != cx.img.eh->e_phnum ||
		memcmp(mi.phdr, cx.img.file + cx.img.eh->e_phoff,
			   sizeof(Elf64_Phdr) * (size_t) mi.phnum) != 0)
	{
		loc_fail(&cx, "the running program's headers differ from those of %s", loc->binary_path);
		goto done;
	}
	if (!check_bias(&cx))
		goto done;
	ok = locate_common(&cx, request, loc);

done:
	image_close(&cx.img);
	return ok;
}

/* The same analysis on a binary the caller has mapped (see locate.h) */
bool
btjit_locate_binsrch_at(const char *path, uintptr_t load_bias,
						const BtjitLocateRequest *request,
						BtjitLocation *loc, char *why, size_t whylen)
{
	LocCtx		cx;
	bool		ok = false;

	ctx_init(&cx, request, loc, why, whylen);
	snprintf(loc->binary_path, sizeof(loc->binary_path), "%s", path);
	if (image_open(&cx, loc->binary_path, path, load_bias) && check_bias(&cx))
		ok = locate_common(&cx, request, loc);
	image_close(&cx.img);
	return ok;
}
