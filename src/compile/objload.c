/*-------------------------------------------------------------------------
 *
 * objload.c
 *	  Link a compiled key shape from the object cache without LLVM.
 *
 * A backend that finds its shape in the object cache must not have to map
 * LLVM (14-25 ms of relocations and constructors per process) just to
 * link a few kilobytes of code.  The objects are ours: LLVM's x86-64 output
 * for one template, large code model, static relocation model.  Their
 * relocations are R_X86_64_64 for every symbol and constant-pool reference
 * and R_X86_64_PC64 in .eh_frame; the PC-relative 32-bit forms are handled
 * too, with a range check.  Anything else (GOT-relative forms, TLS, COMMON
 * symbols, other machines) is refused with a reason, and the caller then
 * compiles the shape with LLVM instead.
 *
 * Layout: the allocated sections go into one anonymous mapping in two
 * page-aligned groups, code with read-only data (read + execute) and
 * writable data (read + write), so no page is both writable and executable
 * once linked.  Read-only data shares the code's pages: a group of its own
 * cost every link a page (the constant pool and jump tables of a shape are
 * under 1 kB) and an mprotect, which on this project's VM are a few
 * microseconds each (bench/README.md, "What a link costs").  .eh_frame is
 * not loaded: nothing registers a linked shape's unwind tables.
 *
 *-------------------------------------------------------------------------
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "objload.h"

enum
{
	GROUP_TEXT,					/* code and read-only data: r-x */
	GROUP_DATA,					/* writable data: rw- */
	NGROUPS
};

typedef struct LinkState
{
	const char *image;
	size_t		len;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;		/* section headers */
	const Elf64_Sym *syms;
	size_t		nsyms;
	const char *strtab;
	size_t		strtab_len;
	size_t	   *offset;			/* per section: offset in the mapping */
	uint64_t   *symaddr;		/* per symbol: its address, once resolved */
	unsigned char *symdone;		/* per symbol: symaddr[] is set */
	char	   *base;			/* the mapping */
	size_t		size;
	const BtjitObjectSymbol *known; /* undefined symbols resolved without
									 * dlsym */
	int			nknown;
	char	   *why;
	size_t		whylen;
} LinkState;

static bool
fail(LinkState *st, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static bool
fail(LinkState *st, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(st->why, st->whylen, fmt, ap);
	va_end(ap);
	return false;
}

/*
 * Sections copied into the mapping: the allocated ones, but the unwind
 * tables (SHT_X86_64_UNWIND, as LLVM emits .eh_frame), which nothing
 * registers; relocations against them are skipped like those of debug
 * sections.
 */
static bool
is_loaded(const Elf64_Shdr *s)
{
	return (s->sh_flags & SHF_ALLOC) != 0 && s->sh_size > 0 &&
		s->sh_type != SHT_X86_64_UNWIND;
}

static int
group_of(const Elf64_Shdr *s)
{
	if (s->sh_flags & SHF_WRITE)
		return GROUP_DATA;
	return GROUP_TEXT;
}

/* Code: executable and not writable (a writable one is refused). */
static bool
is_code(const Elf64_Shdr *s)
{
	return (s->sh_flags & SHF_EXECINSTR) != 0 && (s->sh_flags & SHF_WRITE) == 0;
}

static bool
in_image(LinkState *st, uint64_t off, uint64_t size)
{
	return off <= st->len && size <= st->len - off;
}

/* Check the headers; find the symbol table and its strings. */
static bool
read_headers(LinkState *st)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *) st->image;

	if (st->len < sizeof(Elf64_Ehdr) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return fail(st, "not an ELF file");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
		eh->e_type != ET_REL || eh->e_machine != EM_X86_64)
		return fail(st, "not an x86-64 relocatable object");
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
		!in_image(st, eh->e_shoff, (uint64_t) eh->e_shnum * sizeof(Elf64_Shdr)) ||
		eh->e_shoff % _Alignof(Elf64_Shdr) != 0)
		return fail(st, "section headers out of bounds");
	st->eh = eh;
	st->sh = (const Elf64_Shdr *) (st->image + eh->e_shoff);

	for (int i = 0; i < eh->e_shnum; i++)
	{
		const Elf64_Shdr *s = &st->sh[i];

		if (s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL &&
			!in_image(st, s->sh_offset, s->sh_size))
			return fail(st, "section %ld out of bounds", (long) i);
		if (s->sh_addralign > 4096 ||
			(s->sh_addralign & (s->sh_addralign - 1)) != 0)
			return fail(st, "section %ld has an unusable alignment", (long) i);
		if ((s->sh_flags & SHF_ALLOC) && (s->sh_flags & SHF_EXECINSTR) &&
			(s->sh_flags & SHF_WRITE))
			return fail(st, "section %ld is writable and executable", (long) i);
		if (s->sh_type == SHT_SYMTAB)
		{
			const Elf64_Shdr *strs;

			if (st->syms != NULL || s->sh_entsize != sizeof(Elf64_Sym) ||
				s->sh_link >= eh->e_shnum || s->sh_offset % _Alignof(Elf64_Sym) != 0)
				return fail(st, "unusable symbol table");
			strs = &st->sh[s->sh_link];
			if (strs->sh_type != SHT_STRTAB || strs->sh_size == 0 ||
				st->image[strs->sh_offset + strs->sh_size - 1] != '\0')
				return fail(st, "unusable symbol string table");
			st->syms = (const Elf64_Sym *) (st->image + s->sh_offset);
			st->nsyms = s->sh_size / sizeof(Elf64_Sym);
			st->strtab = st->image + strs->sh_offset;
			st->strtab_len = strs->sh_size;
		}
	}
	if (st->syms == NULL)
		return fail(st, "no symbol table");
	return true;
}

static const char *
symbol_name(LinkState *st, const Elf64_Sym *sym)
{
	return sym->st_name < st->strtab_len ? st->strtab + sym->st_name : "?";
}

/* Place the loaded sections and copy them into a fresh mapping. */
static bool
map_sections(LinkState *st)
{
	size_t		page = (size_t) sysconf(_SC_PAGESIZE);
	size_t		pos = 0;

	for (int g = 0; g < NGROUPS; g++)
	{
		pos = (pos + page - 1) & ~(page - 1);
		for (int i = 0; i < st->eh->e_shnum; i++)
		{
			const Elf64_Shdr *s = &st->sh[i];
			size_t		align = s->sh_addralign ? s->sh_addralign : 1;

			if (!is_loaded(s) || group_of(s) != g)
				continue;
			if (s->sh_size > (1UL << 30))
				return fail(st, "section %ld is too large", (long) i);
			pos = (pos + align - 1) & ~(align - 1);
			st->offset[i] = pos;
			pos += s->sh_size;
		}
	}
	st->size = (pos + page - 1) & ~(page - 1);
	if (st->size == 0)
		return fail(st, "nothing to load");

	/*
	 * Populated: every page is written below, and one system call that
	 * allocates them all is cheaper than a page fault for each.
	 */
	st->base = mmap(NULL, st->size, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (st->base == MAP_FAILED)
	{
		st->base = NULL;
		return fail(st, "could not map %zu bytes: %s", st->size, strerror(errno));
	}
	for (int i = 0; i < st->eh->e_shnum; i++)
	{
		const Elf64_Shdr *s = &st->sh[i];

		if (is_loaded(s) && s->sh_type != SHT_NOBITS)
			memcpy(st->base + st->offset[i], st->image + s->sh_offset, s->sh_size);
		/* SHT_NOBITS: the mapping is already zero */
	}
	return true;
}

/* The run-time address of symbol index symi. */
static bool
symbol_address(LinkState *st, uint32_t symi, uint64_t *addr)
{
	const Elf64_Sym *sym;

	if (symi >= st->nsyms)
		return fail(st, "relocation names symbol %ld, which does not exist", (long) symi);
	if (st->symdone[symi])
	{
		/* a shape's hundred relocations name a few dozen symbols */
		*addr = st->symaddr[symi];
		return true;
	}
	sym = &st->syms[symi];
	if (sym->st_shndx == SHN_UNDEF)
	{
		void	   *p;

		if (ELF64_ST_TYPE(sym->st_info) == STT_TLS)
			return fail(st, "thread-local symbol %s", symbol_name(st, sym));
		p = NULL;
		for (int k = 0; k < st->nknown && p == NULL; k++)
			if (strcmp(st->known[k].name, symbol_name(st, sym)) == 0)
				p = st->known[k].addr;
		if (p == NULL)
			p = dlsym(RTLD_DEFAULT, symbol_name(st, sym));
		if (p == NULL)
			return fail(st, "undefined symbol %s", symbol_name(st, sym));
		*addr = (uint64_t) (uintptr_t) p;
	}
	else if (sym->st_shndx == SHN_ABS)
		*addr = sym->st_value;
	else if (sym->st_shndx >= SHN_LORESERVE || sym->st_shndx >= st->eh->e_shnum ||
			 !is_loaded(&st->sh[sym->st_shndx]))
		return fail(st, "symbol %s is in a section that is not loaded",
					symbol_name(st, sym));
	else
		*addr = (uint64_t) (uintptr_t) (st->base + st->offset[sym->st_shndx]) + sym->st_value;
	st->symaddr[symi] = *addr;
	st->symdone[symi] = 1;
	return true;
}

static bool
supported_type(uint32_t type)
{
	switch (type)
	{
		case R_X86_64_NONE:
		case R_X86_64_64:
		case R_X86_64_PC64:
		case R_X86_64_PC32:
		case R_X86_64_PLT32:
		case R_X86_64_32:
		case R_X86_64_32S:
			return true;
		default:
			return false;
	}
}

/* Refuse an object by what it needs, before touching anything. */
static bool
relocations_supported(LinkState *st)
{
	for (int r = 0; r < st->eh->e_shnum; r++)
	{
		const Elf64_Shdr *rs = &st->sh[r];
		const Elf64_Rela *rela = (const Elf64_Rela *) (st->image + rs->sh_offset);

		if (rs->sh_type != SHT_RELA || rs->sh_entsize != sizeof(Elf64_Rela) ||
			rs->sh_offset % _Alignof(Elf64_Rela) != 0)
			continue;			/* relocate() reports it */
		for (size_t k = 0; k < rs->sh_size / sizeof(Elf64_Rela); k++)
			if (!supported_type(ELF64_R_TYPE(rela[k].r_info)))
				return fail(st, "relocation type %u is not supported (only absolute and PC-relative ones are)",
							(unsigned) ELF64_R_TYPE(rela[k].r_info));
	}
	return true;
}

/* How many bytes a relocation of a supported type writes; 0 for NONE. */
static int
relocation_width(uint32_t type)
{
	switch (type)
	{
		case R_X86_64_64:
		case R_X86_64_PC64:
			return 8;
		case R_X86_64_PC32:
		case R_X86_64_PLT32:
		case R_X86_64_32:
		case R_X86_64_32S:
			return 4;
		default:
			return 0;
	}
}

/*
 * Write value v (the symbol plus the addend) for a relocation of the given
 * type at where, whose address is p.
 */
static bool
apply_relocation(LinkState *st, uint32_t type, char *where, uint64_t p,
				 int64_t v)
{
	switch (type)
	{
		case R_X86_64_64:
			memcpy(where, &v, 8);
			break;
		case R_X86_64_PC64:
			v -= (int64_t) p;
			memcpy(where, &v, 8);
			break;
		case R_X86_64_PC32:
		case R_X86_64_PLT32:
		case R_X86_64_32S:
			if (type != R_X86_64_32S)
				v -= (int64_t) p;
			if (v != (int32_t) v)
				return fail(st, "relocation type %u out of range: the object was not built for the large code model", (unsigned) type);
			{
				int32_t		v32 = (int32_t) v;

				memcpy(where, &v32, 4);
			}
			break;
		case R_X86_64_32:
			if ((uint64_t) v != (uint32_t) v)
				return fail(st, "relocation type %u out of range: the object was not built for the large code model", (unsigned) type);
			{
				uint32_t	v32 = (uint32_t) v;

				memcpy(where, &v32, 4);
			}
			break;
	}
	return true;
}

/* Apply the relocations of section r, which targets a loaded section. */
static bool
relocate_section(LinkState *st, int r, const Elf64_Shdr *target)
{
	const Elf64_Shdr *rs = &st->sh[r];
	const Elf64_Rela *rela = (const Elf64_Rela *) (st->image + rs->sh_offset);
	size_t		n = rs->sh_size / sizeof(Elf64_Rela);

	for (size_t k = 0; k < n; k++)
	{
		uint32_t	type = ELF64_R_TYPE(rela[k].r_info);
		int			width = relocation_width(type);
		uint64_t	s;
		char	   *where;

		if (type == R_X86_64_NONE)
			continue;
		if (width == 0)
			return fail(st, "relocation type %u is not supported", (unsigned) type);
		if (rela[k].r_offset > target->sh_size ||
			target->sh_size - rela[k].r_offset < (uint64_t) width)
			return fail(st, "relocation %ld is outside its section", (long) k);
		if (!symbol_address(st, ELF64_R_SYM(rela[k].r_info), &s))
			return false;
		where = st->base + st->offset[rs->sh_info] + rela[k].r_offset;
		if (!apply_relocation(st, type, where, (uint64_t) (uintptr_t) where,
							  (int64_t) (s + (uint64_t) rela[k].r_addend)))
			return false;
	}
	return true;
}

/* Apply every relocation section that targets a loaded section. */
static bool
relocate(LinkState *st)
{
	if (!relocations_supported(st))
		return false;
	for (int r = 0; r < st->eh->e_shnum; r++)
	{
		const Elf64_Shdr *rs = &st->sh[r];
		const Elf64_Shdr *target;

		if (rs->sh_type == SHT_REL)
			return fail(st, "REL relocations (without addends) are not supported");
		if (rs->sh_type != SHT_RELA)
			continue;
		if (rs->sh_info >= st->eh->e_shnum || rs->sh_entsize != sizeof(Elf64_Rela) ||
			rs->sh_offset % _Alignof(Elf64_Rela) != 0)
			return fail(st, "unusable relocation section %ld", (long) r);
		target = &st->sh[rs->sh_info];
		if (!is_loaded(target))
			continue;			/* relocations of debug sections, say */
		if (target->sh_type == SHT_NOBITS)
			return fail(st, "relocations against an empty section");
		if (!relocate_section(st, r, target))
			return false;
	}
	return true;
}

/* Give each group its final protection: code and rodata r-x, data rw-. */
static bool
protect(LinkState *st)
{
	size_t		page = (size_t) sysconf(_SC_PAGESIZE);
	size_t		start[NGROUPS + 1];
	static const int prot[NGROUPS] = {PROT_READ | PROT_EXEC,
	PROT_READ | PROT_WRITE};

	for (int g = 0; g < NGROUPS; g++)
	{
		start[g] = st->size;
		for (int i = 0; i < st->eh->e_shnum; i++)
			if (is_loaded(&st->sh[i]) && group_of(&st->sh[i]) == g &&
				(st->offset[i] & ~(page - 1)) < start[g])
				start[g] = st->offset[i] & ~(page - 1);
	}
	/* a group with no section starts where the next one does */
	start[NGROUPS] = st->size;
	for (int g = NGROUPS - 1; g >= 0; g--)
		if (start[g] > start[g + 1])
			start[g] = start[g + 1];
	for (int g = 0; g < NGROUPS; g++)
		if (start[g + 1] > start[g] &&
			mprotect(st->base + start[g], start[g + 1] - start[g], prot[g]) != 0)
			return fail(st, "mprotect failed: %s", strerror(errno));
	return true;
}

/* Look up the global definitions the caller wants. */
static bool
find_names(LinkState *st, const char *const *names, void **addrs, int nnames)
{
	for (int n = 0; n < nnames; n++)
	{
		addrs[n] = NULL;
		for (size_t i = 1; i < st->nsyms && addrs[n] == NULL; i++)
		{
			const Elf64_Sym *sym = &st->syms[i];
			uint64_t	a;

			if (ELF64_ST_BIND(sym->st_info) != STB_GLOBAL ||
				ELF64_ST_TYPE(sym->st_info) != STT_FUNC ||
				sym->st_shndx == SHN_UNDEF ||
				strcmp(symbol_name(st, sym), names[n]) != 0)
				continue;
			if (sym->st_shndx >= st->eh->e_shnum ||
				!is_code(&st->sh[sym->st_shndx]) ||
				sym->st_value >= st->sh[sym->st_shndx].sh_size)
				return fail(st, "function %s is not in code", names[n]);
			if (!symbol_address(st, (uint32_t) i, &a))
				return false;
			addrs[n] = (void *) (uintptr_t) a;
		}
		if (addrs[n] == NULL)
			return fail(st, "the object does not define %s", names[n]);
	}
	return true;
}

bool
btjit_object_link(const char *image, size_t len, const char *const *names,
				  void **addrs, int nnames, char *why, size_t whylen)
{
	const BtjitObjectWanted wanted = {names, addrs, nnames};
	const BtjitObjectKnown none = {NULL, 0};

	return btjit_object_link_known(image, len, &wanted, &none, why, whylen);
}

bool
btjit_object_link_known(const char *image, size_t len,
						const BtjitObjectWanted *wanted,
						const BtjitObjectKnown *known,
						char *why, size_t whylen)
{
	LinkState	st;
	bool		ok;
	const char *const *names = wanted->names;
	void	  **addrs = wanted->addrs;
	int			nnames = wanted->n;

	memset(&st, 0, sizeof(st));
	st.image = image;
	st.len = len;
	st.known = known->symbols;
	st.nknown = known->n;
	st.why = why;
	st.whylen = whylen;
	why[0] = '\0';

	if (((uintptr_t) image % 8) != 0)
		return fail(&st, "object image is not aligned");
	if (!read_headers(&st))
		return false;
	st.offset = calloc(st.eh->e_shnum, sizeof(size_t));
	st.symaddr = calloc(st.nsyms + 1, sizeof(uint64_t));
	st.symdone = calloc(st.nsyms + 1, 1);
	if (st.offset == NULL || st.symaddr == NULL || st.symdone == NULL)
	{
		free(st.offset);
		free(st.symaddr);
		free(st.symdone);
		return fail(&st, "out of memory");
	}

	ok = map_sections(&st) && relocate(&st) && protect(&st) &&
		find_names(&st, names, addrs, nnames);

	free(st.offset);
	free(st.symaddr);
	free(st.symdone);
	if (!ok && st.base != NULL)
		munmap(st.base, st.size);
	return ok;
}
