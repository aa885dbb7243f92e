/*-------------------------------------------------------------------------
 *
 * pg_compat.h
 *	  The differences between the PostgreSQL major versions the module
 *	  supports (15, 17, 18, 19), each named once.
 *
 * Included by the module's C files and by the bitcode template, so that
 * both read the server's structs the same way.  Every difference the code
 * depends on is a macro here, with the version that introduced it, so that
 * a reader sees the whole list in one place (src/README, "The contract",
 * says what each means for the page search).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_JIT_PG_COMPAT_H
#define BTREE_JIT_PG_COMPAT_H

#include "access/nbtree.h"

/*
 * The majors whose builds the module was verified on.  The code compiles
 * for others between them (16 has 15's layout), but the module then stays
 * inactive at start-up and says why: nobody has checked that server's
 * binary and semantics against the contract.
 */
#define BTJIT_SUPPORTED_MAJORS		"15, 17, 18, 19"
#define BTJIT_MAJOR_SUPPORTED(major) \
	((major) == 15 || (major) == 17 || (major) == 18 || (major) == 19)

/*
 * BTScanInsertData's flag at offset 4.  Up to 16 it is pivotsearch (set
 * only by page deletion's search for a leaf by its high key); from 17 it is
 * backward, set by every backward scan as well.  _bt_compare's tie-break
 * for a pivot with a truncated heap TID tests it the same way in both;
 * from 17 _bt_binsrch also uses it on leaf pages (BTJIT_LEAF_BACKWARD).
 */
#if PG_VERSION_NUM >= 170000
#define BTJIT_KEY_BACKWARD(key)		((key)->backward)
#define BTJIT_KEY_BACKWARD_NAME		"backward"
#else
#define BTJIT_KEY_BACKWARD(key)		((key)->pivotsearch)
#define BTJIT_KEY_BACKWARD_NAME		"pivotsearch"
#endif

/*
 * From 17, _bt_binsrch on a leaf page returns the offset before the one it
 * found when the scankey is backward (in 15 _bt_first took that step after
 * the call).  An empty page still returns the first data key unchanged.
 */
#if PG_VERSION_NUM >= 170000
#define BTJIT_LEAF_BACKWARD 1
#else
#define BTJIT_LEAF_BACKWARD 0
#endif

/*
 * _bt_checkkeys, the scan-key test _bt_readpage makes for each tuple it
 * reads.  15 exports (scan, tuple, tupnatts, dir, &continuescan).  17 and
 * 18 export (scan, pstate, arrayKeys, tuple, tupnatts): the result goes to
 * pstate->continuescan, and the scan's direction is pstate->dir in 17 and
 * so->currPos.dir in 18.  19 made it static, inside _bt_readpage, so it
 * cannot be redirected there.  BTJIT_CHECKKEYS_READPAGE_STATE names 17 and
 * 18's form; BTJIT_CHECKKEYS_REDIRECTABLE holds where either form is
 * exported.
 */
#if PG_VERSION_NUM < 160000
#define BTJIT_CHECKKEYS_REDIRECTABLE 1
#elif PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 190000
#define BTJIT_CHECKKEYS_REDIRECTABLE 1
#define BTJIT_CHECKKEYS_READPAGE_STATE 1
#if PG_VERSION_NUM >= 180000
#define BTJIT_READPAGE_DIR(so, pstate)	((so)->currPos.dir)
#else
#define BTJIT_READPAGE_DIR(so, pstate)	((pstate)->dir)
#endif
/*
 * The read state a continuescan pointer belongs to: the dispatcher always
 * hands compiled code &pstate->continuescan (or that of verify's copy),
 * and the compiled code and the declined callback find the state there.
 */
#define BTJIT_READPAGE_STATE_OF(continuescan) \
	((BTReadPageState *) ((char *) (continuescan) - \
						  offsetof(BTReadPageState, continuescan)))
#endif

/*
 * The compiled scan-key check (the template's btjit_check_entry) is built
 * wherever the module has a leaf read or a _bt_checkkeys to give it to:
 * 15, 17, 18 and 19.
 */
#if PG_VERSION_NUM < 160000 || PG_VERSION_NUM >= 170000
#define BTJIT_CHECKS_COMPILED 1
#endif

/*
 * _bt_readpage, the leaf read: static up to 18 and located by
 * src/locate/readpage.c as the caller of _bt_checkkeys, exported from 19.
 * The module replaces it where it can call the compiled checks directly:
 * 15, where it is (scan, dir, offnum) and hands _bt_checkkeys
 * &continuescan; 17 and 18, where it is (scan, dir, offnum, firstPage) and
 * hands it a BTReadPageState (BTJIT_CHECKKEYS_READPAGE_STATE); and 19, with
 * 18's signature, whose _bt_checkkeys is static inside it and whose
 * BTReadPageState is private to nbtreadpage.c.  17 adds the precheck of
 * the page's last tuple and sets currPos.dir; 18 takes the page's
 * predicate lock, sets prevPage and startikey, and leaves the LSN to its
 * callers; 19 reads as 18 does.
 */
#ifdef BTJIT_CHECKS_COMPILED
#define BTJIT_READPAGE_REDIRECTABLE 1
#endif
#if PG_VERSION_NUM >= 170000
#define BTJIT_READPAGE_FIRSTPAGE 1
#endif

/*
 * _bt_first, the start of a scan: the module starts simple scans itself on
 * 15, 17 and 18, whose _bt_first reads the first page with _bt_readpage
 * and, when that returns nothing, steps on with _bt_steppage (the module:
 * with _bt_next, src/README "The scan start"; 18 does both in its static
 * _bt_readfirstpage).  18 drops a page's pin by so->dropPin, taking the
 * page's LSN only then, and adds skip arrays for columns with no = key
 * before a column with a key (BTJIT_SCAN_START_SKIP_ARRAYS).
 */
#if defined(BTJIT_READPAGE_REDIRECTABLE) && PG_VERSION_NUM < 190000
#define BTJIT_SCAN_START 1
#endif
#if PG_VERSION_NUM >= 180000
#define BTJIT_SCAN_START_SKIP_ARRAYS 1
#endif

/*
 * Array keys (IN-lists, = ANY) up to 16 are advanced between primitive
 * scans, by btgettuple after a scan's end: each primitive scan's keyData
 * holds the current elements as ordinary keys, and _bt_readpage and
 * _bt_checkkeys do not know arrays.  There the module's leaf read takes a
 * scan with array keys as any other.  From 17 on the arrays advance inside
 * _bt_checkkeys, tuple by tuple, and such a scan is the server's.
 */
#if PG_VERSION_NUM < 170000
#define BTJIT_READPAGE_TAKES_ARRAY_KEYS 1
#endif

/*
 * 17 and 18: the module's leaf read takes a serial scan whose array keys
 * are all required, and hands the server's _bt_checkkeys each tuple at
 * which its arrays may have to advance: those whose compiled check ends
 * the scan with the current elements, the page's high key included.  The
 * server then decides (the tuple is before the arrays, they advance, a new
 * primitive scan, the end) and may move the walk ahead on the page
 * (pstate->skip).  With every array required, the compiled check's answer
 * for any other tuple is the one _bt_checkkeys gives without touching the
 * arrays (src/README, "Array keys in the leaf read").
 *
 * 18 adds skip arrays (a scan with them stays the server's), and
 * BTJIT_READPAGE_ARRAYS_SCAN_BEHIND: a page reached with so->scanBehind
 * set is checked against its final tuple (_bt_scanbehind_checkkeys) before
 * any other, and goes to the server's read whole; the read otherwise
 * clears oppositeDirCheck, and a backward walk stops where the server's
 * test sets scanBehind.  The module calls no _bt_set_startikey for such a
 * scan (its forced non-required keys advance the arrays tuple by tuple).
 */
#if PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 190000
#define BTJIT_READPAGE_ARRAY_HANDOFF 1
#endif
#if PG_VERSION_NUM >= 180000 && PG_VERSION_NUM < 190000
#define BTJIT_READPAGE_ARRAYS_SCAN_BEHIND 1
#endif

/*
 * 19: the module's leaf read is the only caller of the compiled check.
 * There is no server _bt_checkkeys to hand a declined tuple to: the module
 * tests it in C by 19's rules (src/targets/checkkeys.c), and what that does
 * not take (a row comparison) marks the read's own BtjitLeafreadChecks
 * (src/targets/targets.h), whose continuescan the check is handed, and the
 * read leaves the whole page to the server's _bt_readpage.  No key is
 * skipped: 19's _bt_set_startikey is static, and its skip only spares
 * tests whose outcome it already knows.
 */
#if PG_VERSION_NUM >= 190000
#define BTJIT_READPAGE_OWNS_CHECKS 1
#endif

/*
 * The order of a posting list's TIDs in currPos.items[]: up to 18 a
 * backward read saves them from the top down in ascending order, so that
 * the scan returns them ascending; 19 saves them in ascending order of
 * their slots, so that a backward scan returns them descending.
 */
#if PG_VERSION_NUM >= 190000
#define BTJIT_POSTING_SLOTS_ASCENDING 1
#endif

/*
 * The keys the server's _bt_checkkeys skips because the page's tuples are
 * known to satisfy them (src/README, "Scan-key checks").  17 skips by
 * requirement: pstate->prechecked (the page's last tuple in the scan's
 * direction left continuescan true, never on a scan's first page) skips the
 * keys required in the scan's direction, and pstate->firstmatch (a tuple of
 * the page matched) those required only in the other one, whole when
 * prechecked too, else their operator call (which the compiled walk makes:
 * src/README); never a row comparison.  18 skips the keys before
 * pstate->startikey (pages after the first), unless
 * pstate->forcenonrequired (used with array keys only) changes the rules.
 */
#if PG_VERSION_NUM >= 180000 && PG_VERSION_NUM < 190000
#define BTJIT_READPAGE_SKIPS_STARTIKEY 1
#elif PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 180000
#define BTJIT_READPAGE_SKIPS_PRECHECKED 1
#endif

/*
 * The built-in "POSIX" collation.  18 still has it with the same fixed OID
 * (pg_collation.dat) but no longer names it in pg_collation_d.h.
 */
#include "catalog/pg_collation_d.h"
#ifndef POSIX_COLLATION_OID
#define POSIX_COLLATION_OID 951
#endif

/*
 * Whether the database's default collation compares in byte order (C or
 * POSIX).  18 replaced lc_collate_is_c() by a flag of the collation's
 * pg_locale_t.  Callers include utils/pg_locale.h.
 */
#if PG_VERSION_NUM >= 180000
#define BTJIT_DEFAULT_COLLATION_IS_C() \
	(pg_newlocale_from_collation(DEFAULT_COLLATION_OID)->collate_is_c)
#else
#define BTJIT_DEFAULT_COLLATION_IS_C() lc_collate_is_c(DEFAULT_COLLATION_OID)
#endif

/*
 * A shared hash table of a fixed number of entries.  19 dropped
 * ShmemInitHash's separate initial size: one nelems, allocated at once.
 */
#if PG_VERSION_NUM >= 190000
#define BTJIT_SHMEM_INIT_HASH(name, nelems, info, flags) \
	ShmemInitHash((name), (nelems), (info), (flags))
#else
#define BTJIT_SHMEM_INIT_HASH(name, nelems, info, flags) \
	ShmemInitHash((name), (nelems), (nelems), (info), (flags))
#endif

/*
 * The default action of a signal, for pqsignal().  From 19 a handler takes
 * a second argument (SIGNAL_ARGS), so SIG_DFL needs the cast the server
 * names PG_SIG_DFL; before, SIG_DFL has the handler's type.
 */
#ifndef PG_SIG_DFL
#define PG_SIG_DFL SIG_DFL
#endif

/*
 * A relation's physical identity, as ReadRecentBuffer takes it: 15's
 * RelFileNode (rd_node, relNode), 16's RelFileLocator (rd_locator,
 * relNumber).  The file number is the part runtime/recentbuf.c keys on.
 */
#if PG_VERSION_NUM >= 160000
typedef RelFileNumber RelFileNumberCompat;
#define BTJIT_REL_FILE_NUMBER(rel)	((rel)->rd_locator.relNumber)
#define BTJIT_REL_LOCATOR(rel)		((rel)->rd_locator)
#else
typedef Oid RelFileNumberCompat;
#define BTJIT_REL_FILE_NUMBER(rel)	((rel)->rd_node.relNode)
#define BTJIT_REL_LOCATOR(rel)		((rel)->rd_node)
#endif

/*
 * The rows an index scan returned, in the index's pending statistics
 * (pgstat_count_index_tuples): 16 renamed PgStat_TableCounts' fields.
 */
#if PG_VERSION_NUM >= 160000
#define BTJIT_PGSTAT_TUPLES_RETURNED(tabstat)	((tabstat)->counts.tuples_returned)
#else
#define BTJIT_PGSTAT_TUPLES_RETURNED(tabstat)	((tabstat)->t_counts.t_tuples_returned)
#endif

/*
 * index_getnext_tid, which the step from item to item is also taken from
 * (targets/gettuple.c): its source is at hand for 15 to 18.
 */
#if PG_VERSION_NUM < 190000
#define BTJIT_GETNEXT_REDIRECTABLE 1
#endif

/*
 * index_deform_tuple_internal, which an index-only scan's row is taken out
 * of its tuple with (targets/deform.c): its source is at hand for 15 to 18.
 */
#if PG_VERSION_NUM < 190000
#define BTJIT_DEFORM_REDIRECTABLE 1
#endif

#endif							/* BTREE_JIT_PG_COMPAT_H */
