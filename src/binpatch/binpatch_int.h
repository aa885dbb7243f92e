/*-------------------------------------------------------------------------
 *
 * binpatch_int.h
 *	  Private declarations shared by the parts of the locator: the image
 *	  under analysis, the per-call context, and each part's entry points.
 *
 * The locator is split by job, each file calling only those below it:
 *	locate.c	the policy: which function is _bt_binsrch, and what
 *				evidence is enough; the public entry points
 *	callconv.c	the calling-convention proof (data flow over the candidate)
 *	clobbers.c	the callers' side of it: nothing expected of a redirected
 *				function beyond the ABI
 *	readpage.c	finding _bt_readpage and proving its convention
 *	refsweep.c	every relocation and code reference to the candidate
 *	elf_image.c	reading the ELF file, its symbols and .eh_frame extents
 *	messages.c	why the locator refuses (loc_fail), addresses by name
 * x86.h holds the instruction helpers it shares with redirect.c.  Nothing
 * here is visible outside the module (see BTJIT_HIDDEN in x86.h).
 *
 * src/binpatch/binpatch_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_BINPATCH_INT_H
#define BTREE_JIT_BINPATCH_INT_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "binpatch.h"
#include "x86.h"

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

/* What the sweep (refsweep.c) found at a reference to the candidate */
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

/* locate.c: messages */
#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
extern BTJIT_HIDDEN bool loc_fail(LocCtx *cx, const char *fmt,...);
extern BTJIT_HIDDEN const char *addr_name(const LocCtx *cx, uint64_t vaddr,
										  char *buf, size_t len);

/* elf_image.c */
extern BTJIT_HIDDEN bool image_open(LocCtx *cx, const char *path,
									const char *open_path, uintptr_t bias);
extern BTJIT_HIDDEN void image_close(Image *img);
extern BTJIT_HIDDEN bool check_bias(LocCtx *cx);
extern BTJIT_HIDDEN bool load_fdes(LocCtx *cx);
extern BTJIT_HIDDEN const uint8_t *code_at(const Image *img, uint64_t vaddr, size_t len);
extern BTJIT_HIDDEN const uint8_t *file_at(const Image *img, uint64_t vaddr, size_t len);
extern BTJIT_HIDDEN const uint8_t *section_data(const Image *img, const Elf64_Shdr *sh);
extern BTJIT_HIDDEN const Elf64_Sym *dynsym_lookup(const Image *img, const char *name,
												   size_t *index);
extern BTJIT_HIDDEN const char *exported_at(const Image *img, uint64_t vaddr);
extern BTJIT_HIDDEN ssize_t fde_le(const Image *img, uint64_t vaddr);
extern BTJIT_HIDDEN const Fde *fde_starting_at(const Image *img, uint64_t vaddr);

/* callconv.c */
extern BTJIT_HIDDEN bool prove_callconv(LocCtx *cx, uint64_t start, uint64_t end,
										char *desc, size_t desclen);

/*
 * What prove_readpage_callconv is told of _bt_readpage and of the exported
 * function that witnesses its first argument (_bt_checkkeys): from the
 * server headers the caller was built against, never from the binary.
 */
typedef struct ReadpageProto
{
	int			nargs;			/* integer arguments: 3 (15) or 4 (17 on) */
	uint64_t	witness;		/* _bt_checkkeys: its first argument is scan */
	uint64_t	frame_callee;	/* another function given the same object
								 * (18's _bt_set_startikey), or 0 */
	int			frame_arg;		/* which of their arguments may point into the
								 * caller's frame (continuescan, pstate) */
	int32_t		frame_size;		/* ... and how many bytes they may write there */
} ReadpageProto;

extern BTJIT_HIDDEN bool prove_readpage_callconv(LocCtx *cx, uint64_t start,
												 uint64_t end,
												 const ReadpageProto *proto,
												 char *desc, size_t desclen);

/* clobbers.c */
extern BTJIT_HIDDEN bool prove_clobbers_all(LocCtx *cx, uint64_t fn, char *desc,
											size_t desclen);

/* refsweep.c */
extern BTJIT_HIDDEN bool scan_relocs(LocCtx *cx, uint64_t cand, int *ntaken,
									 size_t *nrelocs);
extern BTJIT_HIDDEN bool sweep_refs(LocCtx *cx, uint64_t cand, Ref *refs, int *nrefs,
									int *nhits_out, uint64_t *nbytes);

#endif							/* BTREE_JIT_BINPATCH_INT_H */
