/*-------------------------------------------------------------------------
 *
 * refsweep.c
 *	  Everything in the binary that refers to the candidate: relocations
 *	  that would store its address, and every direct call, jump or
 *	  RIP-relative (or, in a non-PIE binary, absolute) reference to it in
 *	  the executable segments.  The locator's policy (src/locate/) requires
 *	  these to be exactly the calls it found in the known callers.
 *
 * Plain C over <elf.h> and Zydis, no PostgreSQL headers (see binpatch.h).
 *
 * src/binpatch/refsweep.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

#ifndef SHT_RELR
#define SHT_RELR 19
#endif

/* ----------------------------------------------------------------
 *		Relocations: data references to the candidate
 * ----------------------------------------------------------------
 */

/*
 * One SHT_RELA section (section index i, contents d): count relocations
 * that store cand's address, and collect the GOT slots of BufferBlocks and
 * LocalBufferBlockPointers.
 */
static bool
scan_rela(LocCtx *cx, int i, const Elf64_Shdr *sh, const uint8_t *d, uint64_t cand,
		  int *ntaken, size_t *nrelocs)
{
	Image	   *img = &cx->img;
	size_t		n = sh->sh_size / sizeof(Elf64_Rela);
	size_t		k;

	if (sh->sh_entsize != sizeof(Elf64_Rela))
		return loc_fail(cx, "relocation section %d has an unexpected entry size", i);
	for (k = 0; k < n; k++)
	{
		Elf64_Rela	r;
		uint32_t	type;
		size_t		sym;

		memcpy(&r, d + k * sizeof(r), sizeof(r));
		type = (uint32_t) ELF64_R_TYPE(r.r_info);
		sym = ELF64_R_SYM(r.r_info);
		(*nrelocs)++;
		if (type == R_X86_64_RELATIVE || type == R_X86_64_IRELATIVE)
		{
			if (cand != 0 && (uint64_t) r.r_addend == cand)
				(*ntaken)++;
			continue;
		}
		if (sym == 0 || sym >= img->ndynsym)
			continue;
		if ((type == R_X86_64_GLOB_DAT || type == R_X86_64_64) && r.r_addend == 0)
		{
			if (sym == cx->bufblocks_symidx && cx->nbb_refs < 4)
				cx->bb_refs[cx->nbb_refs++] = r.r_offset;
			if (sym == cx->localbufptrs_symidx && cx->nlbp_refs < 4)
				cx->lbp_refs[cx->nlbp_refs++] = r.r_offset;
		}
		if (cand != 0 && img->dynsym[sym].st_shndx != SHN_UNDEF &&
			img->dynsym[sym].st_value + (uint64_t) r.r_addend == cand)
			(*ntaken)++;
	}
	return true;
}

/*
 * One SHT_RELR section: relative relocations, addends stored in place.
 * Count those whose stored value is cand.
 */
static void
scan_relr(const Image *img, const Elf64_Shdr *sh, const uint8_t *d, uint64_t cand,
		  int *ntaken, size_t *nrelocs)
{
	size_t		n = sh->sh_size / 8;
	size_t		k;
	uint64_t	where = 0;

	for (k = 0; k < n; k++)
	{
		uint64_t	e;

		memcpy(&e, d + 8 * k, 8);
		if ((e & 1) == 0)
		{
			const uint8_t *v = file_at(img, e, 8);

			(*nrelocs)++;
			if (cand != 0 && v != NULL && memcmp(v, &cand, 8) == 0)
				(*ntaken)++;
			where = e + 8;
		}
		else
		{
			int			bit;

			for (bit = 1; bit < 64; bit++)
			{
				if (e & ((uint64_t) 1 << bit))
				{
					const uint8_t *v = file_at(img, where + 8 * (bit - 1), 8);

					(*nrelocs)++;
					if (cand != 0 && v != NULL && memcmp(v, &cand, 8) == 0)
						(*ntaken)++;
				}
			}
			where += 63 * 8;
		}
	}
}

/*
 * A non-PIE binary stores absolute addresses without relocations: count
 * every aligned 8-byte value equal to cand in the non-executable segments.
 */
static void
scan_absolute(const Image *img, uint64_t cand, int *ntaken)
{
	int			i;

	for (i = 0; i < img->nseg; i++)
	{
		const Seg  *s = &img->seg[i];
		const uint8_t *d;
		uint64_t	k;

		if (s->flags & PF_X)
			continue;
		d = file_at(img, s->vaddr, s->filesz);
		if (d == NULL)
			continue;
		for (k = 0; k + 8 <= s->filesz; k += 4)
		{
			uint64_t	v;

			memcpy(&v, d + k, 8);
			if (v == cand)
				(*ntaken)++;
		}
	}
}

/*
 * Look at every relocation.  Collect GOT slots of BufferBlocks and
 * LocalBufferBlockPointers (for the proof, should code reach them through
 * the GOT), and count relocations that would store the candidate's address
 * (if cand != 0).
 */
bool
scan_relocs(LocCtx *cx, uint64_t cand, int *ntaken, size_t *nrelocs)
{
	Image	   *img = &cx->img;
	int			i;

	*ntaken = 0;
	*nrelocs = 0;
	for (i = 0; i < img->nsh; i++)
	{
		const Elf64_Shdr *sh = &img->sh[i];
		const uint8_t *d;

		if (sh->sh_type != SHT_RELA && sh->sh_type != SHT_RELR && sh->sh_type != SHT_REL)
			continue;
		d = section_data(img, sh);
		if (d == NULL)
			return loc_fail(cx, "relocation section %d is unreadable", i);
		if (sh->sh_type == SHT_REL)
			return loc_fail(cx, "%s has REL relocations, which x86-64 does not use", img->path);
		if (sh->sh_type == SHT_RELA)
		{
			if (!scan_rela(cx, i, sh, d, cand, ntaken, nrelocs))
				return false;
		}
		else
			scan_relr(img, sh, d, cand, ntaken, nrelocs);
	}

	if (cand != 0 && img->eh->e_type == ET_EXEC)
		scan_absolute(img, cand, ntaken);
	return true;
}

/* ----------------------------------------------------------------
 *		Sweep: every code reference to the candidate
 * ----------------------------------------------------------------
 *
 * Decoding all of .text with Zydis takes over 100 ms on a 5 MB server,
 * too slow for every server start.  Instead, a byte filter finds every
 * position where a 32-bit displacement could refer to the candidate (a
 * rel32 or disp32 field d at address p refers to p + 4 + d + k, where k is
 * the size of a trailing immediate: 0, 1, 2 or 4), and every rel8 byte
 * near it.  This is a necessary condition for any direct call, jump or
 * RIP-relative reference, so nothing escapes it.  Each hit is then
 * confirmed or dismissed by decoding, with Zydis, the function that
 * contains it from its FDE start.
 */

/*
 * Decode the code around byte-filter hit h, from the start of the function
 * that contains it (or of the gap without unwind info it lies in), and say
 * whether the instruction covering h refers to cand through the field at h.
 * *site is set to that instruction's address.  REF_DOUBT: the containing
 * function cannot be decoded, so the hit can be neither confirmed nor
 * dismissed.
 */
static RefKind
confirm_hit(LocCtx *cx, uint64_t h, uint64_t cand, uint64_t *site)
{
	Image	   *img = &cx->img;
	ssize_t		fi = fde_le(img, h);
	uint64_t	start;
	uint64_t	end;
	bool		in_fde;
	const uint8_t *code;
	uint64_t	addr;
	int			i;

	in_fde = (fi >= 0 && h < img->fde[fi].end);
	if (in_fde)
	{
		start = img->fde[fi].start;
		end = img->fde[fi].end;
	}
	else
	{
		/* a gap without unwind info: decode from where the last FDE ended */
		const Seg  *seg = NULL;

		for (i = 0; i < img->nseg; i++)
			if ((img->seg[i].flags & PF_X) && h >= img->seg[i].vaddr &&
				h < img->seg[i].vaddr + img->seg[i].filesz)
				seg = &img->seg[i];
		if (seg == NULL)
			return REF_NONE;
		start = seg->vaddr;
		if (fi >= 0 && img->fde[fi].end > start)
			start = img->fde[fi].end;
		end = seg->vaddr + seg->filesz;
		if ((size_t) (fi + 1) < img->nfde && img->fde[fi + 1].start < end)
			end = img->fde[fi + 1].start;
	}
	code = code_at(img, start, end - start);
	if (code == NULL)
		return REF_NONE;

	for (addr = start; addr <= h && addr < end;)
	{
		ZydisDecodedInstruction zi;
		uint64_t	t;
		uint64_t	rel = h - addr;

		if (!x86_decode(&cx->dec, code + (addr - start), end - addr, &zi))
		{
			if (in_fde)
				return REF_DOUBT;
			addr++;				/* padding between functions */
			continue;
		}
		if (h < addr + zi.length)
		{
			*site = addr;
			if (x86_rel_target(&zi, addr, &t) && t == cand)
			{
				for (i = 0; i < 2; i++)
					if (zi.raw.imm[i].is_relative && zi.raw.imm[i].offset == rel)
						return zi.mnemonic == ZYDIS_MNEMONIC_CALL ? REF_CALL : REF_JUMP;
			}
			if (x86_riprel_target(&zi, addr, &t) && t == cand && zi.raw.disp.offset == rel)
				return REF_RIP;
			if (img->eh->e_type == ET_EXEC)
			{
				if (zi.raw.disp.size == 32 && zi.raw.disp.offset == rel &&
					(uint64_t) (uint32_t) zi.raw.disp.value == cand &&
					!x86_riprel_target(&zi, addr, &t))
					return REF_ABS;
				for (i = 0; i < 2; i++)
					if (zi.raw.imm[i].size >= 32 && !zi.raw.imm[i].is_relative &&
						zi.raw.imm[i].offset == rel && zi.raw.imm[i].value.u == cand)
						return REF_ABS;
			}
			return REF_NONE;
		}
		addr += zi.length;
	}
	return REF_NONE;
}

/*
 * Find every code reference to cand: the byte filter over the executable
 * segments, then confirm_hit() for each hit.  refs[] receives each distinct
 * referring instruction (at most MAX_REFS); *nhits_out and *nbytes say how
 * much was looked at, for the evidence text.
 */
bool
sweep_refs(LocCtx *cx, uint64_t cand, Ref *refs, int *nrefs, int *nhits_out,
		   uint64_t *nbytes)
{
	Image	   *img = &cx->img;
	uint64_t   *hits;
	int			nhits = 0;
	int			i;
	char		nb[64];
	bool		absolute = (img->eh->e_type == ET_EXEC);

	*nrefs = 0;
	*nbytes = 0;
	hits = malloc(sizeof(uint64_t) * MAX_HITS);
	if (hits == NULL)
		return loc_fail(cx, "out of memory");

	for (i = 0; i < img->nseg; i++)
	{
		const Seg  *s = &img->seg[i];
		const uint8_t *p;
		uint64_t	n;
		uint64_t	q;
		uint64_t	lo;
		uint64_t	hi;

		if (!(s->flags & PF_X) || s->filesz < 4)
			continue;
		p = code_at(img, s->vaddr, s->filesz);
		if (p == NULL)
			continue;
		n = s->filesz;
		*nbytes += n;
		for (q = 0; q + 4 <= n; q++)
		{
			int32_t		v;
			uint64_t	d;

			memcpy(&v, p + q, 4);
			d = s->vaddr + q + 4 + (uint64_t) (int64_t) v - cand;
			if ((d <= 4 && d != 3) || (absolute && (uint32_t) v == (uint32_t) cand))
			{
				if (nhits == MAX_HITS)
				{
					free(hits);
					return loc_fail(cx, "too many possible references to %s",
									addr_name(cx, cand, nb, sizeof(nb)));
				}
				hits[nhits++] = s->vaddr + q;
			}
		}
		/* rel8 branches can only come from within 128 bytes */
		lo = (cand > s->vaddr + 130) ? cand - 130 : s->vaddr;
		hi = (cand + 130 < s->vaddr + n) ? cand + 130 : s->vaddr + n;
		for (q = lo; q < hi; q++)
		{
			int8_t		v = (int8_t) p[q - s->vaddr];

			if (q + 1 + (uint64_t) (int64_t) v == cand && nhits < MAX_HITS)
				hits[nhits++] = q;
		}
	}

	for (i = 0; i < nhits; i++)
	{
		uint64_t	site = 0;
		RefKind		k = confirm_hit(cx, hits[i], cand, &site);
		int			j;

		if (k == REF_NONE)
			continue;
		if (k == REF_DOUBT)
		{
			uint64_t	h = hits[i];

			free(hits);
			return loc_fail(cx, "cannot decode the function containing %s to check a possible reference to the candidate",
							addr_name(cx, h, nb, sizeof(nb)));
		}
		for (j = 0; j < *nrefs; j++)
			if (refs[j].site == site)
				break;
		if (j < *nrefs)
			continue;
		if (*nrefs == MAX_REFS)
		{
			free(hits);
			return loc_fail(cx, "too many references to %s", addr_name(cx, cand, nb, sizeof(nb)));
		}
		refs[*nrefs].site = site;
		refs[*nrefs].kind = k;
		(*nrefs)++;
	}
	*nhits_out = nhits;
	free(hits);
	return true;
}

/*
 * The references to cand, when nothing but code refers to it: no
 * relocation takes its address, and there are at most maxrefs references
 * (each a direct call or jump, or anything else confirm_hit() found: the
 * caller judges the kinds).  False, with the reason, otherwise.
 */
bool
direct_refs(LocCtx *cx, uint64_t cand, Ref *refs, int *nrefs, int maxrefs)
{
	int			nhits;
	uint64_t	nbytes;
	int			ntaken;
	size_t		nrelocs;
	char		nb[64];

	if (!scan_relocs(cx, cand, &ntaken, &nrelocs))
		return false;
	if (ntaken > 0)
		return loc_fail(cx, "the address of %s is taken by %d relocation(s)",
						addr_name(cx, cand, nb, sizeof(nb)), ntaken);
	if (!sweep_refs(cx, cand, refs, nrefs, &nhits, &nbytes))
		return false;
	if (*nrefs > maxrefs)
		return loc_fail(cx, "%s has %d references, more than %d",
						addr_name(cx, cand, nb, sizeof(nb)), *nrefs, maxrefs);
	return true;
}
