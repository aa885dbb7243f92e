/*-------------------------------------------------------------------------
 *
 * readpage.c
 *	  Finding _bt_readpage, the leaf read the module replaces (on 15 so
 *	  far), and proving both sides of its calling convention.
 *
 * _bt_readpage is exported from 19 on and static before.  The static one
 * is found by what it calls rather than by who calls it (its callers
 * differ between versions: _bt_first and _bt_readnextpage on 15 and 17,
 * _bt_readfirstpage and _bt_readnextpage on 18):
 *	1. Resolve the exported _bt_checkkeys and _bt_first.
 *	2. Sweep the code for every reference to _bt_checkkeys (refsweep.c):
 *	   all must be direct calls, and they must lie in exactly one
 *	   function, which starts an FDE and is not exported.  That is the
 *	   candidate: in the server's source _bt_readpage is _bt_checkkeys'
 *	   one caller.
 *	3. Sweep for every reference to the candidate and every relocation:
 *	   only direct calls, at most BTJIT_MAX_CALLSITES of them, one of them
 *	   in _bt_first or in a function _bt_first calls directly.
 *	4. Its callers expect of it no more than the ABI (clobbers.c).
 *	5. It takes the signature's arguments in the SysV registers
 *	   (binpatch/callconv.c's CC_FRAME_WITNESS proof, with _bt_checkkeys as the
 *	   witness of its first argument).
 * On 19 step 1 finds _bt_readpage exported, and steps 3 and 4 still run;
 * step 5 does not, an exported function's convention being its prototype.
 *
 * Plain C over Zydis, no PostgreSQL headers (see locate.h).
 *
 * src/locate/readpage.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binpatch/analysis.h"
#include "locate.h"

/* The FDE containing vaddr, or NULL */
static const Fde *
fde_containing(const Image *img, uint64_t vaddr)
{
	ssize_t		fi = fde_le(img, vaddr);

	if (fi < 0 || vaddr >= img->fde[fi].end)
		return NULL;
	return &img->fde[fi];
}

/* Does the function [start, end) call or jump directly to target? */
static bool
body_reaches(LocCtx *cx, uint64_t start, uint64_t end, uint64_t target)
{
	const uint8_t *code = code_at(&cx->img, start, end - start);
	uint64_t	addr;

	for (addr = start; code != NULL && addr < end;)
	{
		ZydisDecodedInstruction zi;
		uint64_t	t;

		if (!x86_decode(&cx->dec, code + (addr - start), end - addr, &zi))
			return false;
		if ((zi.mnemonic == ZYDIS_MNEMONIC_CALL ||
			 zi.mnemonic == ZYDIS_MNEMONIC_JMP) &&
			x86_rel_target(&zi, addr, &t) && t == target)
			return true;
		addr += zi.length;
	}
	return false;
}

/* Step 2: the one function that calls _bt_checkkeys */
static bool
readpage_candidate(LocCtx *cx, uint64_t checkkeys, uint64_t *cand)
{
	Ref			refs[MAX_REFS];
	int			nrefs;
	int			nhits;
	uint64_t	nbytes;
	int			i;
	char		nb[64];
	char		nb2[64];

	if (!sweep_refs(cx, checkkeys, refs, &nrefs, &nhits, &nbytes))
		return false;
	*cand = 0;
	for (i = 0; i < nrefs; i++)
	{
		const Fde  *f = fde_containing(&cx->img, refs[i].site);

		if (refs[i].kind != REF_CALL || f == NULL)
			return loc_fail(cx, "_bt_checkkeys is referred to at %s other than by a call from a function with unwind information",
							addr_name(cx, refs[i].site, nb, sizeof(nb)));
		if (*cand != 0 && f->start != *cand)
			return loc_fail(cx, "_bt_checkkeys is called from two functions (%s, %s): no single _bt_readpage",
							addr_name(cx, *cand, nb, sizeof(nb)),
							addr_name(cx, f->start, nb2, sizeof(nb2)));
		*cand = f->start;
	}
	if (*cand == 0)
		return loc_fail(cx, "nothing calls _bt_checkkeys");
	if (exported_at(&cx->img, *cand) != NULL)
		return loc_fail(cx, "the one caller of _bt_checkkeys, %s, is exported: not _bt_readpage",
						exported_at(&cx->img, *cand));
	return true;
}

/*
 * Step 3: only direct calls refer to it, one of them from _bt_first or a
 * function _bt_first calls directly.
 */
static bool
readpage_references(LocCtx *cx, uint64_t cand, uint64_t bt_first,
					BtjitReadpageLocation *rp)
{
	Ref			refs[MAX_REFS];
	int			nrefs;
	const Fde  *first = fde_starting_at(&cx->img, bt_first);
	bool		from_first = false;
	int			i;
	char		nb[64];

	if (first == NULL)
		return loc_fail(cx, "no FDE starts at _bt_first");
	if (!direct_refs(cx, cand, refs, &nrefs, BTJIT_MAX_CALLSITES))
		return false;
	for (i = 0; i < nrefs; i++)
	{
		const Fde  *f = fde_containing(&cx->img, refs[i].site);

		if (refs[i].kind != REF_CALL || f == NULL)
			return loc_fail(cx, "%s is referred to at %s other than by a call",
							addr_name(cx, cand, nb, sizeof(nb)),
							addr_name(cx, refs[i].site, nb, sizeof(nb)));
		rp->callsites[i] = cx->img.bias + refs[i].site;
		if (f->start == bt_first ||
			body_reaches(cx, first->start, first->end, f->start))
			from_first = true;
	}
	rp->ncallsites = nrefs;
	if (!from_first)
		return loc_fail(cx, "no call of %s comes from _bt_first or a function it calls",
						addr_name(cx, cand, nb, sizeof(nb)));
	return true;
}

/* Find _bt_readpage in a mapped binary (see locate.h) */
bool
btjit_locate_readpage_at(const char *path, uintptr_t load_bias,
						 const BtjitReadpageSignature *sig,
						 BtjitReadpageLocation *rp, char *why, size_t whylen)
{
	LocCtx		cx;
	const Elf64_Sym *sym;
	uint64_t	checkkeys = 0;
	uint64_t	bt_first;
	uint64_t	cand;
	const Fde  *cf;
	char		chain[256];
	char		conv[384];
	bool		ok = false;

	memset(rp, 0, sizeof(*rp));
	if (!loc_open_image(&cx, path, load_bias, why, whylen))
		goto done;

	/* step 1 */
	sym = dynsym_lookup(&cx.img, "_bt_first", NULL);
	if (sym == NULL || ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
	{
		loc_fail(&cx, "_bt_first is not exported");
		goto done;
	}
	bt_first = sym->st_value;
	sym = dynsym_lookup(&cx.img, "_bt_readpage", NULL);
	if (sym != NULL && ELF64_ST_TYPE(sym->st_info) == STT_FUNC)
	{
		cand = sym->st_value;
		rp->exported = true;
	}
	else
	{
		sym = dynsym_lookup(&cx.img, "_bt_checkkeys", NULL);
		if (sym == NULL || ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
		{
			loc_fail(&cx, "neither _bt_readpage nor _bt_checkkeys is exported");
			goto done;
		}
		checkkeys = sym->st_value;
		/* step 2 */
		if (!readpage_candidate(&cx, checkkeys, &cand))
			goto done;
	}
	cf = fde_starting_at(&cx.img, cand);
	if (cf == NULL)
	{
		loc_fail(&cx, "no FDE starts at the candidate");
		goto done;
	}
	/* steps 3 and 4 */
	if (!readpage_references(&cx, cand, bt_first, rp) ||
		!prove_clobbers_all(&cx, cand, chain, sizeof(chain)))
		goto done;
	/* step 5 */
	if (rp->exported)
		snprintf(conv, sizeof(conv), "exported, so its prototype");
	else
	{
		CallconvClaim proto = {
			.shape = CC_FRAME_WITNESS,
			.subject = "_bt_readpage",
			.witness_name = "_bt_checkkeys",
			.arg_types = {"IndexScanDesc", "ScanDirection"},
		};

		proto.nargs = sig->nargs;
		proto.witness = checkkeys;

		/*
		 * 18's _bt_set_startikey(scan, pstate) is given the same state as
		 * _bt_checkkeys, and writes no more of the reader's frame.
		 */
		sym = dynsym_lookup(&cx.img, "_bt_set_startikey", NULL);
		proto.frame_callee = (sym != NULL && ELF64_ST_TYPE(sym->st_info) == STT_FUNC) ?
			sym->st_value : 0;
		proto.frame_arg = sig->checkkeys_frame_arg;
		proto.frame_size = (int32_t) sig->checkkeys_frame_size;
		if (!prove_callconv(&cx, cf->start, cf->end, &proto,
							conv, sizeof(conv)))
			goto done;
	}

	rp->readpage = cx.img.bias + cand;
	rp->readpage_size = cf->end - cf->start;
	snprintf(rp->evidence, sizeof(rp->evidence),
			 "_bt_readpage=%s+%#llx size %#zx: %s; %d call site(s), one from _bt_first or its callee; callers: it ",
			 cx.img.name, (unsigned long long) cand, rp->readpage_size,
			 rp->exported ? "exported" : "the one caller of _bt_checkkeys",
			 rp->ncallsites);
	loc_append(rp->evidence, sizeof(rp->evidence), "%s", chain);
	loc_append(rp->evidence, sizeof(rp->evidence), "; its own calling convention: ");
	loc_append(rp->evidence, sizeof(rp->evidence), "%s", conv);
	ok = true;

done:
	image_close(&cx.img);
	return ok;
}
