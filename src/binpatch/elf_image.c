/*-------------------------------------------------------------------------
 *
 * elf_image.c
 *	  The locator's view of the server binary: its ELF file mapped
 *	  read-only, the PT_LOAD segments that say where each part is loaded,
 *	  the dynamic symbol table, the GNU build-id, and the table of function
 *	  extents built from .eh_frame (one FDE per function).
 *
 * Code is always read from memory (load bias + vaddr), which is what runs
 * and what will be patched; the tables come from the file.  check_bias()
 * makes sure the two agree before anything is decoded.  Everything is
 * bounds-checked: a malformed file makes the locator refuse, never crash.
 *
 * Plain C over <elf.h>, no PostgreSQL headers (see binpatch.h).
 *
 * src/elf_image.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"

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

/* ----------------------------------------------------------------
 *		ELF image access
 * ----------------------------------------------------------------
 */

/* In-memory code bytes at vaddr, if [vaddr, vaddr+len) is executable */
const uint8_t *
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
const uint8_t *
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
const uint8_t *
section_data(const Image *img, const Elf64_Shdr *sh)
{
	if (sh->sh_type == SHT_NOBITS)
		return NULL;
	if (sh->sh_offset > img->filesize || sh->sh_size > img->filesize - sh->sh_offset)
		return NULL;
	return img->file + sh->sh_offset;
}

/* The section header named name, or NULL */
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

/* The name of a dynamic symbol, "" if its offset is out of bounds */
static const char *
sym_name(const Image *img, const Elf64_Sym *sym)
{
	if (sym->st_name >= img->dynstrsz)
		return "";
	return img->dynstr + sym->st_name;
}

/* A defined dynamic symbol by name; NULL if absent */
const Elf64_Sym *
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
const char *
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

/* Read an unsigned LEB128 value at *pp, advancing it; false if cut off */
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

/* Read a signed LEB128 value at *pp, advancing it; false if cut off */
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
 * Read a little-endian value of size bytes (2, 4 or 8), sign-extended if
 * is_signed, and advance *pp past it.
 */
static bool
read_fixed(const uint8_t **pp, const uint8_t *end, int size, bool is_signed,
		   uint64_t *out)
{
	uint64_t	v = 0;

	if (end - *pp < size)
		return false;
	memcpy(&v, *pp, size);		/* x86-64 is little-endian */
	if (is_signed && size < 8 && (v & ((uint64_t) 1 << (size * 8 - 1))))
		v |= ~(uint64_t) 0 << (size * 8);
	*pp += size;
	*out = v;
	return true;
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
			if (!read_fixed(&p, end, 8, false, &v))
				return false;
			break;
		case DW_EH_PE_udata4:
		case DW_EH_PE_sdata4:
			if (!read_fixed(&p, end, 4, (enc & 0x0f) == DW_EH_PE_sdata4, &v))
				return false;
			break;
		case DW_EH_PE_udata2:
		case DW_EH_PE_sdata2:
			if (!read_fixed(&p, end, 2, (enc & 0x0f) == DW_EH_PE_sdata2, &v))
				return false;
			break;
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

/* The FDE pointer encodings of the CIEs seen so far, of which there are few */
typedef struct CieCache
{
	const uint8_t *cie[8];
	uint8_t		enc[8];
	int			n;
} CieCache;

/*
 * Parse the FDE at fde (its length field, loaded at fde_vaddr) into an
 * extent, using cc to cache CIE encodings.  *is_cie: the record is a CIE.
 */
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

/* qsort order of the FDE table: by start address */
static int
fde_cmp(const void *a, const void *b)
{
	const Fde  *x = a;
	const Fde  *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/*
 * Take the FDE table from .eh_frame_hdr's binary search table (section
 * hdrs) if it has the usual encoding; every entry is checked against the
 * FDE it points to.  *used is false if the table is not usable, in which
 * case the caller walks .eh_frame instead.
 */
static bool
fdes_from_hdr(LocCtx *cx, const Elf64_Shdr *ehs, const Elf64_Shdr *hdrs,
			  const uint8_t *sec, CieCache *cc, bool *used)
{
	Image	   *img = &cx->img;
	const uint8_t *secend = sec + ehs->sh_size;
	const uint8_t *h = section_data(img, hdrs);
	const uint8_t *hend = h + hdrs->sh_size;
	const uint8_t *p = h + 4;
	uint64_t	ehptr;
	uint64_t	count;
	size_t		i;

	*used = false;
	if (!(h[0] == 1 && h[3] == (DW_EH_PE_datarel | DW_EH_PE_sdata4) &&
		  read_encoded(&p, hend, h[1], hdrs->sh_addr + (uint64_t) (p - h),
					   hdrs->sh_addr, &ehptr) &&
		  read_encoded(&p, hend, h[2], hdrs->sh_addr + (uint64_t) (p - h),
					   hdrs->sh_addr, &count) &&
		  ehptr == ehs->sh_addr &&
		  count <= (uint64_t) (hend - p) / 8))
		return true;

	*used = true;
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
					   cc, &f, &is_cie) || is_cie)
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

/* Build the FDE table by walking every record of .eh_frame, then sort it */
static bool
fdes_from_walk(LocCtx *cx, const Elf64_Shdr *ehs, const uint8_t *sec, CieCache *cc)
{
	Image	   *img = &cx->img;
	const uint8_t *secend = sec + ehs->sh_size;
	const uint8_t *p = sec;
	size_t		cap = 1024;

	img->fde = malloc(sizeof(Fde) * cap);
	if (img->fde == NULL)
		return loc_fail(cx, "out of memory");
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
					   cc, &f, &is_cie))
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
	qsort(img->fde, img->nfde, sizeof(Fde), fde_cmp);
	return true;
}

/*
 * Build the sorted table of function extents: from .eh_frame_hdr's binary
 * search table when it has the usual encoding, else by walking .eh_frame.
 */
bool
load_fdes(LocCtx *cx)
{
	Image	   *img = &cx->img;
	const Elf64_Shdr *ehs = section_by_name(img, ".eh_frame");
	const Elf64_Shdr *hdrs = section_by_name(img, ".eh_frame_hdr");
	const uint8_t *sec;
	CieCache	cc;

	memset(&cc, 0, sizeof(cc));
	if (ehs == NULL || (sec = section_data(img, ehs)) == NULL)
		return loc_fail(cx, "%s has no .eh_frame section: cannot find function extents",
						img->path);

	if (hdrs != NULL && section_data(img, hdrs) != NULL && hdrs->sh_size >= 12)
	{
		bool		used;

		if (!fdes_from_hdr(cx, ehs, hdrs, sec, &cc, &used))
			return false;
		if (used)
			return true;
	}

	/* No usable search table: walk .eh_frame. */
	return fdes_from_walk(cx, ehs, sec, &cc);
}

/* Index of the last FDE starting at or before vaddr, or -1 */
ssize_t
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
const Fde *
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

/* Map the file at open_path read-only into img->file */
static bool
image_map_file(LocCtx *cx, const char *open_path)
{
	Image	   *img = &cx->img;
	struct stat st;
	int			fd;
	void	   *map;

	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return loc_fail(cx, "cannot open %s: %s", open_path, strerror(errno));
	if (fstat(fd, &st) != 0 || st.st_size < (off_t) sizeof(Elf64_Ehdr))
	{
		close(fd);
		return loc_fail(cx, "%s is not an ELF file", img->path);
	}
	map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return loc_fail(cx, "cannot map %s: %s", img->path, strerror(errno));
	img->file = map;
	img->filesize = (size_t) st.st_size;
	return true;
}

/* A name for an ELF machine other than x86-64, for the refusal message */
static const char *
machine_name(unsigned int machine)
{
	switch (machine)
	{
		case 3:					/* EM_386 */
			return "i386";
		case 40:				/* EM_ARM */
			return "32-bit ARM";
		case 183:				/* EM_AARCH64 */
			return "aarch64";
		case 21:				/* EM_PPC64 */
			return "ppc64";
		case 22:				/* EM_S390 */
			return "s390x";
		case 243:				/* EM_RISCV */
			return "riscv";
		case 258:				/* EM_LOONGARCH */
			return "loongarch";
		default:
			return "another architecture";
	}
}

/*
 * Check the ELF header: a 64-bit little-endian x86-64 executable whose
 * program and section header tables lie within the file.  A server for
 * another architecture is refused here, by its e_machine, before anything
 * is decoded: the locator and the redirect only understand x86-64 code.
 */
static bool
image_check_header(LocCtx *cx)
{
	Image	   *img = &cx->img;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *) img->file;
	const char *path = img->path;

	img->eh = eh;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return loc_fail(cx, "%s is not an ELF file", path);
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return loc_fail(cx, "%s is a big-endian ELF file: only x86-64 servers are supported", path);
	/* e_machine lies at the same place in 32- and 64-bit headers */
	if (eh->e_machine != EM_X86_64)
		return loc_fail(cx, "%s is a server for %s (ELF e_machine %u), not x86-64: only x86-64 servers are supported",
						path, machine_name(eh->e_machine), (unsigned int) eh->e_machine);
	if (eh->e_ident[EI_CLASS] != ELFCLASS64)
		return loc_fail(cx, "%s is not a 64-bit ELF file", path);
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
	return true;
}

/* Record the PT_LOAD segments: where each part of the file is loaded */
static bool
image_read_segments(LocCtx *cx)
{
	Image	   *img = &cx->img;
	const Elf64_Ehdr *eh = img->eh;
	int			i;

	for (i = 0; i < eh->e_phnum; i++)
	{
		const Elf64_Phdr *ph = (const Elf64_Phdr *) (img->file + eh->e_phoff) + i;

		if (ph->p_type != PT_LOAD)
			continue;
		if (img->nseg == MAX_SEGS || ph->p_filesz > ph->p_memsz ||
			ph->p_offset > img->filesize || ph->p_filesz > img->filesize - ph->p_offset)
			return loc_fail(cx, "%s has unexpected PT_LOAD segments", img->path);
		img->seg[img->nseg].vaddr = ph->p_vaddr;
		img->seg[img->nseg].memsz = ph->p_memsz;
		img->seg[img->nseg].filesz = ph->p_filesz;
		img->seg[img->nseg].offset = ph->p_offset;
		img->seg[img->nseg].flags = ph->p_flags;
		img->nseg++;
	}
	return true;
}

/*
 * Look for a GNU build-id note in the note section sh; if found, record it
 * as hex, and where its descriptor lies in the file and (if the section is
 * loaded) in memory, for check_bias().
 */
static void
image_read_build_id(Image *img, const Elf64_Shdr *sh)
{
	const uint8_t *p = section_data(img, sh);
	const uint8_t *end;

	if (p == NULL)
		return;
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

/*
 * Read the section headers: the section name table, the dynamic symbol
 * table with its strings (required), and the build-id note (optional).
 */
static bool
image_read_sections(LocCtx *cx)
{
	Image	   *img = &cx->img;
	const Elf64_Ehdr *eh = img->eh;
	const char *path = img->path;
	int			i;

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
			image_read_build_id(img, sh);
	}
	if (img->dynsym == NULL)
		return loc_fail(cx, "%s has no dynamic symbol table", path);
	return true;
}

/*
 * Open the binary for analysis: map the file at open_path (path is the
 * name used in messages), check its headers, and read its segments and
 * sections.  bias is where it is (said to be) loaded; check_bias() checks
 * that.  The caller calls image_close() whatever the result.
 */
bool
image_open(LocCtx *cx, const char *path, const char *open_path, uintptr_t bias)
{
	Image	   *img = &cx->img;
	const char *slash;

	img->path = path;
	slash = strrchr(path, '/');
	img->name = slash ? slash + 1 : path;
	img->bias = bias;

	return image_map_file(cx, open_path) &&
		image_check_header(cx) &&
		image_read_segments(cx) &&
		image_read_sections(cx);
}

/* Unmap the file and free the FDE table */
void
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
bool
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

/*
 * Start a locate call on the binary at path, mapped at load_bias: an empty
 * context whose refusals go to why, the decoder, the image checked against
 * its mapping and its FDEs.  No relocation is taken for BufferBlocks' here
 * (only the page search's proof needs those).  False, with the reason in
 * why, if the image cannot be used; the caller closes it either way.
 */
bool
loc_open_image(LocCtx *cx, const char *path, uintptr_t load_bias,
			   char *why, size_t whylen)
{
	memset(cx, 0, sizeof(*cx));
	cx->why = why;
	cx->whylen = whylen;
	cx->bufblocks_symidx = (size_t) -1;
	cx->localbufptrs_symidx = (size_t) -1;
	if (why && whylen)
		why[0] = '\0';
	ZydisDecoderInit(&cx->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisFormatterInit(&cx->fmt, ZYDIS_FORMATTER_STYLE_INTEL);
	return image_open(cx, path, path, load_bias) && check_bias(cx) &&
		load_fdes(cx);
}
