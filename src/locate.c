/*-------------------------------------------------------------------------
 *
 * locate.c
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
 *
 * All of this reads the in-memory code (load bias + vaddr), which is what
 * will run and what will be patched; the ELF tables come from the file.
 * Anything unexpected makes us refuse, with the reason in why[].
 *
 * Plain C over <elf.h> and Zydis, with no PostgreSQL headers, so that
 * test/patcher can run it against any server binary outside a server.
 *
 * src/locate.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "binpatch.h"

#ifndef SHT_RELR
#define SHT_RELR 19
#endif

/* DWARF pointer encodings used by .eh_frame and .eh_frame_hdr */
#define DW_EH_PE_absptr		0x00
#define DW_EH_PE_uleb128	0x01
#define DW_EH_PE_udata2		0x02
#define DW_EH_PE_udata4		0x03
#define DW_EH_PE_udata8		0x04
#define DW_EH_PE_sleb128	0x09
#define DW_EH_PE_sdata2		0x0a
#define DW_EH_PE_sdata4		0x0b
#define DW_EH_PE_sdata8		0x0c
#define DW_EH_PE_pcrel		0x10
#define DW_EH_PE_datarel	0x30
#define DW_EH_PE_indirect	0x80
#define DW_EH_PE_omit		0xff

#define MAX_SEGS			16
#define MAX_CALLER_BYTES	(256 * 1024)	/* a sane upper bound for a caller */
#define MAX_CAND_BYTES		8192	/* _bt_binsrch is a few hundred bytes */
#define MAX_CALLS			1024	/* direct calls in one caller group */
#define MAX_BODIES			4	/* functions per caller group */
#define MAX_CANDS			8
#define MAX_HITS			1024	/* byte-filter hits in the sweep */
#define MAX_REFS			32
#define MAX_SLOTS			48	/* tracked stack slots per flow state */
#define MAX_COMPARE_CALLS	8
#define TRUNCATED_BYTES		16	/* BTJIT_LOCATE_FAULT_TRUNCATED */

typedef struct Seg
{
	uint64_t	vaddr;
	uint64_t	memsz;
	uint64_t	filesz;
	uint64_t	offset;
	uint32_t	flags;
} Seg;

typedef struct Fde
{
	uint64_t	start;
	uint64_t	end;
} Fde;

/* The binary under analysis: its file mapped read-only, plus its load bias */
typedef struct Image
{
	const char *path;
	const char *name;			/* basename of path, for messages */
	const uint8_t *file;
	size_t		filesize;
	uintptr_t	bias;			/* runtime address = bias + vaddr */
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	int			nsh;
	const char *shstr;
	size_t		shstrsz;
	Seg			seg[MAX_SEGS];
	int			nseg;
	const Elf64_Sym *dynsym;
	size_t		ndynsym;
	const char *dynstr;
	size_t		dynstrsz;
	Fde		   *fde;			/* sorted by start */
	size_t		nfde;
	bool		fde_from_hdr;	/* table came from .eh_frame_hdr */
	char		build_id[64];
	uint64_t	build_id_vaddr; /* where the note's descriptor is loaded */
	size_t		build_id_len;
	const uint8_t *build_id_file;
} Image;

/* Everything one locate call works with */
typedef struct LocCtx
{
	Image		img;
	ZydisDecoder dec;
	ZydisFormatter fmt;
	BtjitLocateFault fault;
	char	   *why;
	size_t		whylen;
	bool		failed;

	uint64_t	bt_search;
	uint64_t	bt_first;
	uint64_t	bt_compare;
	uint64_t	bt_binsrch_insert;
	uint64_t	bufblocks;
	uint64_t	localbufptrs;
	size_t		bufblocks_symidx;
	size_t		localbufptrs_symidx;

	/*
	 * Addresses whose RIP-relative use means "BufferBlocks" or
	 * "LocalBufferBlockPointers": the variables themselves and any GOT
	 * slots holding their addresses.
	 */
	uint64_t	bb_refs[4];
	int			nbb_refs;
	uint64_t	lbp_refs[4];
	int			nlbp_refs;
} LocCtx;

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
 *		Messages
 * ----------------------------------------------------------------
 */

static const char *
fault_name(BtjitLocateFault fault)
{
	switch (fault)
	{
		case BTJIT_LOCATE_NORMAL:
			return "none";
		case BTJIT_LOCATE_FAULT_WRONG_CALLER:
			return "WRONG_CALLER";
		case BTJIT_LOCATE_FAULT_TRUNCATED:
			return "TRUNCATED";
		case BTJIT_LOCATE_FAULT_NO_CALLCONV:
			return "NO_CALLCONV";
	}
	return "?";
}

#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
static bool
loc_fail(LocCtx *cx, const char *fmt,...)
{
	va_list		ap;
	size_t		n = 0;

	/* keep the first, most specific reason */
	if (cx->failed || cx->why == NULL || cx->whylen == 0)
	{
		cx->failed = true;
		return false;
	}
	cx->failed = true;
	if (cx->fault != BTJIT_LOCATE_NORMAL)
	{
		int			k = snprintf(cx->why, cx->whylen, "[fault injection %s] ",
								 fault_name(cx->fault));

		n = (k < 0) ? 0 : ((size_t) k >= cx->whylen ? cx->whylen - 1 : (size_t) k);
	}
	va_start(ap, fmt);
	vsnprintf(cx->why + n, cx->whylen - n, fmt, ap);
	va_end(ap);
	return false;
}

/* "postgres+0x1b7cd0": a vaddr named relative to the binary */
static const char *
addr_name(const LocCtx *cx, uint64_t vaddr, char *buf, size_t len)
{
	snprintf(buf, len, "%s+%#llx", cx->img.name, (unsigned long long) vaddr);
	return buf;
}

/* Append to a fixed buffer, never overflowing it */
#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
static void
buf_append(char *buf, size_t len, const char *fmt,...)
{
	size_t		used = strlen(buf);
	va_list		ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* ----------------------------------------------------------------
 *		ELF image access
 * ----------------------------------------------------------------
 */

/* In-memory code bytes at vaddr, if [vaddr, vaddr+len) is executable */
static const uint8_t *
code_at(const Image *img, uint64_t vaddr, size_t len)
{
	int			i;

	for (i = 0; i < img->nseg; i++)
	{
		const Seg  *s = &img->seg[i];

		if (!(s->flags & PF_X))
			continue;
		if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz &&
			len <= s->filesz - (vaddr - s->vaddr))
			return (const uint8_t *) (img->bias + vaddr);
	}
	return NULL;
}

/* In-memory bytes of any loaded segment (file-backed part only) */
static const uint8_t *
mem_at(const Image *img, uint64_t vaddr, size_t len)
{
	int			i;

	for (i = 0; i < img->nseg; i++)
	{
		const Seg  *s = &img->seg[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz &&
			len <= s->filesz - (vaddr - s->vaddr))
			return (const uint8_t *) (img->bias + vaddr);
	}
	return NULL;
}

/* File bytes that are loaded at vaddr */
static const uint8_t *
file_at(const Image *img, uint64_t vaddr, size_t len)
{
	int			i;

	for (i = 0; i < img->nseg; i++)
	{
		const Seg  *s = &img->seg[i];
		uint64_t	off;

		if (vaddr < s->vaddr || vaddr - s->vaddr > s->filesz ||
			len > s->filesz - (vaddr - s->vaddr))
			continue;
		off = s->offset + (vaddr - s->vaddr);
		if (off > img->filesize || len > img->filesize - off)
			return NULL;
		return img->file + off;
	}
	return NULL;
}

/* Contents of a section, bounds-checked against the file */
static const uint8_t *
section_data(const Image *img, const Elf64_Shdr *sh)
{
	if (sh->sh_type == SHT_NOBITS)
		return NULL;
	if (sh->sh_offset > img->filesize || sh->sh_size > img->filesize - sh->sh_offset)
		return NULL;
	return img->file + sh->sh_offset;
}

static const Elf64_Shdr *
section_by_name(const Image *img, const char *name)
{
	int			i;

	for (i = 0; i < img->nsh; i++)
	{
		uint32_t	n = img->sh[i].sh_name;

		if (n < img->shstrsz &&
			strncmp(img->shstr + n, name, img->shstrsz - n) == 0)
			return &img->sh[i];
	}
	return NULL;
}

static const char *
sym_name(const Image *img, const Elf64_Sym *sym)
{
	if (sym->st_name >= img->dynstrsz)
		return "";
	return img->dynstr + sym->st_name;
}

/* A defined dynamic symbol by name; NULL if absent */
static const Elf64_Sym *
dynsym_lookup(const Image *img, const char *name, size_t *index)
{
	size_t		i;

	for (i = 1; i < img->ndynsym; i++)
	{
		const Elf64_Sym *s = &img->dynsym[i];

		if (s->st_shndx == SHN_UNDEF)
			continue;
		if (strcmp(sym_name(img, s), name) == 0)
		{
			if (index)
				*index = i;
			return s;
		}
	}
	return NULL;
}

/* Is there an exported (defined, dynamic) code symbol at vaddr? */
static const char *
exported_at(const Image *img, uint64_t vaddr)
{
	size_t		i;

	for (i = 1; i < img->ndynsym; i++)
	{
		const Elf64_Sym *s = &img->dynsym[i];
		int			type = ELF64_ST_TYPE(s->st_info);

		if (s->st_shndx == SHN_UNDEF || s->st_value != vaddr)
			continue;
		if (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE)
			return sym_name(img, s);
	}
	return NULL;
}

/* ----------------------------------------------------------------
 *		.eh_frame: function extents
 * ----------------------------------------------------------------
 */

static bool
read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	uint64_t	v = 0;
	int			shift = 0;

	while (*pp < end && shift < 64)
	{
		uint8_t		b = *(*pp)++;

		v |= (uint64_t) (b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
		{
			*out = v;
			return true;
		}
	}
	return false;
}

static bool
read_sleb(const uint8_t **pp, const uint8_t *end, int64_t *out)
{
	uint64_t	v = 0;
	int			shift = 0;

	while (*pp < end && shift < 64)
	{
		uint8_t		b = *(*pp)++;

		v |= (uint64_t) (b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
		{
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t) 0 << shift;
			*out = (int64_t) v;
			return true;
		}
	}
	return false;
}

/*
 * Read a DW_EH_PE-encoded value.  field is the vaddr of the value itself
 * (for pcrel), datarel the base for datarel.  Indirect values are refused.
 */
static bool
read_encoded(const uint8_t **pp, const uint8_t *end, uint8_t enc,
			 uint64_t field, uint64_t datarel, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t	v;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return false;
	switch (enc & 0x0f)
	{
		case DW_EH_PE_absptr:
		case DW_EH_PE_udata8:
		case DW_EH_PE_sdata8:
			if (end - p < 8)
				return false;
			memcpy(&v, p, 8);
			p += 8;
			break;
		case DW_EH_PE_udata4:
			{
				uint32_t	u;

				if (end - p < 4)
					return false;
				memcpy(&u, p, 4);
				v = u;
				p += 4;
				break;
			}
		case DW_EH_PE_sdata4:
			{
				int32_t		s;

				if (end - p < 4)
					return false;
				memcpy(&s, p, 4);
				v = (uint64_t) (int64_t) s;
				p += 4;
				break;
			}
		case DW_EH_PE_udata2:
			{
				uint16_t	u;

				if (end - p < 2)
					return false;
				memcpy(&u, p, 2);
				v = u;
				p += 2;
				break;
			}
		case DW_EH_PE_sdata2:
			{
				int16_t		s;

				if (end - p < 2)
					return false;
				memcpy(&s, p, 2);
				v = (uint64_t) (int64_t) s;
				p += 2;
				break;
			}
		case DW_EH_PE_uleb128:
			if (!read_uleb(&p, end, &v))
				return false;
			break;
		case DW_EH_PE_sleb128:
			{
				int64_t		s;

				if (!read_sleb(&p, end, &s))
					return false;
				v = (uint64_t) s;
				break;
			}
		default:
			return false;
	}
	switch (enc & 0x70)
	{
		case 0:
			break;
		case DW_EH_PE_pcrel:
			v += field;
			break;
		case DW_EH_PE_datarel:
			v += datarel;
			break;
		default:
			return false;
	}
	*pp = p;
	*out = v;
	return true;
}

/* Skip an encoded value whose application we do not care about */
static bool
skip_encoded(const uint8_t **pp, const uint8_t *end, uint8_t enc)
{
	uint64_t	dummy;

	return read_encoded(pp, end, enc & 0x0f, 0, 0, &dummy);
}

/*
 * The FDE pointer encoding declared by the CIE at cie (its length field).
 */
static bool
cie_fde_encoding(const uint8_t *cie, const uint8_t *secend, uint8_t *enc)
{
	const uint8_t *p = cie;
	const uint8_t *end;
	const char *aug;
	uint32_t	len32;
	uint32_t	id;
	uint8_t		version;
	uint64_t	u;
	int64_t		s;

	*enc = DW_EH_PE_absptr;
	if (secend - p < 8)
		return false;
	memcpy(&len32, p, 4);
	p += 4;
	if (len32 == 0xffffffff || len32 > (uint64_t) (secend - p))
		return false;			/* 64-bit DWARF: not produced for x86-64 */
	end = p + len32;
	memcpy(&id, p, 4);
	p += 4;
	if (id != 0 || p >= end)
		return false;
	version = *p++;
	if (version != 1 && version != 3)
		return false;
	aug = (const char *) p;
	while (p < end && *p)
		p++;
	if (p >= end)
		return false;
	p++;
	if (strstr(aug, "eh"))
		p += 8;
	if (!read_uleb(&p, end, &u) || !read_sleb(&p, end, &s))
		return false;
	if (version == 1)
		p++;
	else if (!read_uleb(&p, end, &u))
		return false;
	if (aug[0] != 'z')
		return aug[0] == '\0';
	if (!read_uleb(&p, end, &u))
		return false;
	for (aug++; *aug; aug++)
	{
		if (p >= end)
			return false;
		switch (*aug)
		{
			case 'R':
				*enc = *p++;
				break;
			case 'L':
				p++;
				break;
			case 'P':
				{
					uint8_t		penc = *p++;

					if (!skip_encoded(&p, end, penc))
						return false;
					break;
				}
			case 'S':
			case 'B':
			case 'G':
				break;
			default:
				return false;
		}
	}
	return true;
}

/*
 * Parse the FDE at fde (its length field, loaded at fde_vaddr) into an
 * extent.  A small cache keeps CIE encodings, of which there are few.
 */
typedef struct CieCache
{
	const uint8_t *cie[8];
	uint8_t		enc[8];
	int			n;
} CieCache;

static bool
parse_fde(const uint8_t *fde, uint64_t fde_vaddr, const uint8_t *sec,
		  const uint8_t *secend, CieCache *cc, Fde *out, bool *is_cie)
{
	const uint8_t *p = fde;
	const uint8_t *end;
	const uint8_t *cie;
	uint32_t	len32;
	uint32_t	id;
	uint8_t		enc = 0;
	uint64_t	start;
	uint64_t	range;
	int			i;

	*is_cie = false;
	if (secend - p < 8)
		return false;
	memcpy(&len32, p, 4);
	p += 4;
	if (len32 == 0xffffffff || len32 > (uint64_t) (secend - p) || len32 < 4)
		return false;
	end = p + len32;
	memcpy(&id, p, 4);
	if (id == 0)
	{
		*is_cie = true;
		return true;
	}
	if ((uint64_t) (p - sec) < id)
		return false;
	cie = p - id;
	p += 4;
	for (i = 0; i < cc->n; i++)
		if (cc->cie[i] == cie)
			break;
	if (i < cc->n)
		enc = cc->enc[i];
	else
	{
		if (!cie_fde_encoding(cie, secend, &enc))
			return false;
		if (cc->n < 8)
		{
			cc->cie[cc->n] = cie;
			cc->enc[cc->n] = enc;
			cc->n++;
		}
	}
	if (!read_encoded(&p, end, enc, fde_vaddr + (uint64_t) (p - fde), 0, &start))
		return false;
	if (!read_encoded(&p, end, enc & 0x0f, 0, 0, &range))
		return false;
	out->start = start;
	out->end = start + range;
	return true;
}

static int
fde_cmp(const void *a, const void *b)
{
	const Fde  *x = a;
	const Fde  *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/*
 * Build the sorted table of function extents: from .eh_frame_hdr's binary
 * search table when it has the usual encoding, else by walking .eh_frame.
 */
static bool
load_fdes(LocCtx *cx)
{
	Image	   *img = &cx->img;
	const Elf64_Shdr *ehs = section_by_name(img, ".eh_frame");
	const Elf64_Shdr *hdrs = section_by_name(img, ".eh_frame_hdr");
	const uint8_t *sec;
	const uint8_t *secend;
	CieCache	cc;
	size_t		cap;

	memset(&cc, 0, sizeof(cc));
	if (ehs == NULL || (sec = section_data(img, ehs)) == NULL)
		return loc_fail(cx, "%s has no .eh_frame section: cannot find function extents",
						img->path);
	secend = sec + ehs->sh_size;

	if (hdrs != NULL && section_data(img, hdrs) != NULL && hdrs->sh_size >= 12)
	{
		const uint8_t *h = section_data(img, hdrs);
		const uint8_t *hend = h + hdrs->sh_size;
		const uint8_t *p = h + 4;
		uint64_t	ehptr;
		uint64_t	count;

		if (h[0] == 1 && h[3] == (DW_EH_PE_datarel | DW_EH_PE_sdata4) &&
			read_encoded(&p, hend, h[1], hdrs->sh_addr + (uint64_t) (p - h),
						 hdrs->sh_addr, &ehptr) &&
			read_encoded(&p, hend, h[2], hdrs->sh_addr + (uint64_t) (p - h),
						 hdrs->sh_addr, &count) &&
			ehptr == ehs->sh_addr &&
			count <= (uint64_t) (hend - p) / 8)
		{
			size_t		i;

			img->fde = malloc(sizeof(Fde) * (count ? count : 1));
			if (img->fde == NULL)
				return loc_fail(cx, "out of memory");
			for (i = 0; i < count; i++)
			{
				int32_t		loc;
				int32_t		fdeoff;
				uint64_t	fde_vaddr;
				bool		is_cie;
				Fde			f;

				memcpy(&loc, p + 8 * i, 4);
				memcpy(&fdeoff, p + 8 * i + 4, 4);
				fde_vaddr = hdrs->sh_addr + (int64_t) fdeoff;
				if (fde_vaddr < ehs->sh_addr || fde_vaddr - ehs->sh_addr >= ehs->sh_size)
					return loc_fail(cx, ".eh_frame_hdr entry %zu points outside .eh_frame", i);
				if (!parse_fde(sec + (fde_vaddr - ehs->sh_addr), fde_vaddr, sec, secend,
							   &cc, &f, &is_cie) || is_cie)
					return loc_fail(cx, "cannot parse the FDE at %#llx",
									(unsigned long long) fde_vaddr);
				if (f.start != hdrs->sh_addr + (int64_t) loc)
					return loc_fail(cx, ".eh_frame_hdr and the FDE at %#llx disagree",
									(unsigned long long) fde_vaddr);
				if (i > 0 && f.start < img->fde[i - 1].start)
					return loc_fail(cx, ".eh_frame_hdr table is not sorted");
				img->fde[i] = f;
			}
			img->nfde = count;
			img->fde_from_hdr = true;
			return true;
		}
	}

	/* No usable search table: walk .eh_frame. */
	cap = 1024;
	img->fde = malloc(sizeof(Fde) * cap);
	if (img->fde == NULL)
		return loc_fail(cx, "out of memory");
	{
		const uint8_t *p = sec;

		while (secend - p >= 4)
		{
			uint32_t	len32;
			bool		is_cie;
			Fde			f;

			memcpy(&len32, p, 4);
			if (len32 == 0)
				break;
			if (len32 == 0xffffffff || len32 > (uint64_t) (secend - p) - 4)
				return loc_fail(cx, "malformed .eh_frame record at offset %#zx",
								(size_t) (p - sec));
			if (!parse_fde(p, ehs->sh_addr + (uint64_t) (p - sec), sec, secend,
						   &cc, &f, &is_cie))
				return loc_fail(cx, "cannot parse .eh_frame record at offset %#zx",
								(size_t) (p - sec));
			if (!is_cie && f.end > f.start)
			{
				if (img->nfde == cap)
				{
					Fde		   *n = realloc(img->fde, sizeof(Fde) * cap * 2);

					if (n == NULL)
						return loc_fail(cx, "out of memory");
					img->fde = n;
					cap *= 2;
				}
				img->fde[img->nfde++] = f;
			}
			p += 4 + len32;
		}
	}
	qsort(img->fde, img->nfde, sizeof(Fde), fde_cmp);
	return true;
}

/* Index of the last FDE starting at or before vaddr, or -1 */
static ssize_t
fde_le(const Image *img, uint64_t vaddr)
{
	size_t		lo = 0;
	size_t		hi = img->nfde;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (img->fde[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ssize_t) lo - 1;
}

/* The FDE starting exactly at vaddr, or NULL */
static const Fde *
fde_starting_at(const Image *img, uint64_t vaddr)
{
	ssize_t		i = fde_le(img, vaddr);

	if (i >= 0 && img->fde[i].start == vaddr && img->fde[i].end > vaddr)
		return &img->fde[i];
	return NULL;
}

/* ----------------------------------------------------------------
 *		Opening the image
 * ----------------------------------------------------------------
 */

static bool
image_open(LocCtx *cx, const char *path, const char *open_path, uintptr_t bias)
{
	Image	   *img = &cx->img;
	struct stat st;
	int			fd;
	void	   *map;
	const Elf64_Ehdr *eh;
	int			i;
	const char *slash;

	img->path = path;
	slash = strrchr(path, '/');
	img->name = slash ? slash + 1 : path;
	img->bias = bias;

	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return loc_fail(cx, "cannot open %s: %s", open_path, strerror(errno));
	if (fstat(fd, &st) != 0 || st.st_size < (off_t) sizeof(Elf64_Ehdr))
	{
		close(fd);
		return loc_fail(cx, "%s is not an ELF file", path);
	}
	map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return loc_fail(cx, "cannot map %s: %s", path, strerror(errno));
	img->file = map;
	img->filesize = (size_t) st.st_size;

	eh = (const Elf64_Ehdr *) img->file;
	img->eh = eh;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
		eh->e_ident[EI_CLASS] != ELFCLASS64 ||
		eh->e_ident[EI_DATA] != ELFDATA2LSB ||
		eh->e_machine != EM_X86_64)
		return loc_fail(cx, "%s is not a 64-bit little-endian x86-64 ELF file", path);
	if (eh->e_type != ET_DYN && eh->e_type != ET_EXEC)
		return loc_fail(cx, "%s is not an executable", path);
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > img->filesize ||
		(uint64_t) eh->e_phnum * sizeof(Elf64_Phdr) > img->filesize - eh->e_phoff)
		return loc_fail(cx, "%s has a malformed program header table", path);
	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
		eh->e_shoff > img->filesize ||
		(uint64_t) eh->e_shnum * sizeof(Elf64_Shdr) > img->filesize - eh->e_shoff ||
		eh->e_shstrndx >= eh->e_shnum)
		return loc_fail(cx, "%s has no usable section headers", path);

	for (i = 0; i < eh->e_phnum; i++)
	{
		const Elf64_Phdr *ph = (const Elf64_Phdr *) (img->file + eh->e_phoff) + i;

		if (ph->p_type != PT_LOAD)
			continue;
		if (img->nseg == MAX_SEGS || ph->p_filesz > ph->p_memsz ||
			ph->p_offset > img->filesize || ph->p_filesz > img->filesize - ph->p_offset)
			return loc_fail(cx, "%s has unexpected PT_LOAD segments", path);
		img->seg[img->nseg].vaddr = ph->p_vaddr;
		img->seg[img->nseg].memsz = ph->p_memsz;
		img->seg[img->nseg].filesz = ph->p_filesz;
		img->seg[img->nseg].offset = ph->p_offset;
		img->seg[img->nseg].flags = ph->p_flags;
		img->nseg++;
	}

	img->sh = (const Elf64_Shdr *) (img->file + eh->e_shoff);
	img->nsh = eh->e_shnum;
	img->shstr = (const char *) section_data(img, &img->sh[eh->e_shstrndx]);
	if (img->shstr == NULL)
		return loc_fail(cx, "%s: section name table is unreadable", path);
	img->shstrsz = img->sh[eh->e_shstrndx].sh_size;

	for (i = 0; i < img->nsh; i++)
	{
		const Elf64_Shdr *sh = &img->sh[i];

		if (sh->sh_type == SHT_DYNSYM && img->dynsym == NULL)
		{
			const uint8_t *d = section_data(img, sh);
			const uint8_t *s;

			if (d == NULL || sh->sh_entsize != sizeof(Elf64_Sym) ||
				sh->sh_link >= (uint32_t) img->nsh ||
				(s = section_data(img, &img->sh[sh->sh_link])) == NULL)
				return loc_fail(cx, "%s: .dynsym is unreadable", path);
			img->dynsym = (const Elf64_Sym *) d;
			img->ndynsym = sh->sh_size / sizeof(Elf64_Sym);
			img->dynstr = (const char *) s;
			img->dynstrsz = img->sh[sh->sh_link].sh_size;
		}
		else if (sh->sh_type == SHT_NOTE && img->build_id[0] == '\0')
		{
			const uint8_t *p = section_data(img, sh);
			const uint8_t *end;

			if (p == NULL)
				continue;
			end = p + sh->sh_size;
			while (end - p >= 12)
			{
				uint32_t	namesz;
				uint32_t	descsz;
				uint32_t	type;
				const uint8_t *name;
				const uint8_t *desc;

				memcpy(&namesz, p, 4);
				memcpy(&descsz, p + 4, 4);
				memcpy(&type, p + 8, 4);
				name = p + 12;
				if (namesz > (uint64_t) (end - name))
					break;
				desc = name + ((namesz + 3) & ~3u);
				if (desc > end || descsz > (uint64_t) (end - desc))
					break;
				if (type == NT_GNU_BUILD_ID && namesz == 4 &&
					memcmp(name, "GNU", 4) == 0 && descsz > 0 && descsz <= 31)
				{
					uint32_t	k;

					for (k = 0; k < descsz; k++)
						snprintf(img->build_id + 2 * k, 3, "%02x", desc[k]);
					img->build_id_file = desc;
					img->build_id_len = descsz;
					img->build_id_vaddr = (sh->sh_flags & SHF_ALLOC) ?
						sh->sh_addr + (uint64_t) (desc - section_data(img, sh)) : 0;
					break;
				}
				p = desc + ((descsz + 3) & ~3u);
			}
		}
	}
	if (img->dynsym == NULL)
		return loc_fail(cx, "%s has no dynamic symbol table", path);
	return true;
}

static void
image_close(Image *img)
{
	if (img->file)
		munmap((void *) img->file, img->filesize);
	free(img->fde);
	img->file = NULL;
	img->fde = NULL;
}

/*
 * Check that the load bias really maps this file: the ELF header, the
 * program headers and the build-id note must be found in memory where the
 * bias says they are.  Reading code at a wrong bias would decode garbage.
 */
static bool
check_bias(LocCtx *cx)
{
	Image	   *img = &cx->img;
	int			i;
	bool		checked_header = false;

	for (i = 0; i < img->nseg; i++)
	{
		const Seg  *s = &img->seg[i];
		const uint8_t *m;
		size_t		phlen = (size_t) img->eh->e_phnum * sizeof(Elf64_Phdr);

		if (s->offset != 0)
			continue;
		m = mem_at(img, s->vaddr, sizeof(Elf64_Ehdr));
		if (m == NULL || memcmp(m, img->file, sizeof(Elf64_Ehdr)) != 0)
			return loc_fail(cx, "load bias %#lx is inconsistent with %s: its ELF header is not in memory there",
							(unsigned long) img->bias, img->path);
		if (img->eh->e_phoff < s->filesz)
		{
			m = mem_at(img, s->vaddr + img->eh->e_phoff, phlen);
			if (m == NULL || memcmp(m, img->file + img->eh->e_phoff, phlen) != 0)
				return loc_fail(cx, "load bias %#lx is inconsistent with %s: program headers differ",
								(unsigned long) img->bias, img->path);
		}
		checked_header = true;
		break;
	}
	if (img->build_id_vaddr != 0)
	{
		const uint8_t *m = mem_at(img, img->build_id_vaddr, img->build_id_len);

		if (m == NULL || memcmp(m, img->build_id_file, img->build_id_len) != 0)
			return loc_fail(cx, "the build-id in memory differs from that of %s", img->path);
		checked_header = true;
	}
	if (!checked_header)
		return loc_fail(cx, "cannot verify the load bias of %s (no mapped ELF header or build-id)",
						img->path);
	return true;
}

/* ----------------------------------------------------------------
 *		Decoding helpers
 * ----------------------------------------------------------------
 */

/*
 * Target of a direct (relative) branch or call, from the raw immediate.
 * Returns false if the instruction has no relative immediate.
 */
static bool
rel_target(const ZydisDecodedInstruction *zi, uint64_t addr, uint64_t *target)
{
	int			k;

	for (k = 0; k < 2; k++)
	{
		if (zi->raw.imm[k].size != 0 && zi->raw.imm[k].is_relative)
		{
			*target = addr + zi->length + (uint64_t) zi->raw.imm[k].value.s;
			return true;
		}
	}
	return false;
}

/* RIP-relative memory operand target, from the raw ModRM/displacement */
static bool
riprel_target(const ZydisDecodedInstruction *zi, uint64_t addr, uint64_t *target)
{
	if (!(zi->attributes & ZYDIS_ATTRIB_HAS_MODRM))
		return false;
	if (zi->raw.modrm.mod != 0 || zi->raw.modrm.rm != 5 || zi->raw.disp.size != 32)
		return false;
	*target = addr + zi->length + (uint64_t) zi->raw.disp.value;
	return true;
}

static bool
is_uncond_end(const ZydisDecodedInstruction *zi)
{
	switch (zi->mnemonic)
	{
		case ZYDIS_MNEMONIC_RET:
		case ZYDIS_MNEMONIC_JMP:
		case ZYDIS_MNEMONIC_UD2:
		case ZYDIS_MNEMONIC_HLT:
		case ZYDIS_MNEMONIC_INT3:
			return true;
		default:
			return false;
	}
}

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

			if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&cx->dec, NULL,
															code + (addr - start),
															end - addr, &zi)))
			{
				/* a cut-off last instruction is expected when truncating */
				if (cx->fault == BTJIT_LOCATE_FAULT_TRUNCATED)
					break;
				return loc_fail(cx, "cannot decode %s at %s", name,
								addr_name(cx, addr, nb, sizeof(nb)));
			}
			if (rel_target(&zi, addr, &t))
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

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&cx->dec, NULL,
														code + (addr - start),
														end - addr, &zi)))
			return false;
		if (zi.mnemonic == ZYDIS_MNEMONIC_CALL && rel_target(&zi, addr, &t) && t == target)
			return true;
		addr += zi.length;
	}
	return false;
}

/* ----------------------------------------------------------------
 *		Calling-convention proof: data flow over the candidate
 * ----------------------------------------------------------------
 *
 * An abstract value says where a register or stack slot's content came
 * from.  Kinds track identity (still exactly the entry rdi, a known stack
 * address, ...); taint bits track derivation ("computed from the entry
 * edx").  The analysis is a forward fixpoint over the basic blocks;
 * merges keep a kind only if both sides agree, intersect the "must"
 * taint bits and unite the "may" bits.
 */

typedef enum AbsKind
{
	AV_OTHER = 0,				/* anything; see taint */
	AV_ARG0,					/* entry rdi, unchanged (Relation) */
	AV_ARG1,					/* entry rsi, unchanged (BTScanInsert) */
	AV_ARG2,					/* entry rdx (Buffer in edx) */
	AV_NOARG,					/* entry rcx/r8/r9: not an argument */
	AV_ENTRY,					/* caller's value of a register (rax, callee-saved) */
	AV_STACK					/* entry rsp + off */
} AbsKind;

#define T_BUF		0x01		/* must: derived from the entry edx */
#define T_PAGEBASE	0x02		/* must: derived from BufferBlocks or
								 * LocalBufferBlockPointers */
#define T_BB		0x04		/* may: from BufferBlocks */
#define T_LBP		0x08		/* may: from LocalBufferBlockPointers */
#define T_MUST		(T_BUF | T_PAGEBASE)

#define DEF_MIXED	UINT64_MAX	/* defined by different instructions */

typedef struct AbsVal
{
	uint8_t		kind;
	uint8_t		taint;
	int32_t		off;			/* AV_STACK */
	uint64_t	def;			/* instruction that last set it, 0 = entry */
} AbsVal;

typedef struct Slot
{
	int32_t		off;			/* relative to entry rsp */
	uint8_t		size;
	AbsVal		v;
} Slot;

typedef struct FlowState
{
	bool		reached;
	bool		escaped;		/* a stack address left rsp/rbp */
	AbsVal		reg[16];
	int			nslots;
	Slot		slot[MAX_SLOTS];
} FlowState;

enum
{
	R_RAX, R_RCX, R_RDX, R_RBX, R_RSP, R_RBP, R_RSI, R_RDI,
	R_R8, R_R9, R_R10, R_R11, R_R12, R_R13, R_R14, R_R15
};

typedef struct DecInsn
{
	uint64_t	addr;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	uint64_t	target;			/* direct branch/call target */
	bool		has_target;
} DecInsn;

typedef struct CompareCall
{
	uint64_t	site;
	bool		checked;
	AbsVal		rdi;
	AbsVal		rsi;
	AbsVal		rdx;
} CompareCall;

typedef struct Proof
{
	LocCtx	   *cx;
	uint64_t	start;
	uint64_t	end;
	DecInsn    *insn;
	int			ninsn;
	int		   *idx_of;			/* byte offset -> instruction index or -1 */
	int			ncompare;
	CompareCall compare[MAX_COMPARE_CALLS];
	int			nbb;			/* RIP-relative references to BufferBlocks */
	int			nlbp;			/* ... to LocalBufferBlockPointers */
	int			nret;
	uint64_t	edx_first;		/* first instruction touching rdx */
	char		violation[256];
} Proof;

static int
gpr_index(ZydisRegister r)
{
	ZydisRegister big;

	if (r == ZYDIS_REGISTER_NONE)
		return -1;
	big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	if (big >= ZYDIS_REGISTER_RAX && big <= ZYDIS_REGISTER_R15)
		return (int) (big - ZYDIS_REGISTER_RAX);
	return -1;
}

static AbsVal
av_make(uint8_t kind, uint8_t taint, uint64_t def)
{
	AbsVal		v;

	v.kind = kind;
	v.taint = taint;
	v.off = 0;
	v.def = def;
	return v;
}

static AbsVal
av_join(AbsVal a, AbsVal b)
{
	AbsVal		r;

	r.taint = (uint8_t) ((a.taint & b.taint & T_MUST) | ((a.taint | b.taint) & ~T_MUST));
	r.off = 0;
	/* "maybe not an argument" and "maybe the caller's value" are sticky */
	if (a.kind == AV_NOARG || b.kind == AV_NOARG)
		r.kind = AV_NOARG;
	else if (a.kind == AV_ENTRY || b.kind == AV_ENTRY)
		r.kind = AV_ENTRY;
	else if (a.kind == b.kind && (a.kind != AV_STACK || a.off == b.off))
	{
		r.kind = a.kind;
		r.off = a.off;
	}
	else
		r.kind = AV_OTHER;
	r.def = (a.def == b.def) ? a.def : DEF_MIXED;
	return r;
}

static bool
av_equal(AbsVal a, AbsVal b)
{
	return a.kind == b.kind && a.taint == b.taint && a.off == b.off && a.def == b.def;
}

static void
flow_entry_state(FlowState *st)
{
	int			i;

	memset(st, 0, sizeof(*st));
	st->reached = true;
	for (i = 0; i < 16; i++)
		st->reg[i] = av_make(AV_ENTRY, 0, 0);
	st->reg[R_RDI] = av_make(AV_ARG0, 0, 0);
	st->reg[R_RSI] = av_make(AV_ARG1, 0, 0);
	st->reg[R_RDX] = av_make(AV_ARG2, T_BUF, 0);
	st->reg[R_RCX] = av_make(AV_NOARG, 0, 0);
	st->reg[R_R8] = av_make(AV_NOARG, 0, 0);
	st->reg[R_R9] = av_make(AV_NOARG, 0, 0);
	st->reg[R_RSP] = av_make(AV_STACK, 0, 0);
}

/* Merge src into dst; true if dst changed */
static bool
flow_join(FlowState *dst, const FlowState *src)
{
	bool		changed = false;
	int			i;
	int			j;

	if (!dst->reached)
	{
		*dst = *src;
		return true;
	}
	if (src->escaped && !dst->escaped)
	{
		dst->escaped = true;
		changed = true;
	}
	for (i = 0; i < 16; i++)
	{
		AbsVal		v = av_join(dst->reg[i], src->reg[i]);

		if (!av_equal(v, dst->reg[i]))
		{
			dst->reg[i] = v;
			changed = true;
		}
	}
	/* keep only slots known on both sides */
	for (i = 0; i < dst->nslots;)
	{
		for (j = 0; j < src->nslots; j++)
			if (src->slot[j].off == dst->slot[i].off &&
				src->slot[j].size == dst->slot[i].size)
				break;
		if (j == src->nslots)
		{
			dst->slot[i] = dst->slot[--dst->nslots];
			changed = true;
			continue;
		}
		{
			AbsVal		v = av_join(dst->slot[i].v, src->slot[j].v);

			if (!av_equal(v, dst->slot[i].v))
			{
				dst->slot[i].v = v;
				changed = true;
			}
		}
		i++;
	}
	return changed;
}

static void
slot_write(FlowState *st, int32_t off, int size, AbsVal v)
{
	int			i;

	for (i = 0; i < st->nslots;)
	{
		Slot	   *s = &st->slot[i];

		if (s->off < off + size && off < s->off + s->size)
			*s = st->slot[--st->nslots];
		else
			i++;
	}
	if (size != 8)
		v = av_make(AV_OTHER, v.taint, v.def);
	if (st->nslots == MAX_SLOTS)
		return;					/* forgetting a slot is always safe */
	st->slot[st->nslots].off = off;
	st->slot[st->nslots].size = (uint8_t) size;
	st->slot[st->nslots].v = v;
	st->nslots++;
}

static AbsVal
slot_read(const FlowState *st, int32_t off, int size, uint64_t def)
{
	uint8_t		taint = 0;
	int			i;

	for (i = 0; i < st->nslots; i++)
	{
		const Slot *s = &st->slot[i];

		if (s->off == off && s->size == size && size == 8)
			return s->v;
		if (s->off < off + size && off < s->off + s->size)
			taint |= s->v.taint;
	}
	return av_make(AV_OTHER, taint, def);
}

static void
drop_slots(FlowState *st)
{
	st->nslots = 0;
}

/* Frame offset addressed by a memory operand, if it is a known slot */
static bool
mem_stack_off(const FlowState *st, const ZydisDecodedOperand *o, int32_t *off)
{
	int			b;

	if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || o->mem.index != ZYDIS_REGISTER_NONE)
		return false;
	if (o->mem.segment == ZYDIS_REGISTER_FS || o->mem.segment == ZYDIS_REGISTER_GS)
		return false;
	b = gpr_index(o->mem.base);
	if (b < 0 || st->reg[b].kind != AV_STACK)
		return false;
	*off = st->reg[b].off + (int32_t) o->mem.disp.value;
	return true;
}

/* Might a memory operand address our frame in a way we cannot resolve? */
static bool
mem_maybe_stack(const FlowState *st, const ZydisDecodedOperand *o)
{
	int			b = gpr_index(o->mem.base);
	int			x = gpr_index(o->mem.index);

	if (o->mem.segment == ZYDIS_REGISTER_FS || o->mem.segment == ZYDIS_REGISTER_GS)
		return false;
	if (b == R_RSP || b == R_RBP || x == R_RSP || x == R_RBP)
		return true;
	if ((b >= 0 && st->reg[b].kind == AV_STACK) ||
		(x >= 0 && st->reg[x].kind == AV_STACK))
		return true;
	return st->escaped && b >= 0;
}

static void
proof_violation(Proof *pf, const DecInsn *di, const char *what)
{
	char		text[96];
	char		nb[64];

	if (pf->violation[0] != '\0')
		return;
	if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&pf->cx->fmt, &di->zi, di->op,
													  di->zi.operand_count_visible,
													  text, sizeof(text), di->addr, NULL)))
		strcpy(text, "?");
	snprintf(pf->violation, sizeof(pf->violation), "%s at %s (%s)", what,
			 addr_name(pf->cx, di->addr, nb, sizeof(nb)), text);
}

/* Taint a RIP-relative reference carries, by what it points at */
static uint8_t
rip_taint(Proof *pf, uint64_t target)
{
	int			i;

	for (i = 0; i < pf->cx->nbb_refs; i++)
		if (pf->cx->bb_refs[i] == target)
			return T_BB | T_PAGEBASE;
	for (i = 0; i < pf->cx->nlbp_refs; i++)
		if (pf->cx->lbp_refs[i] == target)
			return T_LBP | T_PAGEBASE;
	return 0;
}

static uint8_t
read_reg_taint(Proof *pf, FlowState *st, int g, const DecInsn *di, bool check)
{
	if (check && st->reg[g].kind == AV_NOARG)
		proof_violation(pf, di, "reads a register that is not one of the three arguments");
	return st->reg[g].taint;
}

/* Taint of a memory operand's address computation (and RIP target) */
static uint8_t
mem_addr_taint(Proof *pf, FlowState *st, const DecInsn *di, const ZydisDecodedOperand *o,
			   bool check)
{
	uint8_t		t = 0;
	int			b = gpr_index(o->mem.base);
	int			x = gpr_index(o->mem.index);

	if (o->mem.base == ZYDIS_REGISTER_RIP)
		t |= rip_taint(pf, di->addr + di->zi.length + (uint64_t) o->mem.disp.value);
	if (b >= 0)
		t |= read_reg_taint(pf, st, b, di, check);
	if (x >= 0)
		t |= read_reg_taint(pf, st, x, di, check);
	return t;
}

static void
set_reg(FlowState *st, int g, AbsVal v)
{
	/* a stack address in any register but rsp/rbp may be stored or passed */
	if (v.kind == AV_STACK && g != R_RSP && g != R_RBP)
		st->escaped = true;
	st->reg[g] = v;
}

static void
flow_pop(FlowState *st, const DecInsn *di, int size, AbsVal *out)
{
	AbsVal	   *rsp = &st->reg[R_RSP];

	if (rsp->kind == AV_STACK)
	{
		*out = slot_read(st, rsp->off, size, di->addr);
		rsp->off += size;
	}
	else
		*out = av_make(AV_OTHER, 0, di->addr);
	out->def = di->addr;
}

/* Abstract effect of one instruction.  check: record proof obligations. */
static void
flow_step(Proof *pf, FlowState *st, const DecInsn *di, bool check)
{
	const ZydisDecodedInstruction *zi = &di->zi;
	const ZydisDecodedOperand *op = di->op;
	int			nvis = zi->operand_count_visible;
	int			d0 = nvis >= 1 ? (op[0].type == ZYDIS_OPERAND_TYPE_REGISTER ? gpr_index(op[0].reg.value) : -1) : -1;
	int			s1 = nvis >= 2 ? (op[1].type == ZYDIS_OPERAND_TYPE_REGISTER ? gpr_index(op[1].reg.value) : -1) : -1;
	uint8_t		rtaint = 0;
	int			i;
	int32_t		off;

	switch (zi->mnemonic)
	{
		case ZYDIS_MNEMONIC_NOP:
		case ZYDIS_MNEMONIC_ENDBR64:
			return;

		case ZYDIS_MNEMONIC_PUSH:
			{
				AbsVal		v;
				int			size = zi->operand_width / 8;

				if (d0 >= 0)
					v = st->reg[d0];	/* pushing is not a use: no NOARG check */
				else if (op[0].type == ZYDIS_OPERAND_TYPE_MEMORY)
				{
					v = av_make(AV_OTHER, mem_addr_taint(pf, st, di, &op[0], check), di->addr);
					if (mem_stack_off(st, &op[0], &off))
						v.taint |= slot_read(st, off, size, di->addr).taint;
				}
				else
					v = av_make(AV_OTHER, 0, di->addr);
				if (st->reg[R_RSP].kind == AV_STACK)
				{
					st->reg[R_RSP].off -= size;
					slot_write(st, st->reg[R_RSP].off, size, v);
				}
				else
					drop_slots(st);
				return;
			}

		case ZYDIS_MNEMONIC_POP:
			{
				AbsVal		v;
				int			size = zi->operand_width / 8;

				flow_pop(st, di, size, &v);
				if (d0 >= 0)
					set_reg(st, d0, v);
				else if (op[0].type == ZYDIS_OPERAND_TYPE_MEMORY)
				{
					if (mem_stack_off(st, &op[0], &off))
						slot_write(st, off, size, v);
					else if (mem_maybe_stack(st, &op[0]))
						drop_slots(st);
				}
				return;
			}

		case ZYDIS_MNEMONIC_LEAVE:
			{
				AbsVal		v;

				st->reg[R_RSP] = st->reg[R_RBP];
				flow_pop(st, di, 8, &v);
				st->reg[R_RBP] = v;
				return;
			}

		case ZYDIS_MNEMONIC_CALL:
		case ZYDIS_MNEMONIC_JMP:
			/* the callee's frame overwrites anything below rsp (red zone) */
			if (zi->mnemonic == ZYDIS_MNEMONIC_CALL && st->reg[R_RSP].kind == AV_STACK)
			{
				for (i = 0; i < st->nslots;)
				{
					if (st->slot[i].off < st->reg[R_RSP].off)
						st->slot[i] = st->slot[--st->nslots];
					else
						i++;
				}
			}
			if (di->has_target && di->target == pf->cx->bt_compare)
			{
				if (check)
				{
					int			k;

					for (k = 0; k < pf->ncompare; k++)
						if (pf->compare[k].site == di->addr)
							break;
					if (k < pf->ncompare)
					{
						pf->compare[k].checked = true;
						pf->compare[k].rdi = st->reg[R_RDI];
						pf->compare[k].rsi = st->reg[R_RSI];
						pf->compare[k].rdx = st->reg[R_RDX];
					}
				}
			}
			else if (zi->mnemonic == ZYDIS_MNEMONIC_CALL)
			{
				/*
				 * Another callee may write its stack-argument area just
				 * above our rsp, or anything if a frame address escaped.
				 * _bt_compare takes four register arguments, so a call to
				 * it cannot touch our frame.
				 */
				if (st->escaped || st->reg[R_RSP].kind != AV_STACK)
					drop_slots(st);
				else
				{
					for (i = 0; i < st->nslots;)
					{
						if (st->slot[i].off < st->reg[R_RSP].off + 64)
							st->slot[i] = st->slot[--st->nslots];
						else
							i++;
					}
				}
			}
			if (zi->mnemonic == ZYDIS_MNEMONIC_CALL)
			{
				static const int clobbered[] = {R_RAX, R_RCX, R_RDX, R_RSI, R_RDI,
				R_R8, R_R9, R_R10, R_R11};

				for (i = 0; i < (int) (sizeof(clobbered) / sizeof(clobbered[0])); i++)
					st->reg[clobbered[i]] = av_make(AV_OTHER, 0, di->addr);
			}
			return;

		case ZYDIS_MNEMONIC_RET:
			if (check)
			{
				pf->nret++;
				if (st->reg[R_RSP].kind != AV_STACK || st->reg[R_RSP].off != 0)
					proof_violation(pf, di, "returns with a stack pointer we cannot account for");
				else if (st->reg[R_RAX].kind == AV_ENTRY)
					proof_violation(pf, di, "may return without setting eax");
			}
			return;

		case ZYDIS_MNEMONIC_MOV:
			if (nvis == 2 && d0 >= 0 && s1 >= 0 && op[0].size == 64 && op[1].size == 64)
			{
				AbsVal		v = st->reg[s1];

				read_reg_taint(pf, st, s1, di, check);
				v.def = di->addr;
				set_reg(st, d0, v);
				return;
			}
			if (nvis == 2 && d0 >= 0 && op[0].size == 64 &&
				op[1].type == ZYDIS_OPERAND_TYPE_MEMORY && op[1].size == 64 &&
				mem_stack_off(st, &op[1], &off))
			{
				AbsVal		v = slot_read(st, off, 8, di->addr);

				if (check && v.kind == AV_NOARG)
					proof_violation(pf, di, "reads a register that is not one of the three arguments");
				v.def = di->addr;
				set_reg(st, d0, v);
				return;
			}
			if (nvis == 2 && s1 >= 0 && op[1].size == 64 &&
				op[0].type == ZYDIS_OPERAND_TYPE_MEMORY && op[0].size == 64 &&
				mem_stack_off(st, &op[0], &off))
			{
				AbsVal		v = st->reg[s1];

				read_reg_taint(pf, st, s1, di, check);
				if (v.kind == AV_STACK)
					st->escaped = true;
				slot_write(st, off, 8, v);
				return;
			}
			break;

		case ZYDIS_MNEMONIC_LEA:
			if (nvis == 2 && d0 >= 0 && op[0].size == 64 &&
				mem_stack_off(st, &op[1], &off))
			{
				AbsVal		v = av_make(AV_STACK, 0, di->addr);

				v.off = off;
				set_reg(st, d0, v);
				return;
			}
			break;

		case ZYDIS_MNEMONIC_ADD:
		case ZYDIS_MNEMONIC_SUB:
			if (nvis == 2 && d0 >= 0 && op[0].size == 64 &&
				st->reg[d0].kind == AV_STACK &&
				op[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			{
				int64_t		imm = op[1].imm.value.s;

				if (zi->mnemonic == ZYDIS_MNEMONIC_SUB)
					imm = -imm;
				st->reg[d0].off += (int32_t) imm;
				st->reg[d0].def = di->addr;
				return;
			}
			/* sub r, r: zeroing idiom */
			if (zi->mnemonic == ZYDIS_MNEMONIC_SUB && nvis == 2 && d0 >= 0 &&
				s1 >= 0 && op[0].reg.value == op[1].reg.value)
			{
				set_reg(st, d0, av_make(AV_OTHER, 0, di->addr));
				return;
			}
			break;

		case ZYDIS_MNEMONIC_XOR:
		case ZYDIS_MNEMONIC_SBB:
			/* xor r, r / sbb r, r: a constant or the carry flag only */
			if (nvis == 2 && d0 >= 0 && s1 >= 0 && op[0].reg.value == op[1].reg.value)
			{
				set_reg(st, d0, av_make(AV_OTHER, 0, di->addr));
				return;
			}
			break;

		default:
			break;
	}

	/*
	 * Generic instruction: everything written derives from everything read.
	 * A frame address that flows anywhere but rsp/rbp may be used to write
	 * the frame behind our back: note that it escaped.
	 */
	for (i = 0; i < zi->operand_count; i++)
	{
		const ZydisDecodedOperand *o = &op[i];

		if (o->type == ZYDIS_OPERAND_TYPE_REGISTER)
		{
			int			g = gpr_index(o->reg.value);

			if (g >= 0 && (o->actions & ZYDIS_OPERAND_ACTION_MASK_READ))
			{
				rtaint |= read_reg_taint(pf, st, g, di, check);
				if (st->reg[g].kind == AV_STACK)
				{
					int			k;

					for (k = 0; k < zi->operand_count; k++)
					{
						int			w = op[k].type == ZYDIS_OPERAND_TYPE_REGISTER ?
							gpr_index(op[k].reg.value) : -1;

						if ((op[k].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
							(op[k].type == ZYDIS_OPERAND_TYPE_MEMORY ||
							 (w >= 0 && w != R_RSP && w != R_RBP)))
							st->escaped = true;
					}
				}
			}
		}
		else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY)
		{
			rtaint |= mem_addr_taint(pf, st, di, o, check);
			if (o->mem.type == ZYDIS_MEMOP_TYPE_MEM &&
				(o->actions & ZYDIS_OPERAND_ACTION_MASK_READ) &&
				mem_stack_off(st, o, &off))
				rtaint |= slot_read(st, off, o->size / 8 ? o->size / 8 : 1, di->addr).taint;
		}
	}
	for (i = 0; i < zi->operand_count; i++)
	{
		const ZydisDecodedOperand *o = &op[i];

		if (!(o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (o->type == ZYDIS_OPERAND_TYPE_REGISTER)
		{
			int			g = gpr_index(o->reg.value);
			uint8_t		t = rtaint;

			if (g < 0)
				continue;
			/* 8/16-bit writes keep the rest of the register */
			if (o->size < 32)
				t |= st->reg[g].taint;
			st->reg[g] = av_make(AV_OTHER, t, di->addr);
		}
		else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.type == ZYDIS_MEMOP_TYPE_MEM)
		{
			/* rep stos/movs write a whole range, not one operand's worth */
			if (zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
								  ZYDIS_ATTRIB_HAS_REPNE))
			{
				if (mem_maybe_stack(st, o) || st->escaped)
					drop_slots(st);
			}
			else if (mem_stack_off(st, o, &off))
				slot_write(st, off, o->size / 8 ? o->size / 8 : 1,
						   av_make(AV_OTHER, rtaint, di->addr));
			else if (mem_maybe_stack(st, o))
				drop_slots(st);
		}
	}
}

static char *
insn_text(Proof *pf, uint64_t addr, char *buf, size_t len)
{
	int			i;

	if (addr == 0)
		snprintf(buf, len, "entry");
	else if (addr == DEF_MIXED)
		snprintf(buf, len, "several paths");
	else if (addr < pf->start || addr >= pf->end || (i = pf->idx_of[addr - pf->start]) < 0 ||
			 !ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&pf->cx->fmt, &pf->insn[i].zi,
														   pf->insn[i].op,
														   pf->insn[i].zi.operand_count_visible,
														   buf, len, addr, NULL)))
		snprintf(buf, len, "?");
	return buf;
}

/*
 * The entry edx must be read, as a 32-bit value, before anything writes
 * rdx: otherwise the third argument is not our 32-bit Buffer (or unused).
 * We look at the straight-line entry code only and refuse otherwise.
 */
static bool
check_edx_first_use(Proof *pf)
{
	int			i;

	for (i = 0; i < pf->ninsn; i++)
	{
		const DecInsn *di = &pf->insn[i];
		int			k;

		/* xor edx, edx and friends read nothing: they are writes */
		if ((di->zi.mnemonic == ZYDIS_MNEMONIC_XOR || di->zi.mnemonic == ZYDIS_MNEMONIC_SUB ||
			 di->zi.mnemonic == ZYDIS_MNEMONIC_SBB) &&
			di->zi.operand_count_visible == 2 &&
			di->op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			di->op[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			di->op[0].reg.value == di->op[1].reg.value &&
			gpr_index(di->op[0].reg.value) == R_RDX)
		{
			pf->edx_first = di->addr;
			proof_violation(pf, di, "clears rdx before reading it: the third argument is unused");
			return false;
		}

		for (k = 0; k < di->zi.operand_count; k++)
		{
			const ZydisDecodedOperand *o = &di->op[k];

			if (o->type == ZYDIS_OPERAND_TYPE_REGISTER && gpr_index(o->reg.value) == R_RDX)
			{
				pf->edx_first = di->addr;
				if (!(o->actions & ZYDIS_OPERAND_ACTION_MASK_READ))
				{
					proof_violation(pf, di, "writes rdx before reading it: the third argument is unused");
					return false;
				}
				if (o->size != 32)
				{
					proof_violation(pf, di, "reads the third argument with a width other than 32 bits");
					return false;
				}
				return true;
			}
			if (o->type == ZYDIS_OPERAND_TYPE_MEMORY &&
				(gpr_index(o->mem.base) == R_RDX || gpr_index(o->mem.index) == R_RDX))
			{
				/* lea r32, [rdx+k]: only the low 32 bits matter */
				pf->edx_first = di->addr;
				if (o->mem.type == ZYDIS_MEMOP_TYPE_AGEN && di->op[0].size <= 32)
					return true;
				proof_violation(pf, di, "uses the third argument as a 64-bit address");
				return false;
			}
		}
		if (is_uncond_end(&di->zi) || di->zi.meta.category == ZYDIS_CATEGORY_COND_BR ||
			di->zi.mnemonic == ZYDIS_MNEMONIC_CALL)
			break;
	}
	if (i < pf->ninsn)
		proof_violation(pf, &pf->insn[i], "does not read edx before its first branch");
	else
		snprintf(pf->violation, sizeof(pf->violation), "never reads edx");
	return false;
}

/*
 * Decode the candidate and run the analysis.  On success fills a short
 * description of what was shown into desc.
 */
static bool
prove_callconv(LocCtx *cx, uint64_t start, uint64_t end, char *desc, size_t desclen)
{
	Proof		pf;
	const uint8_t *code;
	size_t		size = end - start;
	bool	   *leader = NULL;
	int		   *block_of = NULL;
	int		   *bstart = NULL;
	FlowState  *in = NULL;
	int		   *work = NULL;
	bool	   *queued = NULL;
	int			nblocks = 0;
	int			nwork = 0;
	int			visits = 0;
	bool		ok = false;
	int			i;
	char		nb[64];

	memset(&pf, 0, sizeof(pf));
	pf.cx = cx;
	pf.start = start;
	pf.end = end;

	if (size == 0 || size > MAX_CAND_BYTES)
		return loc_fail(cx, "candidate %s is %zu bytes long: not plausibly _bt_binsrch",
						addr_name(cx, start, nb, sizeof(nb)), size);
	code = code_at(&cx->img, start, size);
	if (code == NULL)
		return loc_fail(cx, "candidate %s is not in an executable segment",
						addr_name(cx, start, nb, sizeof(nb)));

	pf.insn = malloc(sizeof(DecInsn) * size);
	pf.idx_of = malloc(sizeof(int) * size);
	leader = calloc(size + 1, sizeof(bool));
	if (pf.insn == NULL || pf.idx_of == NULL || leader == NULL)
	{
		loc_fail(cx, "out of memory");
		goto done;
	}
	for (i = 0; i < (int) size; i++)
		pf.idx_of[i] = -1;

	/* decode the whole body */
	{
		uint64_t	addr;

		for (addr = start; addr < end;)
		{
			DecInsn    *di = &pf.insn[pf.ninsn];
			int			k;

			if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&cx->dec, code + (addr - start),
													 end - addr, &di->zi, di->op)))
			{
				loc_fail(cx, "cannot decode candidate %s at %s",
						 addr_name(cx, start, nb, sizeof(nb)),
						 addr_name(cx, addr, nb, sizeof(nb)));
				goto done;
			}
			di->addr = addr;
			di->has_target = rel_target(&di->zi, addr, &di->target);
			pf.idx_of[addr - start] = pf.ninsn;
			for (k = 0; k < di->zi.operand_count; k++)
			{
				const ZydisDecodedOperand *o = &di->op[k];

				if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.base == ZYDIS_REGISTER_RIP)
				{
					uint8_t		t = rip_taint(&pf, addr + di->zi.length + (uint64_t) o->mem.disp.value);

					if (t & T_BB)
						pf.nbb++;
					if (t & T_LBP)
						pf.nlbp++;
				}
			}
			if (di->has_target && di->target == cx->bt_compare &&
				(di->zi.mnemonic == ZYDIS_MNEMONIC_CALL || di->zi.mnemonic == ZYDIS_MNEMONIC_JMP))
			{
				if (pf.ncompare == MAX_COMPARE_CALLS)
				{
					loc_fail(cx, "candidate calls _bt_compare too often");
					goto done;
				}
				pf.compare[pf.ncompare++].site = addr;
			}
			pf.ninsn++;
			addr += di->zi.length;
		}
	}

	/* basic blocks */
	leader[0] = true;
	for (i = 0; i < pf.ninsn; i++)
	{
		const DecInsn *di = &pf.insn[i];
		bool		branch = di->zi.meta.category == ZYDIS_CATEGORY_COND_BR ||
			di->zi.mnemonic == ZYDIS_MNEMONIC_JMP;

		if (di->zi.mnemonic == ZYDIS_MNEMONIC_JMP && !di->has_target)
		{
			loc_fail(cx, "candidate %s has an indirect jump at %s: control flow cannot be followed",
					 addr_name(cx, start, nb, sizeof(nb)),
					 addr_name(cx, di->addr, nb, sizeof(nb)));
			goto done;
		}
		if (branch && di->target >= start && di->target < end)
		{
			if (pf.idx_of[di->target - start] < 0)
			{
				loc_fail(cx, "candidate has a branch at %s into the middle of an instruction",
						 addr_name(cx, di->addr, nb, sizeof(nb)));
				goto done;
			}
			leader[pf.idx_of[di->target - start]] = true;
		}
		if ((branch || is_uncond_end(&di->zi)) && i + 1 < pf.ninsn)
			leader[i + 1] = true;
	}
	block_of = malloc(sizeof(int) * pf.ninsn);
	bstart = malloc(sizeof(int) * (pf.ninsn + 1));
	if (block_of == NULL || bstart == NULL)
	{
		loc_fail(cx, "out of memory");
		goto done;
	}
	for (i = 0; i < pf.ninsn; i++)
	{
		if (leader[i])
			bstart[nblocks++] = i;
		block_of[i] = nblocks - 1;
	}
	bstart[nblocks] = pf.ninsn;
	in = calloc(nblocks, sizeof(FlowState));
	work = malloc(sizeof(int) * nblocks);
	queued = calloc(nblocks, sizeof(bool));
	if (in == NULL || work == NULL || queued == NULL)
	{
		loc_fail(cx, "out of memory");
		goto done;
	}

	/* fixpoint */
	flow_entry_state(&in[0]);
	work[nwork++] = 0;
	queued[0] = true;
	while (nwork > 0)
	{
		int			b = work[--nwork];
		FlowState	st = in[b];
		int			last = bstart[b + 1] - 1;
		const DecInsn *di;
		int			succ[2];
		int			nsucc = 0;
		int			k;

		queued[b] = false;
		if (++visits > 100 * nblocks + 1000)
		{
			loc_fail(cx, "data-flow analysis of the candidate does not converge");
			goto done;
		}
		for (i = bstart[b]; i <= last; i++)
			flow_step(&pf, &st, &pf.insn[i], false);
		di = &pf.insn[last];
		if (di->zi.meta.category == ZYDIS_CATEGORY_COND_BR || di->zi.mnemonic == ZYDIS_MNEMONIC_JMP)
		{
			if (di->target >= start && di->target < end)
				succ[nsucc++] = block_of[pf.idx_of[di->target - start]];
			if (di->zi.mnemonic != ZYDIS_MNEMONIC_JMP && last + 1 < pf.ninsn)
				succ[nsucc++] = block_of[last + 1];
		}
		else if (!is_uncond_end(&di->zi) && last + 1 < pf.ninsn)
			succ[nsucc++] = block_of[last + 1];
		for (k = 0; k < nsucc; k++)
		{
			if (flow_join(&in[succ[k]], &st) && !queued[succ[k]])
			{
				queued[succ[k]] = true;
				work[nwork++] = succ[k];
			}
		}
	}

	/* one more pass over the final states, checking the obligations */
	for (i = 0; i < nblocks; i++)
	{
		FlowState	st = in[i];
		int			k;

		if (!st.reached)
			continue;
		for (k = bstart[i]; k < bstart[i + 1]; k++)
			flow_step(&pf, &st, &pf.insn[k], true);
	}

	if (pf.violation[0] == '\0')
		check_edx_first_use(&pf);

	if (cx->fault == BTJIT_LOCATE_FAULT_NO_CALLCONV)
	{
		loc_fail(cx, "calling-convention proof of %s failed on purpose",
				 addr_name(cx, start, nb, sizeof(nb)));
		goto done;
	}
	if (pf.violation[0] != '\0')
	{
		loc_fail(cx, "calling convention of candidate %s not proven: it %s",
				 addr_name(cx, start, nb, sizeof(nb)), pf.violation);
		goto done;
	}
	if (pf.nbb == 0 || pf.nlbp == 0)
	{
		loc_fail(cx, "candidate %s does not reference both BufferBlocks and LocalBufferBlockPointers (%d, %d references): its third argument is not shown to be a Buffer",
				 addr_name(cx, start, nb, sizeof(nb)), pf.nbb, pf.nlbp);
		goto done;
	}
	if (pf.nret == 0)
	{
		loc_fail(cx, "candidate %s never returns", addr_name(cx, start, nb, sizeof(nb)));
		goto done;
	}
	for (i = 0; i < pf.ncompare; i++)
	{
		CompareCall *c = &pf.compare[i];

		if (!c->checked)
		{
			loc_fail(cx, "the call to _bt_compare at %s is not reachable in our analysis",
					 addr_name(cx, c->site, nb, sizeof(nb)));
			goto done;
		}
		if (c->rdi.kind != AV_ARG0)
		{
			loc_fail(cx, "at the call to _bt_compare at %s, rdi is not shown to be the entry rdi (Relation)",
					 addr_name(cx, c->site, nb, sizeof(nb)));
			goto done;
		}
		if (c->rsi.kind != AV_ARG1)
		{
			loc_fail(cx, "at the call to _bt_compare at %s, rsi is not shown to be the entry rsi (BTScanInsert)",
					 addr_name(cx, c->site, nb, sizeof(nb)));
			goto done;
		}
		if ((c->rdx.taint & T_MUST) != T_MUST)
		{
			loc_fail(cx, "at the call to _bt_compare at %s, rdx is not shown to be the page of the entry Buffer (on some path it does not derive from %s)",
					 addr_name(cx, c->site, nb, sizeof(nb)),
					 !(c->rdx.taint & T_BUF) && !(c->rdx.taint & T_PAGEBASE) ?
					 "the entry edx nor from BufferBlocks/LocalBufferBlockPointers" :
					 !(c->rdx.taint & T_BUF) ? "the entry edx" :
					 "BufferBlocks/LocalBufferBlockPointers");
			goto done;
		}
	}
	if (pf.ncompare == 0)
	{
		loc_fail(cx, "candidate %s does not call _bt_compare", addr_name(cx, start, nb, sizeof(nb)));
		goto done;
	}

	{
		CompareCall *c = &pf.compare[0];
		char		t1[80];
		char		t2[80];
		char		t3[80];
		char		t4[80];

		snprintf(desc, desclen,
				 "%d call%s to _bt_compare (first at %s): rdi=entry rdi [%s], rsi=entry rsi [%s], rdx=page from Buffer edx [first use: %s] via %s%s%s [%s]",
				 pf.ncompare, pf.ncompare > 1 ? "s" : "",
				 addr_name(cx, c->site, nb, sizeof(nb)),
				 insn_text(&pf, c->rdi.def, t1, sizeof(t1)),
				 insn_text(&pf, c->rsi.def, t2, sizeof(t2)),
				 insn_text(&pf, pf.edx_first, t3, sizeof(t3)),
				 (c->rdx.taint & T_BB) ? "BufferBlocks" : "",
				 ((c->rdx.taint & T_BB) && (c->rdx.taint & T_LBP)) ? "|" : "",
				 (c->rdx.taint & T_LBP) ? "LocalBufferBlockPointers" : "",
				 insn_text(&pf, c->rdx.def, t4, sizeof(t4)));
	}
	ok = true;

done:
	free(pf.insn);
	free(pf.idx_of);
	free(leader);
	free(block_of);
	free(bstart);
	free(in);
	free(work);
	free(queued);
	return ok;
}

/* ----------------------------------------------------------------
 *		Relocations: data references to the candidate
 * ----------------------------------------------------------------
 */

/*
 * Look at every relocation.  Collect GOT slots of BufferBlocks and
 * LocalBufferBlockPointers (for the proof, should code reach them through
 * the GOT), and count relocations that would store the candidate's address
 * (if cand != 0).
 */
static bool
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
			size_t		n = sh->sh_size / sizeof(Elf64_Rela);
			size_t		k;

			if (sh->sh_entsize != sizeof(Elf64_Rela))
				return loc_fail(cx, "relocation section %d has an unexpected entry size", i);
			for (k = 0; k < n; k++)
			{
				Elf64_Rela r;
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
		}
		else
		{
			/* SHT_RELR: relative relocations, addends stored in place */
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
	}

	/* A non-PIE binary stores absolute addresses without relocations. */
	if (cand != 0 && img->eh->e_type == ET_EXEC)
	{
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

typedef enum RefKind
{
	REF_NONE,
	REF_CALL,
	REF_JUMP,
	REF_RIP,
	REF_ABS,
	REF_DOUBT
} RefKind;

typedef struct Ref
{
	uint64_t	site;			/* instruction address */
	RefKind		kind;
} Ref;

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

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&cx->dec, NULL, code + (addr - start),
														end - addr, &zi)))
		{
			if (in_fde)
				return REF_DOUBT;
			addr++;				/* padding between functions */
			continue;
		}
		if (h < addr + zi.length)
		{
			*site = addr;
			if (rel_target(&zi, addr, &t) && t == cand)
			{
				for (i = 0; i < 2; i++)
					if (zi.raw.imm[i].is_relative && zi.raw.imm[i].offset == rel)
						return zi.mnemonic == ZYDIS_MNEMONIC_CALL ? REF_CALL : REF_JUMP;
			}
			if (riprel_target(&zi, addr, &t) && t == cand && zi.raw.disp.offset == rel)
				return REF_RIP;
			if (img->eh->e_type == ET_EXEC)
			{
				if (zi.raw.disp.size == 32 && zi.raw.disp.offset == rel &&
					(uint64_t) (uint32_t) zi.raw.disp.value == cand &&
					!riprel_target(&zi, addr, &t))
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

static bool
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

/* ----------------------------------------------------------------
 *		The locator
 * ----------------------------------------------------------------
 */

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

static bool
locate_common(LocCtx *cx, BtjitLocation *loc)
{
	Group	   *ga = NULL;
	Group	   *gb = NULL;
	uint64_t	common[MAX_CALLS];
	int			ncommon = 0;
	int			ncommon_exported = 0;
	uint64_t	cands[MAX_CANDS];
	int			ncands = 0;
	const Fde  *cf;
	uint64_t	cand;
	int			ntaken;
	size_t		nrelocs;
	Ref			refs[MAX_REFS];
	int			nrefs;
	int			nhits = 0;
	uint64_t	nbytes;
	char		proof[512];
	char		nb[64];
	char		nb2[64];
	const char *second_name;
	uint64_t	second;
	bool		ok = false;
	int			i;
	int			j;

	if (!load_fdes(cx))
		return false;
	if (!resolve(cx, "_bt_search", &cx->bt_search, NULL, true) ||
		!resolve(cx, "_bt_first", &cx->bt_first, NULL, true) ||
		!resolve(cx, "_bt_compare", &cx->bt_compare, NULL, true) ||
		!resolve(cx, "BufferBlocks", &cx->bufblocks, &cx->bufblocks_symidx, false) ||
		!resolve(cx, "LocalBufferBlockPointers", &cx->localbufptrs,
				 &cx->localbufptrs_symidx, false))
		return false;
	cx->bb_refs[cx->nbb_refs++] = cx->bufblocks;
	cx->lbp_refs[cx->nlbp_refs++] = cx->localbufptrs;

	second_name = "_bt_first";
	second = cx->bt_first;
	if (cx->fault == BTJIT_LOCATE_FAULT_WRONG_CALLER)
	{
		if (!resolve(cx, "_bt_binsrch_insert", &cx->bt_binsrch_insert, NULL, true))
			return false;
		second_name = "_bt_binsrch_insert";
		second = cx->bt_binsrch_insert;
	}

	ga = calloc(1, sizeof(Group));
	gb = calloc(1, sizeof(Group));
	if (ga == NULL || gb == NULL)
	{
		loc_fail(cx, "out of memory");
		goto done;
	}
	if (!scan_group(cx, ga, cx->bt_search, "_bt_search") ||
		!scan_group(cx, gb, second, second_name))
		goto done;

	/* functions called from both */
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
		if (!body_calls(cx, cf->start, cf->end, cx->bt_compare))
			continue;
		if (ncands < MAX_CANDS)
			cands[ncands++] = t;
	}
	if (ncands == 0)
	{
		if (ncommon == ncommon_exported)
			loc_fail(cx, "no non-exported function is called from both _bt_search (%d bodies, %d calls) and %s (%d calls): %d common callees, all exported%s",
					 ga->nbodies, ga->ncalls, second_name, gb->ncalls, ncommon,
					 cx->fault == BTJIT_LOCATE_FAULT_TRUNCATED ? " (callers decoded only partly)" : "");
		else
			loc_fail(cx, "none of the %d non-exported functions called from both _bt_search and %s starts an FDE and calls _bt_compare",
					 ncommon - ncommon_exported, second_name);
		goto done;
	}
	if (ncands > 1)
	{
		loc_fail(cx, "%d functions called from both _bt_search and %s call _bt_compare (%s, %s%s): ambiguous",
				 ncands, second_name, addr_name(cx, cands[0], nb, sizeof(nb)),
				 addr_name(cx, cands[1], nb2, sizeof(nb2)), ncands > 2 ? ", ..." : "");
		goto done;
	}
	cand = cands[0];
	cf = fde_starting_at(&cx->img, cand);

	/* data references, and the GOT slots the proof may need */
	if (!scan_relocs(cx, cand, &ntaken, &nrelocs))
		goto done;
	if (!prove_callconv(cx, cf->start, cf->end, proof, sizeof(proof)))
		goto done;
	if (ntaken > 0)
	{
		loc_fail(cx, "the address of %s is taken (%d relocation%s store it): calls through pointers would be missed",
				 addr_name(cx, cand, nb, sizeof(nb)), ntaken, ntaken > 1 ? "s" : "");
		goto done;
	}

	/* every code reference, compared with the calls we saw in the callers */
	if (!sweep_refs(cx, cand, refs, &nrefs, &nhits, &nbytes))
		goto done;
	for (i = 0; i < nrefs; i++)
	{
		bool		known = false;

		if (refs[i].kind == REF_RIP || refs[i].kind == REF_ABS)
		{
			loc_fail(cx, "the address of %s is taken by the instruction at %s",
					 addr_name(cx, cand, nb, sizeof(nb)),
					 addr_name(cx, refs[i].site, nb2, sizeof(nb2)));
			goto done;
		}
		for (j = 0; j < ga->ncalls && !known; j++)
			known = (ga->calls[j].site == refs[i].site && ga->calls[j].target == cand);
		for (j = 0; j < gb->ncalls && !known; j++)
			known = (gb->calls[j].site == refs[i].site && gb->calls[j].target == cand);
		if (!known || refs[i].kind != REF_CALL)
		{
			loc_fail(cx, "%s is also reached by a %s at %s, outside _bt_search and %s",
					 addr_name(cx, cand, nb, sizeof(nb)),
					 refs[i].kind == REF_CALL ? "call" : "jump",
					 addr_name(cx, refs[i].site, nb2, sizeof(nb2)), second_name);
			goto done;
		}
	}
	/* ... and the other way round: the sweep must have seen each call */
	for (i = 0; i < ga->ncalls + gb->ncalls; i++)
	{
		const CallSite *c = (i < ga->ncalls) ? &ga->calls[i] : &gb->calls[i - ga->ncalls];

		if (c->target != cand)
			continue;
		for (j = 0; j < nrefs; j++)
			if (refs[j].site == c->site)
				break;
		if (j == nrefs)
		{
			loc_fail(cx, "the sweep of the code missed the call at %s: refusing",
					 addr_name(cx, c->site, nb, sizeof(nb)));
			goto done;
		}
	}
	if (nrefs > BTJIT_MAX_CALLSITES)
	{
		loc_fail(cx, "%s has %d call sites, more than %d", addr_name(cx, cand, nb, sizeof(nb)),
				 nrefs, BTJIT_MAX_CALLSITES);
		goto done;
	}

	/* success: fill in the result */
	loc->binsrch = cx->img.bias + cand;
	loc->binsrch_size = cf->end - cf->start;
	loc->ncallsites = nrefs;
	for (i = 0; i < nrefs; i++)
		loc->callsites[i] = cx->img.bias + refs[i].site;
	loc->load_bias = cx->img.bias;
	snprintf(loc->build_id, sizeof(loc->build_id), "%s", cx->img.build_id);

	/*
	 * _bt_compare is exported, so its calling convention is its public
	 * prototype; report its extent for the caller to redirect it too.
	 */
	{
		const Fde  *cmpf = fde_starting_at(&cx->img, cx->bt_compare);

		loc->compare = cmpf ? cx->img.bias + cx->bt_compare : 0;
		loc->compare_size = cmpf ? cmpf->end - cmpf->start : 0;
	}

	{
		char	   *ev = loc->evidence;
		size_t		evlen = sizeof(loc->evidence);

		ev[0] = '\0';
		buf_append(ev, evlen, "_bt_binsrch=%s size %#zx: only non-exported callee shared by _bt_search",
				   addr_name(cx, cand, nb, sizeof(nb)), (size_t) (cf->end - cf->start));
		for (i = 1; i < ga->nbodies; i++)
			buf_append(ev, evlen, "%s%s", i == 1 ? " (via jmp to " : ", ",
					   addr_name(cx, ga->start[i], nb, sizeof(nb)));
		if (ga->nbodies > 1)
			buf_append(ev, evlen, ")");
		buf_append(ev, evlen, " and %s that calls _bt_compare (of %d common callees); %s; refs: ",
				   second_name, ncommon, proof);
		for (i = 0; i < nrefs; i++)
			buf_append(ev, evlen, "%scall@%s", i ? ", " : "",
					   addr_name(cx, refs[i].site, nb, sizeof(nb)));
		buf_append(ev, evlen, " only (swept %#llx code bytes, %d filter hits; %zu relocations, none to it); build-id %.12s",
				   (unsigned long long) nbytes, nhits, nrelocs,
				   cx->img.build_id[0] ? cx->img.build_id : "none");
	}
	ok = true;

done:
	free(ga);
	free(gb);
	return ok;
}

static void
ctx_init(LocCtx *cx, BtjitLocateFault fault, BtjitLocation *loc, char *why, size_t whylen)
{
	memset(cx, 0, sizeof(*cx));
	cx->fault = fault;
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

bool
btjit_locate_binsrch(BtjitLocateFault fault, BtjitLocation *loc,
					 char *why, size_t whylen)
{
	LocCtx		cx;
	MainInfo	mi;
	ssize_t		n;
	bool		ok = false;

	ctx_init(&cx, fault, loc, why, whylen);

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
	ok = locate_common(&cx, loc);

done:
	image_close(&cx.img);
	return ok;
}

bool
btjit_locate_binsrch_at(const char *path, uintptr_t load_bias,
						BtjitLocateFault fault, BtjitLocation *loc,
						char *why, size_t whylen)
{
	LocCtx		cx;
	bool		ok = false;

	ctx_init(&cx, fault, loc, why, whylen);
	snprintf(loc->binary_path, sizeof(loc->binary_path), "%s", path);
	if (image_open(&cx, loc->binary_path, path, load_bias) && check_bias(&cx))
		ok = locate_common(&cx, loc);
	image_close(&cx.img);
	return ok;
}
