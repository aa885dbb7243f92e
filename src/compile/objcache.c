/*-------------------------------------------------------------------------
 *
 * objcache.c
 *	  The bitcode template's identity, and compiled objects shared between
 *	  backends through files in the data directory.
 *
 * A compiled shape is an ELF object.  The first backend to compile a shape
 * writes it to $PGDATA/btree_jit_cache/<key>.o; later backends read it and
 * link it with objload.c, so a fresh connection pays a file read and a
 * relocation pass (a fraction of a millisecond) instead of loading LLVM
 * (14-25 ms per process) and compiling (about 0.6 s; bench/README.md,
 * compile_latency).  Nothing here
 * links LLVM.
 *
 * The key covers everything the machine code depends on: the shape, the
 * template's bytes, the code generator's settings, the server's major
 * version, the server build's bitcode when the shape imports from it, and
 * the CPU (the code is compiled for the host CPU, so the
 * identification bits of cpuid are part of the key; valgrind's virtual CPU
 * gets objects of its own).  Files are written under a private name,
 * fsynced and renamed into place, and the directory fsynced, so a reader
 * sees a whole file or none, also after an OS crash.  Each file starts
 * with a header (BtjitObjectHeader: the key, the writing module's build
 * identity, the length, and a CRC-32C over the whole file) that the loader
 * checks before linking anything: a damaged, truncated or foreign file, or
 * one of another build, is refused with one LOG line saying what did not
 * match, removed, and the shape compiled again as if it were missing.  A
 * file that passes and still does not link is ignored with a LOG line, and
 * the shape is compiled.  At btree_jit.object_cache_max_files a store
 * evicts the least recently used objects (by modification time, which a
 * link brings forward), so a full cache never locks new shapes out; an
 * object the compile worker stored for a backend that has not linked it yet
 * is never evicted (worker.c says which are, btjit_object_cache_set_pins).
 * Temporary files a writer left behind (it died between write and rename)
 * are removed at start-up and on eviction, once their writer is gone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <cpuid.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "compile/compile_int.h"
#include "compile/objload.h"

#define BTJIT_TEMPLATE_FILE "btree_jit/search_template.bc"
#define BTJIT_OBJECT_CACHE_DIR "btree_jit_cache"

/* Largest template or object file we read (ours are around 100 kB). */
#define BTJIT_MAX_FILE_SIZE (64 * 1024 * 1024)

/*
 * Every object file starts with this header, then the ELF object.  The
 * loader checks each field before linking a byte of the object; the CRC
 * covers the whole file (the header with crc zero, then the object), as
 * CRC-32C (PostgreSQL's WAL and page checksum polynomial).  Fields are in
 * host byte order: the key holds the CPU's identity, so a file is only
 * ever read on the kind of machine that wrote it.  The size is a multiple
 * of 8, so the object after it stays as aligned as the buffer it is read
 * into (objload.c wants 8).
 */
#define BTJIT_OBJECT_MAGIC "BTJITOB1"

/*
 * A linked object's mtime is brought to now when older than this.  The
 * touch costs the link about a fifth of its time (bench/README.md, "What a
 * link costs"), and eviction only has to tell the objects in use from
 * those unused for hours.
 */
#define BTJIT_OBJECT_TOUCH_SECS 3600

/*
 * A temporary file of the cache directory (a writer's "<name>.tmp.<pid>")
 * is removed once its writer is no longer alive, or when it is older than
 * this whatever its pid says: a write, its fsync and its rename take
 * seconds at worst, and a pid may have been reused.
 */
#define BTJIT_TMP_STALE_SECS 600

typedef struct BtjitObjectHeader
{
	char		magic[8];		/* BTJIT_OBJECT_MAGIC, without its NUL */
	pg_crc32c	crc;			/* of the file, this field zero */
	uint32		header_size;	/* sizeof(BtjitObjectHeader) */
	uint64		length;			/* of the object that follows */
	uint64		build;			/* btjit_build_identity() of the writer */
	char		key[24];		/* the object key, NUL-padded */
} BtjitObjectHeader;

StaticAssertDecl(sizeof(BtjitObjectHeader) % 8 == 0,
				 "an object must start 8-aligned after its header");
StaticAssertDecl(sizeof(((BtjitObjectHeader *) NULL)->key) >= BTJIT_OBJECT_KEY_LEN,
				 "BtjitObjectHeader.key too short");

int			btjit_object_cache_max_files = 1000;
char	   *btjit_template_path = NULL;

bool		btjit_object_cache = true;

/*
 * The symbols every compiled shape refers to, given to the linker so that
 * it need not look them up with dlsym (see objload.h): the module's own
 * callbacks, one per target that declines calls (targetlist.h), the
 * block-hint table and the build comparator's counter, whose addresses the module gives
 * btjit_objcache_preload; and the buffer pool's arrays.  Symbols of
 * comparison procs and of what imported bitcode calls are looked up.
 */
#define BTJIT_OBJECT_KNOWN_SERVER 4
static BtjitObjectSymbol btjit_object_known[BTJIT_NTARGETS + 2 +
											BTJIT_OBJECT_KNOWN_SERVER];
static int	btjit_object_nknown = 0;

static BtjitTemplate btjit_template;
static uint64 btjit_cpu_hash = 0;
static uint64 btjit_build_hash = 0;

/*
 * Which objects a backend is waiting to link (worker.c's answer, given at
 * preload): eviction skips them.  NULL: none is.
 */
static bool (*btjit_object_pinned) (const char *key) = NULL;

/*
 * Objects this process evicted although they had been written or linked
 * within BTJIT_OBJECT_TOUCH_SECS: shapes in use, so the bound is below the
 * shapes in use (the compile worker reports it; see
 * btjit_object_cache_evictions_in_use).
 */
static int	btjit_evicted_in_use = 0;

static uint64 btjit_cpu_identity(void);
static void btjit_cache_clean_dir(const char *dir);


/*
 * The build identity written into each object's header: the module's
 * version and the interface's layout (compiler.h, btjit_abi_layout, which
 * covers the code generator's identity too).
 */
static uint64
btjit_build_identity(void)
{
	if (btjit_build_hash == 0)
	{
		uint64		layout = btjit_abi_layout();
		uint64		h = BTJIT_FNV1A_BASIS;

		h = btjit_fnv1a(h, BTJIT_VERSION, strlen(BTJIT_VERSION));
		btjit_build_hash = btjit_fnv1a(h, &layout, sizeof(layout));
	}
	return btjit_build_hash;
}

/*
 * The CRC-32C of a file of this directory that starts with a header holding
 * its own checksum at crc_offset: the header with that field taken as zero,
 * then the payload (an object, the warm-start list's shapes).  CRC-32C runs
 * over a stream, so the header is read around the field, not copied.
 */
pg_crc32c
btjit_cache_file_crc(const void *header, size_t header_size,
					 size_t crc_offset, const void *payload, size_t len)
{
	const char *h = (const char *) header;
	const pg_crc32c zero = 0;
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, h, crc_offset);
	COMP_CRC32C(crc, &zero, sizeof(zero));
	COMP_CRC32C(crc, h + crc_offset + sizeof(pg_crc32c),
				header_size - crc_offset - sizeof(pg_crc32c));
	COMP_CRC32C(crc, payload, len);
	FIN_CRC32C(crc);
	return crc;
}

/* The CRC-32C of an object file (btjit_cache_file_crc). */
static pg_crc32c
btjit_object_crc(const BtjitObjectHeader *header, const char *object,
				 size_t len)
{
	return btjit_cache_file_crc(header, sizeof(BtjitObjectHeader),
								offsetof(BtjitObjectHeader, crc), object, len);
}

/*
 * Check a whole object file (data[0..len)) against its header and the key
 * it was looked up by.  False with why saying what does not match.
 */
static bool
btjit_object_verify(const char *data, size_t len, const char *key,
					BtjitWhy *why)
{
	BtjitObjectHeader h;
	pg_crc32c	crc;

	if (len < sizeof(h))
	{
		btjit_why_set(why, "it is %zu bytes, shorter than an object header",
					  len);
		return false;
	}
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, BTJIT_OBJECT_MAGIC, sizeof(h.magic)) != 0 ||
		h.header_size != sizeof(h))
	{
		btjit_why_set(why, "it has no object header of this version");
		return false;
	}
	if (h.length != len - sizeof(h))
	{
		btjit_why_set(why, "its header says %llu bytes of object, the file holds %zu",
					  (unsigned long long) h.length, len - sizeof(h));
		return false;
	}
	if (strncmp(h.key, key, sizeof(h.key)) != 0)
	{
		btjit_why_set(why, "it holds the object of key %.16s, not %s",
					  h.key, key);
		return false;
	}
	if (h.build != btjit_build_identity())
	{
		btjit_why_set(why, "it was written by another build of btree_jit (%016llx, this one is %016llx)",
					  (unsigned long long) h.build,
					  (unsigned long long) btjit_build_identity());
		return false;
	}
	crc = btjit_object_crc(&h, data + sizeof(h), len - sizeof(h));
	if (crc != h.crc)
	{
		btjit_why_set(why, "its CRC-32C is %08X, its header says %08X",
					  crc, h.crc);
		return false;
	}
	return true;
}

/*
 * Read a whole file into memory allocated in TopMemoryContext (8-byte
 * aligned, as objload.c wants).  Returns NULL with why; with missing_ok,
 * a file that does not exist is NULL with why empty.
 */
static char *
btjit_read_file(const char *path, bool missing_ok, size_t *len, time_t *mtime,
				BtjitWhy *why)
{
	struct stat st;
	char	   *data;
	int			fd;
	ssize_t		got;

	why->text[0] = '\0';
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (!(missing_ok && errno == ENOENT))
			btjit_why_set(why, "could not open \"%s\": %m", path);
		return NULL;
	}
	if (fstat(fd, &st) != 0)
	{
		btjit_why_set(why, "could not stat \"%s\": %m", path);
		CloseTransientFile(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > BTJIT_MAX_FILE_SIZE)
	{
		btjit_why_set(why, "\"%s\" is %s", path,
					  S_ISDIR(st.st_mode) ? "a directory" :
					  !S_ISREG(st.st_mode) ? "not a regular file" : "too large");
		CloseTransientFile(fd);
		return NULL;
	}
	data = MemoryContextAllocExtended(TopMemoryContext, st.st_size + 1,
									  MCXT_ALLOC_NO_OOM);
	if (data == NULL)
	{
		btjit_why_set(why, "out of memory reading \"%s\"", path);
		CloseTransientFile(fd);
		return NULL;
	}
	got = read(fd, data, st.st_size);
	if (got != st.st_size)
	{
		if (got >= 0)
			errno = EIO;
		btjit_why_set(why, "could not read \"%s\": %m", path);
		pfree(data);
		CloseTransientFile(fd);
		return NULL;
	}
	CloseTransientFile(fd);
	*len = st.st_size;
	if (mtime != NULL)
		*mtime = st.st_mtime;
	return data;
}

/*
 * The template (btree_jit.template_path, or the installed one), read and
 * hashed once in the postmaster (btjit_objcache_preload) and again in a
 * backend whenever the path differs from the one read.
 */
bool
btjit_template_read(const BtjitTemplate **tmpl, BtjitWhy *why)
{
	static char default_path[MAXPGPATH];
	const char *path;
	BtjitWhy	ewhy;
	char	   *data;
	size_t		len;

	if (btjit_template_path != NULL && btjit_template_path[0] != '\0')
		path = btjit_template_path;
	else
	{
		/* built once (in the postmaster, normally), not on every call */
		if (default_path[0] == '\0')
			snprintf(default_path, sizeof(default_path), "%s/%s",
					 pkglib_path, BTJIT_TEMPLATE_FILE);
		path = default_path;
	}

	if (btjit_template.data == NULL || strcmp(path, btjit_template.path) != 0)
	{
		data = btjit_read_file(path, false, &len, NULL, &ewhy);
		if (data == NULL)
		{
			btjit_why_set(why, "could not read template: %s", ewhy.text);
			return false;
		}
		if (btjit_template.data != NULL)
		{
			pfree((char *) btjit_template.data);
			pfree((char *) btjit_template.path);
		}
		btjit_template.path = MemoryContextStrdup(TopMemoryContext, path);
		btjit_template.data = data;
		btjit_template.len = len;
		btjit_template.hash = btjit_fnv1a(BTJIT_FNV1A_BASIS,
											   data, len);
	}
	*tmpl = &btjit_template;
	return true;
}

/*
 * Called by _PG_init in the postmaster (or single-user backend): read and
 * hash the template and identify the CPU once, so that every backend
 * inherits both (and the build identity that object headers are checked
 * against) instead of spending about 0.15 ms on them before its first
 * cached shape (measured: 0.1 ms to hash the 100 kB template, 0.05 ms for
 * the cpuid instructions, which trap to the hypervisor in a VM).  It also
 * ties the template to the btree_jit.so loaded with it: a template
 * installed while the server runs is used from the next restart on,
 * together with its library.  Problems are left to the backends, which
 * retry and report them per index.
 */
void
btjit_objcache_preload(const BtjitCallbackAddresses *callbacks)
{
	const BtjitTemplate *tmpl;
	BtjitWhy	why;

	const BtjitObjectSymbol server[BTJIT_OBJECT_KNOWN_SERVER] = {
		{"BufferBlocks", (void *) &BufferBlocks},
		{"LocalBufferBlockPointers", (void *) &LocalBufferBlockPointers},
		{"BufferDescriptors", (void *) &BufferDescriptors},
		{"NBuffers", (void *) &NBuffers},
	};
	int			n = 0;

	for (int t = 0; t < BTJIT_NTARGETS; t++)
	{
		const char *declined = btjit_target_info(t)->declined;

		if (declined != NULL)
		{
			btjit_object_known[n].name = declined;
			btjit_object_known[n++].addr = callbacks->declined[t];
		}
	}
	btjit_object_known[n].name = "btjit_block_hints";
	btjit_object_known[n++].addr = callbacks->block_hints;
	btjit_object_known[n].name = "btjit_build_compares";
	btjit_object_known[n++].addr = callbacks->build_compares;
	for (int i = 0; i < BTJIT_OBJECT_KNOWN_SERVER; i++)
		btjit_object_known[n++] = server[i];
	btjit_object_nknown = n;
	(void) btjit_cpu_identity();
	(void) btjit_build_identity();
	(void) btjit_template_read(&tmpl, &why);

	/* no other process of this cluster runs yet: nothing is being written */
	if (!IsUnderPostmaster && DataDir != NULL)
		btjit_object_cache_clean();
}

/* The CPU's identity as the code generator sees it (see the header). */
static uint64
btjit_cpu_identity(void)
{
	unsigned int regs[4];
	uint64		h = BTJIT_FNV1A_BASIS;
	static const unsigned int leaves[][2] = {
		{0, 0}, {1, 0}, {7, 0}, {0x80000001, 0}};

	if (btjit_cpu_hash != 0)
		return btjit_cpu_hash;
	for (int i = 0; i < lengthof(leaves); i++)
	{
		memset(regs, 0, sizeof(regs));
		if (__get_cpuid_count(leaves[i][0], leaves[i][1],
							  &regs[0], &regs[1], &regs[2], &regs[3]))
		{
			/* leaf 1 ebx holds the APIC id of the core we run on: skip it */
			if (leaves[i][0] == 1)
				regs[1] = 0;
			h = btjit_fnv1a(h, regs, sizeof(regs));
		}
	}
	btjit_cpu_hash = h;
	return h;
}

/*
 * prefix, key and suffix into a BtjitObjectNames function name (48 bytes;
 * the longest is 13 + 16 + 4).
 */
static void
btjit_object_name(char *dst, const char *prefix, const char *key,
				  const char *suffix)
{
	size_t		plen = strlen(prefix);
	size_t		slen = strlen(suffix);

	StaticAssertStmt(sizeof(((BtjitObjectNames *) NULL)->search) >= 13 + 16 + 4 + 1,
					 "BtjitObjectNames names too short");
	Assert(plen <= 13 && slen <= 4);
	memcpy(dst, prefix, plen);
	memcpy(dst + plen, key, 16);
	memcpy(dst + plen + 16, suffix, slen + 1);
}

/* The object key of a shape, and the names of its compiled functions. */
void
btjit_object_names(const BtjitShape *shape, const BtjitTemplate *tmpl,
				   BtjitObjectNames *names)
{
	uint64		h = BTJIT_FNV1A_BASIS;
	uint32		version = PG_VERSION_NUM / 100;
	uint64		cpu = btjit_cpu_identity();

	h = btjit_fnv1a(h, shape, sizeof(BtjitShape));
	h = btjit_fnv1a(h, &tmpl->hash, sizeof(tmpl->hash));
	h = btjit_fnv1a(h, &version, sizeof(version));
	h = btjit_fnv1a(h, BTJIT_CODEGEN_ID, strlen(BTJIT_CODEGEN_ID));
	h = btjit_fnv1a(h, &cpu, sizeof(cpu));

	/*
	 * Code inlined from the server's bitcode is the server build's: a shape
	 * that names an import is keyed by that build's identity too (the
	 * running binary's build-id and postgres.index.bc, bitcode.c), so that a
	 * minor upgrade never links stale inlined code.
	 */
	for (int i = 0; i < shape->nkeys; i++)
		if (shape->cols[i].bcsym[0] != '\0')
		{
			uint64		bcid = btjit_server_bitcode()->identity;

			h = btjit_fnv1a(h, &bcid, sizeof(bcid));
			break;
		}

	/*
	 * The key in hex, and the function names around it, without snprintf:
	 * this runs inside the page search that queues a new shape.
	 */
	for (int i = 15; i >= 0; i--)
	{
		names->key[i] = "0123456789abcdef"[h & 0xf];
		h >>= 4;
	}
	names->key[16] = '\0';
	btjit_object_name(names->search, "btjit_search_", names->key, "");
	for (int t = 0; t < BTJIT_NTARGETS; t++)
	{
		const BtjitTargetInfo *info = btjit_target_info(t);

		if (info->template_entry != NULL)
			btjit_object_name(names->entries[t], info->object_prefix,
							  names->key, info->object_suffix);
		else
			names->entries[t][0] = '\0';
	}
	btjit_object_name(names->bcinfo, "btjit_search_", names->key, "_bc");
}

static void
btjit_object_path(const BtjitObjectNames *names, char *path)
{
	snprintf(path, MAXPGPATH, "%s/%s/%s.o", DataDir, BTJIT_OBJECT_CACHE_DIR,
			 names->key);
}


/*
 * Link the cached object for names, if there is one, and fill code's entry
 * points.  Any problem just means compiling afresh.
 */
bool
btjit_object_cache_load(const BtjitObjectNames *names, BtjitCode *code)
{
	char		path[MAXPGPATH];
	BtjitWhy	why;
	char	   *data;
	size_t		len;
	const char *want[BTJIT_NTARGETS + 2];
	void	   *addr[BTJIT_NTARGETS + 2];
	BtjitTarget wanted_target[BTJIT_NTARGETS + 2];
	int			nwant = 0;
	BtjitObjectWanted wanted;
	BtjitObjectKnown known;
	bool		ok;
	time_t		mtime;

	btjit_object_path(names, path);

	/*
	 * Opened without asking first: a missing object is the open's ENOENT,
	 * and an access() before it was one system call more on every link.
	 */
	data = btjit_read_file(path, true, &len, &mtime, &why);
	if (data == NULL)
	{
		if (why.text[0] != '\0')
			ereport(LOG,
					(errmsg("btree_jit: ignoring cached object: %s", why.text)));
		return false;
	}
	if (!btjit_object_verify(data, len, names->key, &why))
	{
		/* as if missing: the caller compiles the shape and stores it anew */
		bool		removed = (unlink(path) == 0 || errno == ENOENT);

		pfree(data);
		ereport(LOG,
				(errmsg("btree_jit: refused cached object \"%s\": %s; %s",
						path, why.text,
						removed ? "removed, the shape is compiled again" :
						"could not remove it")));
		return false;
	}
	/* the plain search, the bcinfo function, then each target's entry */
	want[nwant++] = names->search;
	want[nwant++] = names->bcinfo;
	for (int t = 0; t < BTJIT_NTARGETS; t++)
		if (names->entries[t][0] != '\0')
		{
			wanted_target[nwant] = t;
			want[nwant++] = names->entries[t];
		}
	wanted.names = want;
	wanted.addrs = addr;
	wanted.n = nwant;
	known.symbols = btjit_object_known;
	known.n = btjit_object_nknown;
	ok = btjit_object_link_known(data + sizeof(BtjitObjectHeader),
								 len - sizeof(BtjitObjectHeader),
								 &wanted, &known, why.text, sizeof(why.text));
	pfree(data);
	if (!ok)
	{
		ereport(LOG,
				(errmsg("btree_jit: ignoring cached object \"%s\": %s", path,
						why.text)));
		return false;
	}
	/*
	 * Used: its modification time orders the cache for eviction (access
	 * times are not kept on relatime or noatime mounts).  At most once a
	 * BTJIT_OBJECT_TOUCH_SECS, so that a storm of connections does not
	 * write the inode over and over; a failure only makes it older.
	 */
	if (time(NULL) - mtime >= BTJIT_OBJECT_TOUCH_SECS)
		(void) utimensat(AT_FDCWD, path, NULL, 0);
	memset(&code->linked, 0, sizeof(code->linked));
	code->linked.search = (BtjitSearchFn) addr[0];
	strlcpy(code->linked.bcinfo, ((BtjitBcInfoFn) addr[1]) (),
			sizeof(code->linked.bcinfo));
	for (int i = 2; i < nwant; i++)
		code->linked.entries[wanted_target[i]] = addr[i];
	return true;
}

/*
 * Store an object for later backends: write a private temporary file and
 * rename it into place.  Best effort: a full disk or a full cache only
 * costs later backends a compile.
 */
void
btjit_object_cache_store(const BtjitObjectNames *names, const char *data,
						 size_t len)
{
	BtjitWhy	why;

	(void) btjit_object_cache_write(names, data, len, &why);
}

/*
 * fsync a file or directory by path, as fsync_fname() does, but saying why
 * it failed in why instead of raising an error (the compile worker's
 * child reports by text).  With fsync = off, pg_fsync does nothing.
 */
static bool
btjit_fsync_path(const char *path, bool isdir, BtjitWhy *why)
{
	int			fd;
	bool		ok;

	fd = OpenTransientFile(path, (isdir ? O_RDONLY : O_RDWR) | PG_BINARY);
	if (fd < 0)
	{
		btjit_why_set(why, "could not open \"%s\": %m", path);
		return false;
	}
	ok = (pg_fsync(fd) == 0);
	if (!ok)
		btjit_why_set(why, "could not fsync \"%s\": %m", path);
	CloseTransientFile(fd);
	return ok;
}

/*
 * Write header and object to a new file at tmp and fsync it.  False with
 * why; the caller removes tmp.
 */
static bool
btjit_object_file_write(const char *tmp, const BtjitObjectHeader *header,
						const char *data, size_t len, BtjitWhy *why)
{
	int			fd;
	bool		ok;

	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
	{
		btjit_why_set(why, "could not create file \"%s\": %m", tmp);
		return false;
	}
	errno = 0;
	ok = (write(fd, header, sizeof(*header)) == (ssize_t) sizeof(*header) &&
		  write(fd, data, len) == (ssize_t) len);
	if (!ok)
	{
		if (errno == 0)
			errno = ENOSPC;		/* a short write: no space, most likely */
		btjit_why_set(why, "could not write file \"%s\": %m", tmp);
	}
	if (ok && pg_fsync(fd) != 0)
	{
		btjit_why_set(why, "could not fsync file \"%s\": %m", tmp);
		ok = false;
	}
	if (CloseTransientFile(fd) != 0 && ok)
	{
		btjit_why_set(why, "could not close file \"%s\": %m", tmp);
		ok = false;
	}
	return ok;
}

/* An object file of the cache directory, for eviction. */
typedef struct BtjitCachedFile
{
	char		name[BTJIT_OBJECT_KEY_LEN + 8];
	struct timespec mtime;
} BtjitCachedFile;

static int
btjit_cached_file_cmp(const void *a, const void *b)
{
	const BtjitCachedFile *fa = a;
	const BtjitCachedFile *fb = b;

	if (fa->mtime.tv_sec != fb->mtime.tv_sec)
		return fa->mtime.tv_sec < fb->mtime.tv_sec ? -1 : 1;
	if (fa->mtime.tv_nsec != fb->mtime.tv_nsec)
		return fa->mtime.tv_nsec < fb->mtime.tv_nsec ? -1 : 1;
	return strcmp(fa->name, fb->name);
}

/*
 * Is name a writer's temporary file ("<name>.tmp.<pid>") that nobody will
 * rename any more?  Its writer is not alive (kill 0 says ESRCH), or it is
 * older than BTJIT_TMP_STALE_SECS.  A live writer's file is left alone: it
 * is renamed or removed by its writer within moments.
 */
static bool
btjit_tmp_file_stale(const char *dir, const char *name)
{
	const char *tag = strstr(name, ".tmp.");
	char		path[MAXPGPATH];
	struct stat st;
	char	   *end;
	long		pid;

	if (tag == NULL)
		return false;
	errno = 0;
	pid = strtol(tag + 5, &end, 10);
	if (errno != 0 || end == tag + 5 || *end != '\0')
		return false;			/* not a name we write */
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	if (pid > 0 && pid != MyProcPid && kill((pid_t) pid, 0) != 0 &&
		errno == ESRCH)
		return true;
	return time(NULL) - st.st_mtime > BTJIT_TMP_STALE_SECS;
}

/* Remove a stale temporary file (see btjit_tmp_file_stale). */
static void
btjit_tmp_file_remove(const char *dir, const char *name)
{
	char		path[MAXPGPATH];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unlink(path) == 0)
		ereport(LOG,
				(errmsg("btree_jit: removed temporary file \"%s\" left by a writer that did not finish",
						path)));
}

/* Remove the stale temporary files of the cache directory dir. */
static void
btjit_cache_clean_dir(const char *dir)
{
	DIR		   *d;
	struct dirent *de;

	d = AllocateDir(dir);
	if (d == NULL)
		return;					/* no cache yet */
	while ((de = ReadDirExtended(d, dir, LOG)) != NULL)
		if (btjit_tmp_file_stale(dir, de->d_name))
			btjit_tmp_file_remove(dir, de->d_name);
	FreeDir(d);
}

/*
 * Remove the temporary files that writers left in the cache directory (a
 * backend or compile child that died between its write and its rename):
 * called at start-up (the postmaster's preload, the compile worker's
 * start); eviction does it too.
 */
void
btjit_object_cache_clean(void)
{
	char		dir[MAXPGPATH];

	btjit_object_cache_dir(dir);
	btjit_cache_clean_dir(dir);
}

/*
 * How many objects in use (written or linked within the last
 * BTJIT_OBJECT_TOUCH_SECS) this process evicted since it last asked.
 */
int
btjit_object_cache_evictions_in_use(void)
{
	int			n = btjit_evicted_in_use;

	btjit_evicted_in_use = 0;
	return n;
}

/*
 * Which objects a backend is waiting to link: worker.c gives its check at
 * preload, so that every process inherits it (the compile child, which
 * takes no lock, answers from a copy made before it was forked).
 */
void
btjit_object_cache_set_pins(bool (*pinned) (const char *key))
{
	btjit_object_pinned = pinned;
}

/*
 * Make room for one more object under btree_jit.object_cache_max_files:
 * remove the least recently used objects (by modification time, which a
 * link brings forward: btjit_object_cache_load), so that a full cache
 * never locks new shapes out.  A backend that linked an evicted object
 * keeps its code; the next backend to want that shape compiles it again.
 * An object that a backend has queued and not linked yet is never removed:
 * the compile worker made it for that backend, and removing it would only
 * queue the shape again (the cache then stays above its bound until they
 * are linked; the worker logs that the bound is too small).  Stale
 * temporary files are removed on the way.  False with why only if nothing
 * could be removed.
 */
static bool
btjit_object_cache_room(const char *dir, BtjitWhy *why)
{
	DIR		   *d;
	struct dirent *de;
	BtjitCachedFile *files;
	int			nfiles = 0;
	int			npinned = 0;
	int			maxfiles = 64;
	int			excess;

	if (btjit_object_cache_max_files <= 0)
		return true;
	files = palloc(maxfiles * sizeof(BtjitCachedFile));
	d = AllocateDir(dir);
	while (d != NULL && (de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		size_t		namelen = strlen(de->d_name);
		char		path[MAXPGPATH];
		char		key[BTJIT_OBJECT_KEY_LEN + 8];
		struct stat st;

		if (btjit_tmp_file_stale(dir, de->d_name))
		{
			btjit_tmp_file_remove(dir, de->d_name);
			continue;
		}
		/* objects only: not the temporary files of live writers */
		if (namelen <= 2 || namelen >= sizeof(files->name) ||
			strcmp(de->d_name + namelen - 2, ".o") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0)
			continue;			/* removed meanwhile */
		memcpy(key, de->d_name, namelen - 2);
		key[namelen - 2] = '\0';
		if (btjit_object_pinned != NULL && btjit_object_pinned(key))
		{
			npinned++;			/* counts towards the bound, stays */
			continue;
		}
		if (nfiles == maxfiles)
		{
			maxfiles *= 2;
			files = repalloc(files, maxfiles * sizeof(BtjitCachedFile));
		}
		strlcpy(files[nfiles].name, de->d_name, sizeof(files->name));
		files[nfiles].mtime = st.st_mtim;
		nfiles++;
	}
	if (d != NULL)
		FreeDir(d);

	excess = nfiles + npinned - btjit_object_cache_max_files + 1;
	if (excess > nfiles)
		excess = nfiles;		/* the rest are pinned */
	if (excess > 0)
	{
		int			removed = 0;

		time_t		now = time(NULL);

		qsort(files, nfiles, sizeof(BtjitCachedFile), btjit_cached_file_cmp);
		for (int i = 0; i < nfiles && removed < excess; i++)
		{
			char		path[MAXPGPATH];

			snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
			if (unlink(path) == 0 || errno == ENOENT)
			{
				removed++;
				if (now - files[i].mtime.tv_sec < BTJIT_OBJECT_TOUCH_SECS)
					btjit_evicted_in_use++;
			}
		}
		if (removed == 0)
		{
			btjit_why_set(why, "the object cache is full (btree_jit.object_cache_max_files = %d) and no object could be removed: %m",
						  btjit_object_cache_max_files);
			pfree(files);
			return false;
		}
	}
	pfree(files);
	return true;
}

/*
 * The same, saying why it did not store the object (the compile worker
 * reports that: without the object its compile serves no backend).
 *
 * Durable as PostgreSQL's durable_rename(): the object (behind its header,
 * see BtjitObjectHeader) goes to a private temporary file, which is
 * fsynced, renamed into place, and the directory fsynced, so that after an
 * OS crash the name holds the whole object or does not exist.  Raises no
 * error of its own: every failure is a reason in why.
 */
bool
btjit_object_cache_write(const BtjitObjectNames *names, const char *data,
						 size_t len, BtjitWhy *why)
{
	char		dir[MAXPGPATH];
	char		path[MAXPGPATH];
	char		tmp[MAXPGPATH + 32];
	BtjitObjectHeader header;
	bool		ok;

	snprintf(dir, sizeof(dir), "%s/%s", DataDir, BTJIT_OBJECT_CACHE_DIR);
	if (MakePGDirectory(dir) == 0)
	{
		/* a new directory: make its entry in the data directory durable */
		if (!btjit_fsync_path(DataDir, true, why))
			return false;
	}
	else if (errno != EEXIST)
	{
		btjit_why_set(why, "could not create directory \"%s\": %m", dir);
		return false;
	}
	if (!btjit_object_cache_room(dir, why))
		return false;

	memset(&header, 0, sizeof(header));
	memcpy(header.magic, BTJIT_OBJECT_MAGIC, sizeof(header.magic));
	header.header_size = sizeof(header);
	header.length = len;
	header.build = btjit_build_identity();
	strlcpy(header.key, names->key, sizeof(header.key));
	header.crc = btjit_object_crc(&header, data, len);

	btjit_object_path(names, path);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, MyProcPid);
	ok = btjit_object_file_write(tmp, &header, data, len, why);
	if (ok && rename(tmp, path) != 0)
	{
		btjit_why_set(why, "could not rename file \"%s\" to \"%s\": %m",
					  tmp, path);
		ok = false;
	}
	if (!ok)
	{
		unlink(tmp);
		return false;
	}
	return btjit_fsync_path(dir, true, why);
}

/* How many objects the cache directory holds (the compile worker's warm start). */
int
btjit_object_cache_count(void)
{
	char		dir[MAXPGPATH];
	DIR		   *d;
	struct dirent *de;
	int			n = 0;

	btjit_object_cache_dir(dir);
	d = AllocateDir(dir);
	while (d != NULL && (de = ReadDirExtended(d, dir, LOG)) != NULL)
	{
		size_t		namelen = strlen(de->d_name);

		if (namelen > 2 && strcmp(de->d_name + namelen - 2, ".o") == 0)
			n++;
	}
	if (d != NULL)
		FreeDir(d);
	return n;
}

/* Is there an object for names?  (The compile worker's warm start.) */
bool
btjit_object_cache_exists(const BtjitObjectNames *names)
{
	char		path[MAXPGPATH];

	btjit_object_path(names, path);
	return access(path, R_OK) == 0;
}

/* Is there an object for this key?  (The worker's list of shapes.) */
bool
btjit_object_cache_file_exists(const char *key)
{
	char		path[MAXPGPATH];

	snprintf(path, MAXPGPATH, "%s/%s/%s.o", DataDir, BTJIT_OBJECT_CACHE_DIR,
			 key);
	return access(path, R_OK) == 0;
}

/* The object cache directory (the compile worker keeps its list there). */
void
btjit_object_cache_dir(char *path)
{
	snprintf(path, MAXPGPATH, "%s/%s", DataDir, BTJIT_OBJECT_CACHE_DIR);
}
