/*-------------------------------------------------------------------------
 *
 * fake_server.c
 *	  A miniature of the server's nbtree page search, for test_patcher.
 *
 * It has what the locator looks for in the real server: exported
 * _bt_search, _bt_first and _bt_compare, exported BufferBlocks and
 * LocalBufferBlockPointers, and a static _bt_binsrch(Relation,
 * BTScanInsert, Buffer) called once from each of the two callers.  The
 * Makefile builds it several ways: with and without frame pointer and
 * endbr64 (the shapes other distributions' builds have; -DFAKE_ENDBR puts
 * one on _bt_binsrch itself, see below), and broken on
 * purpose (-DFAKE_SWAPPED: arguments in another order, as a gcc clone
 * might have them; -DFAKE_ADDR_TAKEN: address stored in a pointer;
 * -DFAKE_EXTRA_CALLER: a third caller; -DFAKE_IPA_RA: no indirect call
 * below it).  These binaries are not stripped,
 * so test_patcher can read the true address of _bt_binsrch from .symtab.
 *
 * Run as "fake_server --self", it locates its own _bt_binsrch through
 * /proc/self/exe, detours it to a counting replacement, checks that the
 * searches still give the same answers, and prints one line:
 *	  SELF ok offset=0x... calls=N patch_offset=N displaced=N
 * or
 *	  SELF fail <reason>
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binpatch.h"
#include "locate.h"

#define BLCKSZ 8192
#define NPAGES 4

typedef int Buffer;
typedef unsigned short OffsetNumber;
typedef struct RelationData
{
	int			id;
} RelationData, *Relation;
typedef struct BTScanInsertData
{
	int			nextkey;
	int			key;
} BTScanInsertData, *BTScanInsert;

/* what the server exports */
extern int	_bt_compare(Relation rel, BTScanInsert key, char *page, OffsetNumber off);
extern int	_bt_search(Relation rel, BTScanInsert key, Buffer *bufP, int levels);
extern int	_bt_first(Relation rel, BTScanInsert key, Buffer buf);
extern int	_bt_other(Relation rel, BTScanInsert key, Buffer buf);

/* the buffer pool: shared pages and backend-local ones */
char	   *BufferBlocks;
char	  **LocalBufferBlockPointers;

/* keep gcc from cloning or inlining, as it did not in Debian's build */
#define KEEP __attribute__((noinline, noclone))

/*
 * gcc gives a static function that is not address-taken no endbr64 even
 * under -fcf-protection.  With -DFAKE_ENDBR, _bt_binsrch is instead a
 * hidden-visibility global: still absent from .dynsym, but given an
 * endbr64 entry, the shape of a build where it has one.
 */
#ifdef FAKE_ENDBR
#define BINSRCH_LINKAGE __attribute__((visibility("hidden")))
OffsetNumber _bt_binsrch(Relation rel, BTScanInsert key, Buffer buf);
#else
#define BINSRCH_LINKAGE static
#endif

/*
 * The comparator is called through a pointer, as the real _bt_compare calls
 * FunctionCall2Coll, which calls the proc through one: gcc then cannot
 * assume (-fipa-ra) that calling _bt_compare leaves any call-clobbered
 * register intact, which is what the locator's step 6 shows.  The call is
 * not a tail call (a jump through a register, which the locator does not
 * take for a call).  -DFAKE_IPA_RA compares in place instead: a leaf whose
 * callers the compiler may build to rely on its register use, which the
 * locator must refuse.
 */
static int
int_cmp(int a, int b)
{
	return (a > b) - (a < b);
}

int			(*volatile comparator) (int, int) = int_cmp;

/* page layout of the miniature: int nitems, then sorted int keys 1..n */
KEEP int
_bt_compare(Relation rel, BTScanInsert key, char *page, OffsetNumber off)
{
	const int  *p = (const int *) page;
	int			result;

	(void) rel;
#ifdef FAKE_IPA_RA
	result = int_cmp(key->key, p[off]);
	/*
	 * Said to change every call-clobbered general register, so that the
	 * caller keeps nothing in one (else step 4 refuses first): only step 6
	 * can refuse.
	 */
	__asm__ volatile ("":::"rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11");
#else
	result = comparator(key->key, p[off]);
	__asm__ volatile ("":::"memory");
#endif
	return result;
}

#ifdef FAKE_SWAPPED
#define BINSRCH_ARGS(rel, key, buf) (key, rel, buf)
BINSRCH_LINKAGE KEEP OffsetNumber
_bt_binsrch(BTScanInsert key, Relation rel, Buffer buf)
#else
#define BINSRCH_ARGS(rel, key, buf) (rel, key, buf)
BINSRCH_LINKAGE KEEP OffsetNumber
_bt_binsrch(Relation rel, BTScanInsert key, Buffer buf)
#endif
{
	char	   *page;
	int			low;
	int			high;
	int			cmpval;

	if (buf < 0)
		page = LocalBufferBlockPointers[-buf - 1];
	else
		page = BufferBlocks + (size_t) (buf - 1) * BLCKSZ;
	low = 1;
	high = ((int *) page)[0] + 1;
	cmpval = key->nextkey ? 0 : 1;
	while (high > low)
	{
		int			mid = low + (high - low) / 2;

		if (_bt_compare(rel, key, page, (OffsetNumber) mid) >= cmpval)
			low = mid + 1;
		else
			high = mid;
	}
	return (OffsetNumber) low;
}

#ifdef FAKE_ADDR_TAKEN
OffsetNumber (*volatile binsrch_pointer) (Relation, BTScanInsert, Buffer) = _bt_binsrch;
#endif

volatile int sink;

/* descends "levels"; the answer of each level picks the next buffer */
KEEP int
_bt_search(Relation rel, BTScanInsert key, Buffer *bufP, int levels)
{
	Buffer		buf = *bufP;
	int			total = 0;

	while (levels-- > 0)
	{
		OffsetNumber off = _bt_binsrch BINSRCH_ARGS(rel, key, buf);

		total += off;
		buf = (buf % NPAGES) + 1;
	}
	*bufP = buf;
	return total;
}

KEEP int
_bt_first(Relation rel, BTScanInsert key, Buffer buf)
{
	OffsetNumber off = _bt_binsrch BINSRCH_ARGS(rel, key, buf);

	sink = off;
	return off * 3 + 1;			/* not a tail call */
}

#ifdef FAKE_EXTRA_CALLER
KEEP int
_bt_other(Relation rel, BTScanInsert key, Buffer buf)
{
	OffsetNumber off = _bt_binsrch BINSRCH_ARGS(rel, key, buf);

	sink = off;
	return off + 7;
}
#endif

/* ---- self test ---- */

static BtjitDetour detour;
static int	ncalls;

static OffsetNumber
replacement(Relation rel, BTScanInsert key, Buffer buf)
{
	OffsetNumber (*stock) (Relation, BTScanInsert, Buffer);

	ncalls++;
	stock = (OffsetNumber (*) (Relation, BTScanInsert, Buffer)) detour.stock;
	return stock(rel, key, buf);
}

static void
setup_pages(void)
{
	int			i;
	int			k;
	static char *local[NPAGES];

	BufferBlocks = aligned_alloc(BLCKSZ, BLCKSZ * NPAGES);
	LocalBufferBlockPointers = local;
	for (i = 0; i < NPAGES; i++)
	{
		int		   *p = (int *) (BufferBlocks + (size_t) i * BLCKSZ);

		p[0] = 100 + 37 * i;
		for (k = 1; k <= p[0]; k++)
			p[k] = 2 * k + i;
		local[i] = malloc(BLCKSZ);
		memcpy(local[i], p, BLCKSZ);
	}
}

/* a fixed workload touching shared and local buffers, both callers */
static long
workload(void)
{
	RelationData rel = {1};
	BTScanInsertData key;
	long		sum = 0;
	int			k;

	for (k = -5; k < 400; k += 3)
	{
		Buffer		b = 1 + (k & 3);

		key.key = k;
		key.nextkey = k & 1;
		sum = sum * 31 + _bt_search(&rel, &key, &b, 3);
		sum = sum * 31 + _bt_first(&rel, &key, (Buffer) (1 + ((k >> 2) & 3)));
		sum = sum * 31 + _bt_first(&rel, &key, (Buffer) -(1 + (k & 3)));
#ifdef FAKE_EXTRA_CALLER
		sum += _bt_other(&rel, &key, 1);
#endif
	}
	return sum;
}

static int
self_test(void)
{
	BtjitLocation loc;
	char		why[1024];
	long		expect;
	long		got;
	long		stock_only;
	BtjitDetour saved;
	BtjitLocateRequest request = {BTJIT_LOCATE_NORMAL, 0, {NULL}};

	setup_pages();
	expect = workload();
	if (!btjit_locate_binsrch(&request, &loc, why, sizeof(why)))
	{
		printf("SELF fail locate: %s\n", why);
		return 1;
	}
	if (!btjit_detour_install((void *) loc.binsrch, loc.binsrch_size,
							  (void *) replacement, &detour, why, sizeof(why)))
	{
		printf("SELF fail install: %s\n", why);
		return 1;
	}
	ncalls = 0;
	got = workload();
	stock_only = ncalls;
	saved = detour;
	if (!btjit_detour_remove(&detour, why, sizeof(why)))
	{
		printf("SELF fail remove: %s\n", why);
		return 1;
	}
	if (got != expect)
	{
		printf("SELF fail results differ under the detour (%ld vs %ld)\n", got, expect);
		return 1;
	}
	if (workload() != expect)
	{
		printf("SELF fail results differ after removal\n");
		return 1;
	}
	printf("SELF ok offset=%#lx calls=%ld patch_offset=%zu displaced=%zu\n",
		   (unsigned long) (loc.binsrch - loc.load_bias), stock_only,
		   saved.patch_offset, saved.displaced_len);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--self") == 0)
		return self_test();
	setup_pages();
	printf("%ld\n", workload());
	return 0;
}
