/*-------------------------------------------------------------------------
 *
 * bitcode.c
 *	  The identity of the server's bitcode, from which the compiler imports
 *	  comparison procs (tier 2; llvm/specialise.c, llvm/bcimport.c).
 *
 * Imported code is the server's own source, compiled by clang when the
 * server was built, and shipped beside it ($pkglibdir/bitcode).  It may run
 * only in the server it was built with: a minor upgrade replaces binary and
 * bitcode on disk while the old server keeps running, and the object cache
 * outlives both.  So:
 *
 * - In the postmaster (btjit_server_bitcode_preload), the running binary's
 *   GNU build-id is read from its mapped notes, and postgres.index.bc is
 *   read and hashed.  The two make the identity, part of the object cache
 *   key of every shape that names an import: code inlined from another
 *   build is never linked from the cache.
 * - At each compile (btjit_server_bitcode_for_compile) the binary on disk
 *   must still carry the running binary's build-id (else the bitcode on
 *   disk may be newer than the code running), and the compiler imports only
 *   from an index whose bytes still hash as at start-up.
 *
 * A server without bitcode (the directory missing or unreadable, or no
 * build-id) is not an error: the identity records why, and every column
 * that names an import is called instead, with that reason in its
 * signature.  btree_jit.server_bitcode_path (superuser, for tests) points
 * elsewhere; a backend re-reads the identity when it changes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "compile/compile_int.h"

#define BTJIT_BC_INDEX_FILE "postgres.index.bc"
#define BTJIT_BUILD_ID_MAX 64

char	   *btjit_server_bitcode_path = NULL;

static BtjitServerBitcode btjit_bitcode;
static bool btjit_bitcode_valid = false;

/* the running binary's build-id, read once */
static unsigned char btjit_build_id[BTJIT_BUILD_ID_MAX];
static int	btjit_build_id_len = -1;

/*
 * The GNU build-id in a note segment whose notes are aligned to align bytes
 * (4, or 8 for segments such as .note.gnu.property), or 0.
 */
static int
btjit_notes_build_id(const char *notes, size_t len, size_t align,
					 unsigned char *id)
{
	size_t		pos = 0;

	if (align != 8)
		align = 4;
	while (pos + sizeof(Elf64_Nhdr) <= len)
	{
		const Elf64_Nhdr *nh = (const Elf64_Nhdr *) (notes + pos);
		size_t		namesz = TYPEALIGN(align, nh->n_namesz);
		size_t		descsz = TYPEALIGN(align, nh->n_descsz);
		const char *name = notes + pos + sizeof(Elf64_Nhdr);

		if (namesz > len || descsz > len ||
			pos + sizeof(Elf64_Nhdr) + namesz + descsz > len)
			return 0;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			memcmp(name, "GNU", 4) == 0 &&
			nh->n_descsz > 0 && nh->n_descsz <= BTJIT_BUILD_ID_MAX)
		{
			memcpy(id, name + namesz, nh->n_descsz);
			return nh->n_descsz;
		}
		pos += sizeof(Elf64_Nhdr) + namesz + descsz;
	}
	return 0;
}

/* dl_iterate_phdr visits the main program first: its mapped notes. */
static int
btjit_running_build_id_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	int		   *len = arg;

	for (int i = 0; i < info->dlpi_phnum; i++)
	{
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE && *len == 0)
			*len = btjit_notes_build_id((const char *) (info->dlpi_addr + ph->p_vaddr),
										ph->p_memsz, ph->p_align, btjit_build_id);
	}
	return 1;					/* the main program only */
}

static int
btjit_running_build_id(void)
{
	int			len = 0;

	if (btjit_build_id_len < 0)
	{
		dl_iterate_phdr(btjit_running_build_id_cb, &len);
		btjit_build_id_len = len;
	}
	return btjit_build_id_len;
}

/* The build-id of the ELF file at path (the server binary on disk), or 0. */
static int
btjit_file_build_id(const char *path, unsigned char *id)
{
	Elf64_Ehdr	eh;
	int			fd;
	int			len = 0;

	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
		memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
		eh.e_ident[EI_CLASS] == ELFCLASS64 &&
		eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 64)
	{
		for (int i = 0; i < eh.e_phnum && len == 0; i++)
		{
			Elf64_Phdr	ph;
			char		notes[1024];

			if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != sizeof(ph) ||
				ph.p_type != PT_NOTE || ph.p_filesz > sizeof(notes))
				continue;
			if (pread(fd, notes, ph.p_filesz, ph.p_offset) == (ssize_t) ph.p_filesz)
				len = btjit_notes_build_id(notes, ph.p_filesz, ph.p_align, id);
		}
	}
	CloseTransientFile(fd);
	return len;
}

/* The bitcode directory the setting names. */
static void
btjit_bitcode_dir(char *dir, size_t len)
{
	if (btjit_server_bitcode_path != NULL && btjit_server_bitcode_path[0] != '\0')
		strlcpy(dir, btjit_server_bitcode_path, len);
	else
		snprintf(dir, len, "%s/bitcode", pkglib_path);
}

/* Work out the identity of the bitcode in dir. */
static void
btjit_bitcode_identify(BtjitServerBitcode *bc, const char *dir)
{
	char		path[MAXPGPATH];
	struct stat st;
	int			fd;
	char	   *data;
	int			idlen = btjit_running_build_id();
	uint64		h = BTJIT_FNV1A_BASIS;

	memset(bc, 0, sizeof(*bc));
	strlcpy(bc->dir, dir, sizeof(bc->dir));
	h = btjit_fnv1a(h, dir, strlen(dir));
	h = btjit_fnv1a(h, btjit_build_id, Max(idlen, 0));
	bc->identity = h;			/* so far: an unusable directory */

	if (idlen <= 0)
	{
		snprintf(bc->why, sizeof(bc->why),
				 "the server binary has no build-id to match its bitcode with");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, BTJIT_BC_INDEX_FILE);
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		snprintf(bc->why, sizeof(bc->why), "could not open \"%s\": %m", path);
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		st.st_size > 256 * 1024 * 1024)
	{
		snprintf(bc->why, sizeof(bc->why), "\"%s\" is not a readable file", path);
		CloseTransientFile(fd);
		return;
	}
	data = MemoryContextAllocExtended(TopMemoryContext, Max(st.st_size, 1),
									  MCXT_ALLOC_NO_OOM);
	if (data == NULL || read(fd, data, st.st_size) != st.st_size)
	{
		snprintf(bc->why, sizeof(bc->why), "could not read \"%s\"", path);
		if (data)
			pfree(data);
		CloseTransientFile(fd);
		return;
	}
	CloseTransientFile(fd);
	bc->index_hash = btjit_fnv1a(BTJIT_FNV1A_BASIS, data, st.st_size);
	pfree(data);
	bc->identity = btjit_fnv1a(h, &bc->index_hash, sizeof(bc->index_hash));
	bc->usable = true;
}

/*
 * The identity of the server's bitcode under the current setting: worked
 * out once per setting (in the postmaster for the default one).
 */
const BtjitServerBitcode *
btjit_server_bitcode(void)
{
	char		dir[MAXPGPATH];

	btjit_bitcode_dir(dir, sizeof(dir));
	if (!btjit_bitcode_valid || strcmp(dir, btjit_bitcode.dir) != 0)
	{
		btjit_bitcode_identify(&btjit_bitcode, dir);
		btjit_bitcode_valid = true;
	}
	return &btjit_bitcode;
}

/* In _PG_init: identify the default bitcode once for every backend. */
void
btjit_server_bitcode_preload(void)
{
	(void) btjit_server_bitcode();
}

/*
 * What the compiler may import from, now: the identity, unusable if the
 * server binary on disk is no longer the running one.
 */
void
btjit_server_bitcode_for_compile(BtjitServerBitcode *bc)
{
	unsigned char disk[BTJIT_BUILD_ID_MAX];
	int			len;

	*bc = *btjit_server_bitcode();
	if (!bc->usable)
		return;
	len = btjit_file_build_id(my_exec_path, disk);
	if (len != btjit_build_id_len || memcmp(disk, btjit_build_id, len) != 0)
	{
		bc->usable = false;
		snprintf(bc->why, sizeof(bc->why),
				 "the server binary \"%s\" on disk is not the running one (upgraded?), so its bitcode may not match",
				 my_exec_path);
	}
}
