/*-------------------------------------------------------------------------
 *
 * targetlist.h
 *	  The server functions the module redirects, one row each.
 *
 * Everything that exists once per redirected function is generated from
 * this list (src/include/target.h): the BtjitTarget enum, the entry arrays
 * of a compiled shape, of an index's state and of the dispatcher's slot,
 * the symbols of a compiled object, the per-index counters, the stock entry
 * points start-up keeps, and the start-up line.  Adding a redirected
 * function is a row here, a file in src/targets/ (its dispatcher, verify
 * routine, declined path, and its implementation where the module has one),
 * the template's entry if it is compiled, and a test.
 *
 * As in PostgreSQL's rmgrlist.h, there is no include guard: the includer
 * defines BTJIT_TARGET to pick the columns it needs, includes this file,
 * and undefines it.  The order of the rows is the enum's order, and must
 * keep each row after the rows it requires.
 *
 * Columns:
 *	id				BTJIT_TARGET_<id>
 *	name			lower-case name: btjit_<name>_replacement() in
 *					src/targets/<name>.c; jit_<counter> below
 *	symbol			the server function
 *	locate			how start-up finds it (BtjitLocateRule, target.h)
 *	prereq			the target that must be redirected first (or NONE)
 *	template_entry	the bitcode template's function compiled for it, or
 *					NULL when the module implements it in C (the leaf read
 *					calls the compiled check)
 *	object_prefix,	its symbol in a compiled object is prefix + the
 *	object_suffix	object key + suffix
 *	declined		the module's callback a compiled entry hands a call
 *					it declines to (code_abi.h; compiled code calls it by
 *					name), or NULL
 *	entry_type		the compiled entry's type (code_abi.h)
 *	counter			its per-index counters: jit_<counter> (calls the
 *					compiled code or the module answered) and
 *					verified_<counter> (of those, compared with the
 *					server's under verify)
 *	first_major,	the majors in which the server has it in the form the
 *	last_major		module replaces (a function whose form changed between
 *					majors has a row for each, chosen by PG_VERSION_NUM)
 *	releases		whether it is redirected on a point release the module
 *					was not checked against (BtjitReleaseRule, target.h;
 *					the checked releases are mirrorlist.h's)
 *	consequence		what runs the server's code when it is not redirected
 *
 *-------------------------------------------------------------------------
 */

/* id, name, symbol, locate, prereq,
 * template_entry, object_prefix, object_suffix, declined, entry_type, counter,
 * first_major, last_major, releases, consequence */
BTJIT_TARGET(BINSRCH, binsrch, "_bt_binsrch", BTJIT_LOCATE_CALLEE_GROUP, NONE,
			 "btjit_entry", "btjit_entry_", "", "btjit_declined", BtjitEntryFn, searches,
			 15, 19, BTJIT_RELEASES_ANY,
			 "Every B-tree page search uses the server's own code.")
BTJIT_TARGET(COMPARE, compare, "_bt_compare", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 "btjit_compare_entry", "btjit_search_", "_cmp", "btjit_compare_declined",
			 BtjitCompareEntryFn, compares,
			 15, 19, BTJIT_RELEASES_ANY,
			 "Page searches use compiled code; other comparisons use the server's own.")
BTJIT_TARGET(INSERT, insert, "_bt_binsrch_insert", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 "btjit_insert_entry", "btjit_search_", "_ins", "btjit_insert_declined",
			 BtjitInsertEntryFn, inserts,
			 15, 19, BTJIT_RELEASES_CHECKED,
			 "Insertions search their leaf page with the server's own code.")
BTJIT_TARGET(CHECKKEYS, checkkeys, "_bt_checkkeys", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 "btjit_check_entry", "btjit_search_", "_chk", "btjit_check_declined",
			 BtjitCheckEntryFn, checks,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "Scans test their keys with the server's own code.")
/*
 * _bt_readpage is static up to 18: found as the caller of _bt_checkkeys,
 * and redirected after it.  19 exports it and made _bt_checkkeys static
 * inside it: found by its symbol, its compiled checks called by the
 * module's leaf read alone (pg_compat.h, BTJIT_READPAGE_OWNS_CHECKS).
 */
#if PG_VERSION_NUM < 190000
BTJIT_TARGET(READPAGE, readpage, "_bt_readpage", BTJIT_LOCATE_CALLER_OF_EXPORTED, CHECKKEYS,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, leafreads,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "Scans read their leaf pages with the server's own code.")
#else
BTJIT_TARGET(READPAGE, readpage, "_bt_readpage", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, leafreads,
			 19, 19, BTJIT_RELEASES_CHECKED,
			 "Scans read their leaf pages and test their keys with the server's own code.")
#endif
/*
 * A B-tree build: btbuild compiles the index's key shape before the heap
 * is read (and so before a parallel build's workers start, which only link
 * cached code), when the build is large enough to pay for it; the sort of
 * every participant compares with the compiled comparator, set into its
 * Tuplesortstate after tuplesort_begin_index_btree, whose layout up to 16
 * is private (hence checked releases only).
 */
BTJIT_TARGET(BUILD, build, "btbuild", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, builds,
			 15, 19, BTJIT_RELEASES_ANY,
			 "B-tree builds do not compile their key shape before sorting.")
BTJIT_TARGET(BUILDSORT, buildsort, "tuplesort_begin_index_btree", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 "btjit_build_comparetup", "btjit_search_", "_srt", "btjit_build_equal_keys",
			 BtjitBuildComparetupFn, build_compares,
			 15, 19, BTJIT_RELEASES_CHECKED,
			 "B-tree builds sort with the server's own comparator.")
/*
 * 15, 17, 18: the sort of a taken build sort is the module's, before the
 * server's (which then finds its input sorted); it reads the private
 * Tuplesortstate (include/sortmirror.h), whose 19 source is not at hand.
 * Its dispatcher is in targets/buildsort.c, with the sorts it serves.
 */
BTJIT_TARGET(PRESORT, presort, "tuplesort_performsort", BTJIT_LOCATE_EXPORTED, BUILDSORT,
			 "btjit_build_presort", "btjit_search_", "_pst", NULL,
			 BtjitBuildPresortFn, build_presorts,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "B-tree builds sort with the server's own quicksort.")
/*
 * 15, 17, 18: the image comparison of two tuples' keys (deduplication in
 * builds and insertions, suffix truncation, split points); it reproduces
 * _bt_keep_natts_fast and datum_image_eq, whose 19 source is not at hand.
 */
BTJIT_TARGET(KEEPNATTS, keepnatts, "_bt_keep_natts_fast", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 "btjit_keep_natts_entry", "btjit_search_", "_knt", "btjit_keep_natts_declined",
			 BtjitKeepNattsEntryFn, image_compares,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "Deduplication and suffix truncation compare key images with the server's own code.")
/*
 * The descent's page reads, 15 to 18: the root (_bt_getroot, whose read
 * of the root the metapage cache names is taken; a root that moved, and
 * the metapage read, stay the server's), a page read by its block number
 * (_bt_getbuf: a scan's step to the right sibling, a page whose number a
 * scan kept) and the step from one page to the next (_bt_relandgetbuf:
 * every level below the root).  The module pins the page
 * through the buffer this backend last found it in (ReadRecentBuffer),
 * skipping the buffer mapping table, and counts the hit as the buffer
 * manager does (runtime/recentbuf.c); 19's buffer manager is not at hand.
 * The counters count the reads that skipped the table.
 */
BTJIT_TARGET(GETROOT, getroot, "_bt_getroot", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, recent_roots,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "Descents look up their root's buffer in the buffer mapping table.")
BTJIT_TARGET(GETBUF, getbuf, "_bt_getbuf", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, recent_reads,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "B-tree pages read by block number look up their buffer in the buffer mapping table.")
BTJIT_TARGET(RELANDGETBUF, relandgetbuf, "_bt_relandgetbuf", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, recent_steps,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "Descents look up each level's buffer in the buffer mapping table.")
/*
 * The descent itself, 15 to 18: _bt_search, with the page search and the
 * high-key test of each level on the compiled entries called directly, and
 * each level's page read through the buffer it was last found in (the
 * rows above), so that a build whose LTO inlined _bt_relandgetbuf into
 * _bt_search still reads every level so.  Stepping right and finishing an
 * incomplete split stay the server's _bt_moveright, called exactly where
 * the server's _bt_search would call it and do more than return.
 */
BTJIT_TARGET(SEARCH, search, "_bt_search", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, descents,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "Descents run the server's _bt_search, which calls the compiled page search level by level.")
/*
 * The start of a simple scan, 15 to 18: _bt_first for a scan with keys
 * and nothing else (no array, row or NULL key, not parallel; on 18 no
 * skip array either) on an index with compiled code, from the keys to the
 * first item: the insertion scan key, the descent with no stack (the rows
 * above), the leaf's compiled page search and the module's leaf read,
 * called directly.  19: the start rests on the descent, which the module
 * does not have there (the rows above end at 18).
 */
BTJIT_TARGET(FIRST, first, "_bt_first", BTJIT_LOCATE_EXPORTED, READPAGE,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, scan_starts,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "Scans start with the server's _bt_first, which calls the compiled descent and leaf read through their redirects.")
/*
 * A scan's step from one saved item to the next on its leaf page, 15 to
 * 19: btgettuple once the scan is positioned, when the page has an item
 * left in the scan's direction and no tuple is to be killed; the same for
 * every form of scan (the arrays, the parallel scan and the mark act only
 * when a page is done).  The first call and the step to another page are
 * the server's.
 */
BTJIT_TARGET(GETTUPLE, gettuple, "btgettuple", BTJIT_LOCATE_EXPORTED, BINSRCH,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, row_steps,
			 15, 19, BTJIT_RELEASES_CHECKED,
			 "Scans step from one item to the next with the server's btgettuple and _bt_next.")
/*
 * The same step, taken where the executor asks for the next row, 15 to
 * 18: index_getnext_tid, for a scan of the index the last step was taken
 * in, moves to the next item itself and does what index_getnext_tid does
 * after btgettuple (the flags cleared, the row counted in pg_stat), so
 * that a row of an index scan costs one call, not three.  Anything else,
 * other access methods among it, is the server's index_getnext_tid,
 * which calls btgettuple (the row above).  19's indexam.c is not at hand.
 */
BTJIT_TARGET(GETNEXT, getnext, "index_getnext_tid", BTJIT_LOCATE_EXPORTED, GETTUPLE,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, tid_steps,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "The executor asks for each row of an index scan through the server's index_getnext_tid, which calls btgettuple.")
/*
 * An index-only scan's row taken out of its tuple, 15 to 18:
 * index_deform_tuple_internal (which index_deform_tuple calls, and which a
 * link-time optimised executor calls directly), for a tuple without NULLs
 * of the index the last step was taken in when every column of its tuples
 * has a fixed width, at offsets worked out once per index.  Any other call
 * is the server's.  19's indextuple.c is not at hand.
 */
BTJIT_TARGET(DEFORM, deform, "index_deform_tuple_internal", BTJIT_LOCATE_EXPORTED, GETTUPLE,
			 NULL, NULL, NULL, NULL, BtjitNoEntryFn, deforms,
			 15, 18, BTJIT_RELEASES_CHECKED,
			 "Index-only scans take each row's columns out of its index tuple with the server's index_deform_tuple_internal.")
