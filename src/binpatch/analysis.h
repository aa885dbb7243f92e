/*-------------------------------------------------------------------------
 *
 * analysis.h
 *	  The binary-analysis toolkit the locator (src/locate/) builds its
 *	  proofs from: the image under analysis, the per-call context, and the
 *	  proofs each file of this layer offers.
 *
 * Nothing here names a server function: which function is which, and what
 * evidence is enough, is the locator's policy, one layer up, which hands
 * the names and addresses down (CallconvClaim, below).  The files:
 *	elf_image.c	reading the ELF file, its symbols and .eh_frame extents
 *	callconv.c	the calling-convention proofs (data flow over a function)
 *	clobbers.c	the callers' side of it: nothing expected of a redirected
 *				function beyond the ABI
 *	refsweep.c	every relocation and code reference to a function
 *	messages.c	why the locator refuses (loc_fail), addresses by name,
 *				the evidence text (loc_append)
 * x86.h holds the instruction helpers shared with redirect.c.  Nothing
 * here is visible outside the module (see BTJIT_HIDDEN in x86.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_BINPATCH_ANALYSIS_H
#define BTREE_JIT_BINPATCH_ANALYSIS_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "binpatch.h"
#include "x86.h"

#define MAX_SEGS			16
#define MAX_CALLER_BYTES	(256 * 1024)	/* a sane upper bound for a caller */
#define MAX_CAND_BYTES		8192	/* a page search is a few hundred bytes */
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

/* messages.c */
#ifdef __GNUC__
__attribute__((format(printf, 2, 3)))
#endif
extern BTJIT_HIDDEN bool loc_fail(LocCtx *cx, const char *fmt,...);
#ifdef __GNUC__
__attribute__((format(printf, 3, 4)))
#endif
extern BTJIT_HIDDEN void loc_append(char *buf, size_t len, const char *fmt,...);
extern BTJIT_HIDDEN const char *addr_name(const LocCtx *cx, uint64_t vaddr,
										  char *buf, size_t len);

/* elf_image.c */
extern BTJIT_HIDDEN bool image_open(LocCtx *cx, const char *path,
									const char *open_path, uintptr_t bias);
extern BTJIT_HIDDEN void image_close(Image *img);
extern BTJIT_HIDDEN bool check_bias(LocCtx *cx);
extern BTJIT_HIDDEN bool load_fdes(LocCtx *cx);
extern BTJIT_HIDDEN bool loc_open_image(LocCtx *cx, const char *path,
										uintptr_t load_bias, char *why,
										size_t whylen);
extern BTJIT_HIDDEN const uint8_t *code_at(const Image *img, uint64_t vaddr, size_t len);
extern BTJIT_HIDDEN const uint8_t *file_at(const Image *img, uint64_t vaddr, size_t len);
extern BTJIT_HIDDEN const uint8_t *section_data(const Image *img, const Elf64_Shdr *sh);
extern BTJIT_HIDDEN const Elf64_Sym *dynsym_lookup(const Image *img, const char *name,
												   size_t *index);
extern BTJIT_HIDDEN const char *exported_at(const Image *img, uint64_t vaddr);
extern BTJIT_HIDDEN ssize_t fde_le(const Image *img, uint64_t vaddr);
extern BTJIT_HIDDEN const Fde *fde_starting_at(const Image *img, uint64_t vaddr);

/* callconv.c */

/* The two shapes of calling convention a proof can show */
typedef enum CallconvShape
{
	/*
	 * (pointer, pointer, Buffer): at each call to the witness, the entry
	 * rdi and rsi, and the page of the entry Buffer
	 */
	CC_PAGE_SEARCH,
	/*
	 * nargs integer arguments, the first handed whole to the witness;
	 * witness and frame_callee may be given an object in our frame
	 */
	CC_FRAME_WITNESS
} CallconvShape;

/*
 * What a proof is told of the function and of the exported function that
 * witnesses its arguments: from the server headers the caller was built
 * against, never from the binary; the names are for messages.
 */
typedef struct CallconvClaim
{
	CallconvShape shape;
	const char *subject;		/* the function proven */
	const char *witness_name;
	uint64_t	witness;		/* vaddr of the exported witness */
	const char *arg_types[2];	/* what entry rdi, rsi are */
	/* CC_FRAME_WITNESS only: */
	int			nargs;			/* integer arguments: 3 to 5 */
	uint64_t	frame_callee;	/* another function given the same object,
								 * or 0 */
	int			frame_arg;		/* which of their arguments may point into the
								 * caller's frame */
	int32_t		frame_size;		/* ... and how many bytes they may write there */
} CallconvClaim;

extern BTJIT_HIDDEN bool prove_callconv(LocCtx *cx, uint64_t start, uint64_t end,
										const CallconvClaim *claim,
										char *desc, size_t desclen);

/* clobbers.c */
extern BTJIT_HIDDEN bool prove_clobbers_all(LocCtx *cx, uint64_t fn, char *desc,
											size_t desclen);

/* refsweep.c */
extern BTJIT_HIDDEN bool scan_relocs(LocCtx *cx, uint64_t cand, int *ntaken,
									 size_t *nrelocs);
extern BTJIT_HIDDEN bool sweep_refs(LocCtx *cx, uint64_t cand, Ref *refs, int *nrefs,
									int *nhits_out, uint64_t *nbytes);
extern BTJIT_HIDDEN bool direct_refs(LocCtx *cx, uint64_t cand, Ref *refs,
									 int *nrefs, int maxrefs);

#endif							/* BTREE_JIT_BINPATCH_ANALYSIS_H */
