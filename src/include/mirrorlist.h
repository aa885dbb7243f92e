/*-------------------------------------------------------------------------
 *
 * mirrorlist.h
 *	  The server functions whose behaviour the module reproduces, with a
 *	  fingerprint of their source per major, and the point releases whose
 *	  source was checked to have the same fingerprints.
 *
 * The module carries its own versions of server code: the leaf read is a
 * reimplementation of _bt_readpage (on 17 and 18 with
 * _bt_tuple_before_array_skeys's answer for a tuple before an IN list's
 * current elements, by _bt_compare_array_skey's comparison), the compiled
 * check reproduces
 * _bt_checkkeys, the compiled insertion search _bt_binsrch_insert, the
 * build comparator comparetup_index_btree (and reads the private sort
 * state tuplesort_begin_index_btree and tuplesort_begin_batch build:
 * include/sortmirror.h), and the build's presort runs before
 * tuplesort_performsort's sort of the tuples in memory; the descent's page
 * reads replace _bt_getroot's cached-root read, _bt_getbuf and
 * _bt_relandgetbuf and count a buffer hit as
 * the buffer manager does (runtime/recentbuf.c), testing each page as
 * _bt_checkpage does, the descent itself
 * reproduces _bt_search and _bt_moveright's test of whether to act, and
 * the start of a simple scan _bt_first (with its helpers
 * _bt_initialize_more_data and _bt_drop_lock_and_maybe_pin, _bt_next
 * and _bt_steppage, on whose equivalence after an empty first page it
 * rests, 18's _bt_readfirstpage and btrescan's choice of dropPin, the key
 * preprocessing of the patterns it does itself and, on 18, when skip
 * arrays are added, _bt_metaversion's cached
 * answer, and the insertion key entry of index_getprocinfo,
 * ScanKeyEntryInitializeWithInfo and fmgr_info_copy), the step from item
 * to item btgettuple with _bt_next (and 18's _bt_returnitem), what
 * index_getnext_tid does around it, and index_deform_tuple's (and its
 * internal function's) offsets and
 * fetches for tuples without NULLs.  19's
 * sort source is not served here; there the layout's read-back at every
 * sort (targets/buildsort.c) is the only check.  A point
 * release that fixes a bug in one of them would be bypassed silently, so a
 * target whose row in targetlist.h says BTJIT_RELEASES_CHECKED is
 * redirected only on the releases listed here (start-up compares the
 * running server's server_version_num, src/runtime/redirects.c), unless
 * btree_jit.unchecked_release says otherwise.
 *
 * BTJIT_MIRROR(target, major, file, function, fingerprint): the source of
 * function (in file, relative to the top of PostgreSQL's source tree) as
 * the module's copy of it in that major was written against.  The
 * fingerprint is test/lib/fingerprint.py's: the first 16 hex digits of the
 * SHA-256 of the definition with comments removed and white space
 * collapsed.  test/suite-fingerprints.sh fetches the newest source Debian
 * serves of each supported major and fails, naming the function, when one
 * no longer matches: then the module's copy is reviewed against the change,
 * the row updated, and the release added below.
 *
 * BTJIT_CHECKED(major, version_num, what): a release whose source had
 * every fingerprint of its major, and where that source came from.
 *
 * No include guard: the includer defines what it needs (both macros, or
 * only one of them as empty), as with targetlist.h.
 *
 *-------------------------------------------------------------------------
 */

#ifndef BTJIT_MIRROR
#define BTJIT_MIRROR(target, major, file, function, fingerprint)
#define BTJIT_MIRROR_UNDEF_AFTER
#endif
#ifndef BTJIT_CHECKED
#define BTJIT_CHECKED(major, version_num, what)
#define BTJIT_CHECKED_UNDEF_AFTER
#endif

/* PostgreSQL 15 */
BTJIT_MIRROR(BINSRCH, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_binsrch", "a524e9842ddb7378")
BTJIT_MIRROR(COMPARE, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_compare", "4f72c7b8f7d1eaa0")
BTJIT_MIRROR(INSERT, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_binsrch_insert", "9c366da26d6481f4")
BTJIT_MIRROR(CHECKKEYS, 15, "src/backend/access/nbtree/nbtutils.c", "_bt_checkkeys", "6c45f0618a7453ff")
BTJIT_MIRROR(READPAGE, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_readpage", "02ef40ebb8b3a1d6")
BTJIT_MIRROR(READPAGE, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_saveitem", "cbf003a1b20c4c7b")
BTJIT_MIRROR(READPAGE, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_setuppostingitems", "cee75dba55e7f73b")
BTJIT_MIRROR(READPAGE, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_savepostingitem", "79ed5772c1e41869")
BTJIT_MIRROR(BUILDSORT, 15, "src/backend/utils/sort/tuplesort.c", "comparetup_index_btree", "caf14f6a04166ddb")
BTJIT_MIRROR(BUILDSORT, 15, "src/backend/utils/sort/tuplesort.c", "tuplesort_begin_index_btree", "1f970329eada6c79")
BTJIT_MIRROR(PRESORT, 15, "src/backend/utils/sort/tuplesort.c", "tuplesort_performsort", "c5807a51c9ef046c")
BTJIT_MIRROR(PRESORT, 15, "src/backend/utils/sort/tuplesort.c", "tuplesort_begin_batch", "62c02c75731cd880")
BTJIT_MIRROR(KEEPNATTS, 15, "src/backend/access/nbtree/nbtutils.c", "_bt_keep_natts_fast", "88cbb13c49a4f050")
BTJIT_MIRROR(KEEPNATTS, 15, "src/backend/utils/adt/datum.c", "datum_image_eq", "666d9e20451c6ad5")
BTJIT_MIRROR(GETROOT, 15, "src/backend/access/nbtree/nbtpage.c", "_bt_getroot", "90b807dbf77b9248")
BTJIT_MIRROR(GETBUF, 15, "src/backend/access/nbtree/nbtpage.c", "_bt_getbuf", "5f9fbe4832fc6d9a")
BTJIT_MIRROR(RELANDGETBUF, 15, "src/backend/access/nbtree/nbtpage.c", "_bt_relandgetbuf", "ff0c687b0e3e5d4e")
BTJIT_MIRROR(RELANDGETBUF, 15, "src/backend/storage/buffer/bufmgr.c", "ReleaseAndReadBuffer", "ae00b7ac63fd93d2")
BTJIT_MIRROR(GETBUF, 15, "src/backend/storage/buffer/bufmgr.c", "ReadRecentBuffer", "c2d2d4b49706b11f")
BTJIT_MIRROR(GETBUF, 15, "src/backend/storage/buffer/bufmgr.c", "PinBuffer", "c8c48f2bca8cb5c1")
BTJIT_MIRROR(GETBUF, 15, "src/backend/storage/buffer/bufmgr.c", "PinBuffer_Locked", "6988f59cde8395cf")
BTJIT_MIRROR(GETBUF, 15, "src/backend/storage/buffer/bufmgr.c", "ReadBufferExtended", "01db21ce3bbe19ef")
BTJIT_MIRROR(GETBUF, 15, "src/backend/storage/buffer/bufmgr.c", "ReadBuffer_common", "2864a464761ddbb8")
BTJIT_MIRROR(SEARCH, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_search", "7aadc70d1f7cf772")
BTJIT_MIRROR(SEARCH, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_moveright", "bab21756d33db6e6")
BTJIT_MIRROR(GETBUF, 15, "src/backend/access/nbtree/nbtpage.c", "_bt_checkpage", "7e7b79f802c0f1c9")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_first", "1aa997a0ab9cb832")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_initialize_more_data", "018c292b6e4b8865")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_drop_lock_and_maybe_pin", "d2b45acd6ad1ec90")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_next", "fb7df404bd09897d")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_steppage", "94f5f9d6e1c9d02d")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtutils.c", "_bt_preprocess_keys", "6f185a287a81996a")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtutils.c", "_bt_fix_scankey_strategy", "5a7313fd016de10b")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtutils.c", "_bt_mark_scankey_required", "873e667d9b3a908b")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtutils.c", "_bt_preprocess_array_keys", "7d22fea2e907496c")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtutils.c", "_bt_start_array_keys", "cd3e758feb8eb411")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtutils.c", "_bt_advance_array_keys", "846bdf3d8b49d0b6")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/nbtree/nbtpage.c", "_bt_metaversion", "613447089f349951")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/index/indexam.c", "index_getprocinfo", "88825de99ecb0e47")
BTJIT_MIRROR(FIRST, 15, "src/backend/access/common/scankey.c", "ScanKeyEntryInitializeWithInfo", "60e029d769461304")
BTJIT_MIRROR(FIRST, 15, "src/backend/utils/fmgr/fmgr.c", "fmgr_info_copy", "8b2705db720aa557")
BTJIT_MIRROR(GETTUPLE, 15, "src/backend/access/nbtree/nbtree.c", "btgettuple", "cfb98b53fa1bab93")
BTJIT_MIRROR(GETTUPLE, 15, "src/backend/access/nbtree/nbtsearch.c", "_bt_next", "fb7df404bd09897d")
BTJIT_MIRROR(GETNEXT, 15, "src/backend/access/index/indexam.c", "index_getnext_tid", "3956c696d9419292")
BTJIT_MIRROR(DEFORM, 15, "src/backend/access/common/indextuple.c", "index_deform_tuple", "7e1a3395af73482b")
BTJIT_MIRROR(DEFORM, 15, "src/backend/access/common/indextuple.c", "index_deform_tuple_internal", "e64bad5f396975b4")
BTJIT_CHECKED(15, 150018, "Debian 15.18-0+deb12u1 (bookworm)")
BTJIT_CHECKED(15, 150019, "upstream 15.19 (postgresql-15_15.19.orig.tar.bz2 of bookworm-security; its .dsc is not served)")

/* PostgreSQL 17 */
BTJIT_MIRROR(BINSRCH, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_binsrch", "4e44283aa5d3d64b")
BTJIT_MIRROR(COMPARE, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_compare", "db60a73f982eefc8")
BTJIT_MIRROR(INSERT, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_binsrch_insert", "9c366da26d6481f4")
BTJIT_MIRROR(CHECKKEYS, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_checkkeys", "3bec408a29e741ad")
BTJIT_MIRROR(CHECKKEYS, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_check_compare", "cd39f7c59c7f301f")
BTJIT_MIRROR(READPAGE, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_tuple_before_array_skeys", "5317351ba03a0d84")
BTJIT_MIRROR(READPAGE, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_compare_array_skey", "cddd7f600986578a")
BTJIT_MIRROR(READPAGE, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_readpage", "fe1f7d26008dfd9a")
BTJIT_MIRROR(READPAGE, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_saveitem", "cbf003a1b20c4c7b")
BTJIT_MIRROR(READPAGE, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_setuppostingitems", "cee75dba55e7f73b")
BTJIT_MIRROR(READPAGE, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_savepostingitem", "79ed5772c1e41869")
BTJIT_MIRROR(BUILDSORT, 17, "src/backend/utils/sort/tuplesortvariants.c", "comparetup_index_btree", "32f18c0b1c7ddeec")
BTJIT_MIRROR(BUILDSORT, 17, "src/backend/utils/sort/tuplesortvariants.c", "comparetup_index_btree_tiebreak", "43d237085a3abd72")
BTJIT_MIRROR(BUILDSORT, 17, "src/backend/utils/sort/tuplesortvariants.c", "tuplesort_begin_index_btree", "8c0fc84beda7702e")
BTJIT_MIRROR(PRESORT, 17, "src/backend/utils/sort/tuplesort.c", "tuplesort_performsort", "dc6ab13616775bd9")
BTJIT_MIRROR(PRESORT, 17, "src/backend/utils/sort/tuplesort.c", "tuplesort_begin_batch", "d99e7a904dbe63c3")
BTJIT_MIRROR(KEEPNATTS, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_keep_natts_fast", "88cbb13c49a4f050")
BTJIT_MIRROR(KEEPNATTS, 17, "src/backend/utils/adt/datum.c", "datum_image_eq", "666d9e20451c6ad5")
BTJIT_MIRROR(GETROOT, 17, "src/backend/access/nbtree/nbtpage.c", "_bt_getroot", "4ae28a178877470c")
BTJIT_MIRROR(GETBUF, 17, "src/backend/access/nbtree/nbtpage.c", "_bt_getbuf", "4113dff4013cf2f3")
BTJIT_MIRROR(RELANDGETBUF, 17, "src/backend/access/nbtree/nbtpage.c", "_bt_relandgetbuf", "0ebb7c350708f307")
BTJIT_MIRROR(RELANDGETBUF, 17, "src/backend/storage/buffer/bufmgr.c", "ReleaseAndReadBuffer", "bad062b86ea61548")
BTJIT_MIRROR(GETBUF, 17, "src/backend/storage/buffer/bufmgr.c", "ReadRecentBuffer", "68eba589e76010a6")
BTJIT_MIRROR(GETBUF, 17, "src/backend/storage/buffer/bufmgr.c", "PinBuffer", "7498474c0f49eb20")
BTJIT_MIRROR(GETBUF, 17, "src/backend/storage/buffer/bufmgr.c", "PinBuffer_Locked", "6988f59cde8395cf")
BTJIT_MIRROR(GETBUF, 17, "src/backend/storage/buffer/bufmgr.c", "PinBufferForBlock", "477af43ec2d49fa6")
BTJIT_MIRROR(SEARCH, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_search", "6dce63f3601fe246")
BTJIT_MIRROR(SEARCH, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_moveright", "d02db4129caf6945")
BTJIT_MIRROR(GETBUF, 17, "src/backend/access/nbtree/nbtpage.c", "_bt_checkpage", "7e7b79f802c0f1c9")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_first", "c677bc261d412f23")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_initialize_more_data", "85b3b31b94fc3bd5")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_drop_lock_and_maybe_pin", "d2b45acd6ad1ec90")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_next", "fb7df404bd09897d")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_steppage", "07766c96e13f813b")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_preprocess_keys", "6dca0ccb3771aa62")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_preprocess_array_keys", "ea77771ba1e99946")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_fix_scankey_strategy", "9764e7da6a3c3ff6")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtutils.c", "_bt_mark_scankey_required", "873e667d9b3a908b")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/nbtree/nbtpage.c", "_bt_metaversion", "613447089f349951")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/index/indexam.c", "index_getprocinfo", "88825de99ecb0e47")
BTJIT_MIRROR(FIRST, 17, "src/backend/access/common/scankey.c", "ScanKeyEntryInitializeWithInfo", "60e029d769461304")
BTJIT_MIRROR(FIRST, 17, "src/backend/utils/fmgr/fmgr.c", "fmgr_info_copy", "8b2705db720aa557")
BTJIT_MIRROR(GETTUPLE, 17, "src/backend/access/nbtree/nbtree.c", "btgettuple", "3c7dda2489c5669d")
BTJIT_MIRROR(GETTUPLE, 17, "src/backend/access/nbtree/nbtsearch.c", "_bt_next", "fb7df404bd09897d")
BTJIT_MIRROR(GETNEXT, 17, "src/backend/access/index/indexam.c", "index_getnext_tid", "3956c696d9419292")
BTJIT_MIRROR(DEFORM, 17, "src/backend/access/common/indextuple.c", "index_deform_tuple", "7e1a3395af73482b")
BTJIT_MIRROR(DEFORM, 17, "src/backend/access/common/indextuple.c", "index_deform_tuple_internal", "e64bad5f396975b4")
BTJIT_CHECKED(17, 170011, "Debian 17.11-0+deb13u1 (trixie)")

/* PostgreSQL 18 */
BTJIT_MIRROR(BINSRCH, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_binsrch", "4e44283aa5d3d64b")
BTJIT_MIRROR(COMPARE, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_compare", "db60a73f982eefc8")
BTJIT_MIRROR(INSERT, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_binsrch_insert", "9c366da26d6481f4")
BTJIT_MIRROR(CHECKKEYS, 18, "src/backend/access/nbtree/nbtutils.c", "_bt_checkkeys", "d64afe1f8122f37c")
BTJIT_MIRROR(CHECKKEYS, 18, "src/backend/access/nbtree/nbtutils.c", "_bt_check_compare", "6efdfe461bcb6102")
BTJIT_MIRROR(READPAGE, 18, "src/backend/access/nbtree/nbtutils.c", "_bt_tuple_before_array_skeys", "c6e5306123e908d8")
BTJIT_MIRROR(READPAGE, 18, "src/backend/access/nbtree/nbtutils.c", "_bt_compare_array_skey", "226d7bc817d25200")
BTJIT_MIRROR(READPAGE, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_readpage", "c048beb0859f95a4")
BTJIT_MIRROR(READPAGE, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_saveitem", "cbf003a1b20c4c7b")
BTJIT_MIRROR(READPAGE, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_setuppostingitems", "cee75dba55e7f73b")
BTJIT_MIRROR(READPAGE, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_savepostingitem", "79ed5772c1e41869")
BTJIT_MIRROR(BUILDSORT, 18, "src/backend/utils/sort/tuplesortvariants.c", "comparetup_index_btree", "32f18c0b1c7ddeec")
BTJIT_MIRROR(BUILDSORT, 18, "src/backend/utils/sort/tuplesortvariants.c", "comparetup_index_btree_tiebreak", "43d237085a3abd72")
BTJIT_MIRROR(BUILDSORT, 18, "src/backend/utils/sort/tuplesortvariants.c", "tuplesort_begin_index_btree", "52522e757ac3b147")
BTJIT_MIRROR(PRESORT, 18, "src/backend/utils/sort/tuplesort.c", "tuplesort_performsort", "19f64878f2ea7a14")
BTJIT_MIRROR(PRESORT, 18, "src/backend/utils/sort/tuplesort.c", "tuplesort_begin_batch", "d99e7a904dbe63c3")
BTJIT_MIRROR(KEEPNATTS, 18, "src/backend/access/nbtree/nbtutils.c", "_bt_keep_natts_fast", "a8bfb8a27baac31a")
BTJIT_MIRROR(KEEPNATTS, 18, "src/backend/utils/adt/datum.c", "datum_image_eq", "666d9e20451c6ad5")
BTJIT_MIRROR(GETROOT, 18, "src/backend/access/nbtree/nbtpage.c", "_bt_getroot", "d3cce4ca8e985796")
BTJIT_MIRROR(GETBUF, 18, "src/backend/access/nbtree/nbtpage.c", "_bt_getbuf", "4113dff4013cf2f3")
BTJIT_MIRROR(RELANDGETBUF, 18, "src/backend/access/nbtree/nbtpage.c", "_bt_relandgetbuf", "0ebb7c350708f307")
BTJIT_MIRROR(RELANDGETBUF, 18, "src/backend/storage/buffer/bufmgr.c", "ReleaseAndReadBuffer", "bad062b86ea61548")
BTJIT_MIRROR(GETBUF, 18, "src/backend/storage/buffer/bufmgr.c", "ReadRecentBuffer", "68eba589e76010a6")
BTJIT_MIRROR(GETBUF, 18, "src/backend/storage/buffer/bufmgr.c", "PinBuffer", "7498474c0f49eb20")
BTJIT_MIRROR(GETBUF, 18, "src/backend/storage/buffer/bufmgr.c", "PinBuffer_Locked", "6988f59cde8395cf")
BTJIT_MIRROR(GETBUF, 18, "src/backend/storage/buffer/bufmgr.c", "PinBufferForBlock", "de6534fbb47f04d4")
BTJIT_MIRROR(SEARCH, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_search", "6dce63f3601fe246")
BTJIT_MIRROR(SEARCH, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_moveright", "d02db4129caf6945")
BTJIT_MIRROR(GETBUF, 18, "src/backend/access/nbtree/nbtpage.c", "_bt_checkpage", "7e7b79f802c0f1c9")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_first", "878269df2f355f12")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_readfirstpage", "ac8c58f1e463366f")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_drop_lock_and_maybe_pin", "6be6d97d647dd827")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_next", "9eed3b23c2a5227d")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_steppage", "67f27dd97b68b996")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_returnitem", "f4615a2f224efe04")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtree.c", "btrescan", "38610dbaf0259af1")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtpreprocesskeys.c", "_bt_preprocess_keys", "0ac65cee0f53ed4d")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtpreprocesskeys.c", "_bt_fix_scankey_strategy", "fcdd6490cdc997be")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtpreprocesskeys.c", "_bt_mark_scankey_required", "931b781a510b5b5f")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtpreprocesskeys.c", "_bt_num_array_keys", "8ca2cc3f599b2083")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtpreprocesskeys.c", "_bt_preprocess_array_keys", "4e9d80e40f4c8a27")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/nbtree/nbtpage.c", "_bt_metaversion", "613447089f349951")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/index/indexam.c", "index_getprocinfo", "88825de99ecb0e47")
BTJIT_MIRROR(FIRST, 18, "src/backend/access/common/scankey.c", "ScanKeyEntryInitializeWithInfo", "60e029d769461304")
BTJIT_MIRROR(FIRST, 18, "src/backend/utils/fmgr/fmgr.c", "fmgr_info_copy", "8b2705db720aa557")
BTJIT_MIRROR(GETTUPLE, 18, "src/backend/access/nbtree/nbtree.c", "btgettuple", "2401c31408f15c95")
BTJIT_MIRROR(GETTUPLE, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_next", "9eed3b23c2a5227d")
BTJIT_MIRROR(GETTUPLE, 18, "src/backend/access/nbtree/nbtsearch.c", "_bt_returnitem", "f4615a2f224efe04")
BTJIT_MIRROR(GETNEXT, 18, "src/backend/access/index/indexam.c", "index_getnext_tid", "3956c696d9419292")
BTJIT_MIRROR(DEFORM, 18, "src/backend/access/common/indextuple.c", "index_deform_tuple", "7e1a3395af73482b")
BTJIT_MIRROR(DEFORM, 18, "src/backend/access/common/indextuple.c", "index_deform_tuple_internal", "56ba5dac7b554a89")
BTJIT_CHECKED(18, 180006, "Debian 18.6-3 (sid)")

/*
 * PostgreSQL 19: 19~rc1 and 19.0 both report 190000.  Its checked source
 * is the REL_19 branch point's nbtree (../shared/pg19), as Debian serves no
 * source of 19~rc1.  Its _bt_checkkeys and _bt_check_compare are static
 * inside the leaf read (nbtreadpage.c): their rows are the leaf read's.
 */
BTJIT_MIRROR(BINSRCH, 19, "src/backend/access/nbtree/nbtsearch.c", "_bt_binsrch", "4e44283aa5d3d64b")
BTJIT_MIRROR(COMPARE, 19, "src/backend/access/nbtree/nbtsearch.c", "_bt_compare", "db60a73f982eefc8")
BTJIT_MIRROR(INSERT, 19, "src/backend/access/nbtree/nbtsearch.c", "_bt_binsrch_insert", "9c366da26d6481f4")
BTJIT_MIRROR(READPAGE, 19, "src/backend/access/nbtree/nbtreadpage.c", "_bt_readpage", "e2cdead442afd3d6")
BTJIT_MIRROR(READPAGE, 19, "src/backend/access/nbtree/nbtreadpage.c", "_bt_checkkeys", "12f1c20e6d06673b")
BTJIT_MIRROR(READPAGE, 19, "src/backend/access/nbtree/nbtreadpage.c", "_bt_check_compare", "6efdfe461bcb6102")
BTJIT_MIRROR(READPAGE, 19, "src/backend/access/nbtree/nbtreadpage.c", "_bt_saveitem", "cbf003a1b20c4c7b")
BTJIT_MIRROR(READPAGE, 19, "src/backend/access/nbtree/nbtreadpage.c", "_bt_setuppostingitems", "d9891292f95f56e8")
BTJIT_MIRROR(READPAGE, 19, "src/backend/access/nbtree/nbtreadpage.c", "_bt_savepostingitem", "79ed5772c1e41869")
BTJIT_MIRROR(GETTUPLE, 19, "src/backend/access/nbtree/nbtree.c", "btgettuple", "bb86708181191b9c")
BTJIT_MIRROR(GETTUPLE, 19, "src/backend/access/nbtree/nbtsearch.c", "_bt_next", "9eed3b23c2a5227d")
BTJIT_MIRROR(GETTUPLE, 19, "src/backend/access/nbtree/nbtsearch.c", "_bt_returnitem", "f4615a2f224efe04")
BTJIT_CHECKED(19, 190000, "the REL_19 branch point's nbtree (no source of 19~rc1 is served)")

#ifdef BTJIT_MIRROR_UNDEF_AFTER
#undef BTJIT_MIRROR
#undef BTJIT_MIRROR_UNDEF_AFTER
#endif
#ifdef BTJIT_CHECKED_UNDEF_AFTER
#undef BTJIT_CHECKED
#undef BTJIT_CHECKED_UNDEF_AFTER
#endif
