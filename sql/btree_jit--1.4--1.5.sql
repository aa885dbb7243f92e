/* btree_jit--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION btree_jit UPDATE TO '1.5'" to load this file. \quit

-- 1.5: B-tree builds (CREATE INDEX, REINDEX: btbuild) compile the index's
-- key shape before sorting and sort with the compiled comparator.
-- btree_jit_index_stats(), btree_jit_index_counters() and the view
-- btree_jit_indexes gain their counts, after stock_leafreads: jit_builds
-- (builds of the index that started with compiled code for its key shape)
-- and verified_builds (of those, run under btree_jit.verify);
-- jit_build_compares (comparisons of the build's sort made by the compiled
-- build comparator), jit_build_presorts (on 15, 17 and 18, the build sorts
-- whose tuples the module ordered before the server's sort; their
-- comparisons are not counted as build comparisons), jit_image_compares
-- (on 15, 17 and 18, the comparisons of two tuples' key images that the
-- compiled code made for deduplication, suffix truncation and split points,
-- _bt_keep_natts_fast), jit_recent_roots, jit_recent_reads and
-- jit_recent_steps (on 15, 17 and 18, the page reads of _bt_getroot,
-- _bt_getbuf and _bt_relandgetbuf that pinned the page through the buffer
-- this backend last found it in, without the buffer mapping table),
-- jit_descents (on 15, 17 and 18, the descents of _bt_search the module ran
-- on the compiled page search and compare), jit_scan_starts (on 15, 17 and
-- 18, the starts of simple scans, _bt_first, the module made),
-- jit_row_steps (the steps of a scan from one item to the next on its leaf
-- page, btgettuple, the module took), jit_tid_steps (on 15, 17 and 18, the
-- same steps the module took where the executor asks for the row,
-- index_getnext_tid, without calling btgettuple), jit_deforms (on 15, 17
-- and 18, the index tuples of index-only scans whose columns the module
-- took out, index_deform_tuple) and the verified_ count of each (of those,
-- compared with the server's code under btree_jit.verify).
--
-- Each changed function has a C entry point of its own for 1.5, so that
-- 1.4's definitions keep working with this module until the update.

DROP FUNCTION btree_jit_index_stats();
CREATE FUNCTION btree_jit_index_stats(
    OUT indexrelid regclass,
    OUT state text,
    OUT reason text,
    OUT signature text,
    OUT jit_searches bigint,
    OUT stock_searches bigint,
    OUT declined_searches bigint,
    OUT verified_searches bigint,
    OUT compile_ms float8,
    OUT code_source text,
    OUT jit_compares bigint,
    OUT verified_compares bigint,
    OUT jit_inserts bigint,
    OUT verified_inserts bigint,
    OUT jit_checks bigint,
    OUT verified_checks bigint,
    OUT jit_leafreads bigint,
    OUT verified_leafreads bigint,
    OUT stock_checks bigint,
    OUT stock_leafreads bigint,
    OUT jit_builds bigint,
    OUT verified_builds bigint,
    OUT jit_build_compares bigint,
    OUT verified_build_compares bigint,
    OUT jit_build_presorts bigint,
    OUT verified_build_presorts bigint,
    OUT jit_image_compares bigint,
    OUT verified_image_compares bigint,
    OUT jit_recent_roots bigint,
    OUT verified_recent_roots bigint,
    OUT jit_recent_reads bigint,
    OUT verified_recent_reads bigint,
    OUT jit_recent_steps bigint,
    OUT verified_recent_steps bigint,
    OUT jit_descents bigint,
    OUT verified_descents bigint,
    OUT jit_scan_starts bigint,
    OUT verified_scan_starts bigint,
    OUT jit_row_steps bigint,
    OUT verified_row_steps bigint,
    OUT jit_tid_steps bigint,
    OUT verified_tid_steps bigint,
    OUT jit_deforms bigint,
    OUT verified_deforms bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_index_stats_1_5'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

DROP VIEW btree_jit_indexes;
DROP FUNCTION btree_jit_index_counters();
CREATE FUNCTION btree_jit_index_counters(
    OUT dbid oid,
    OUT indexrelid oid,
    OUT state text,
    OUT reason text,
    OUT signature text,
    OUT jit_searches bigint,
    OUT stock_searches bigint,
    OUT declined_searches bigint,
    OUT verified_searches bigint,
    OUT jit_compares bigint,
    OUT verified_compares bigint,
    OUT compiles bigint,
    OUT compile_failures bigint,
    OUT last_compile_ms float8,
    OUT code_source text,
    OUT last_code_at timestamptz,
    OUT jit_inserts bigint,
    OUT verified_inserts bigint,
    OUT jit_checks bigint,
    OUT verified_checks bigint,
    OUT jit_leafreads bigint,
    OUT verified_leafreads bigint,
    OUT stock_checks bigint,
    OUT stock_leafreads bigint,
    OUT jit_builds bigint,
    OUT verified_builds bigint,
    OUT jit_build_compares bigint,
    OUT verified_build_compares bigint,
    OUT jit_build_presorts bigint,
    OUT verified_build_presorts bigint,
    OUT jit_image_compares bigint,
    OUT verified_image_compares bigint,
    OUT jit_recent_roots bigint,
    OUT verified_recent_roots bigint,
    OUT jit_recent_reads bigint,
    OUT verified_recent_reads bigint,
    OUT jit_recent_steps bigint,
    OUT verified_recent_steps bigint,
    OUT jit_descents bigint,
    OUT verified_descents bigint,
    OUT jit_scan_starts bigint,
    OUT verified_scan_starts bigint,
    OUT jit_row_steps bigint,
    OUT verified_row_steps bigint,
    OUT jit_tid_steps bigint,
    OUT verified_tid_steps bigint,
    OUT jit_deforms bigint,
    OUT verified_deforms bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_index_counters_1_5'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- The indexes of the current database and the shared catalogs, by name.
CREATE VIEW btree_jit_indexes AS
  SELECT s.dbid,
         n.nspname AS schemaname,
         t.relname AS tablename,
         c.relname AS indexname,
         s.indexrelid,
         s.state,
         s.reason,
         s.signature,
         s.jit_searches,
         s.stock_searches,
         s.declined_searches,
         s.verified_searches,
         s.jit_compares,
         s.verified_compares,
         s.jit_inserts,
         s.verified_inserts,
         s.jit_checks,
         s.verified_checks,
         s.jit_leafreads,
         s.verified_leafreads,
         s.stock_checks,
         s.stock_leafreads,
         s.jit_builds,
         s.verified_builds,
         s.jit_build_compares,
         s.verified_build_compares,
         s.jit_build_presorts,
         s.verified_build_presorts,
         s.jit_image_compares,
         s.verified_image_compares,
         s.jit_recent_roots,
         s.verified_recent_roots,
         s.jit_recent_reads,
         s.verified_recent_reads,
         s.jit_recent_steps,
         s.verified_recent_steps,
         s.jit_descents,
         s.verified_descents,
         s.jit_scan_starts,
         s.verified_scan_starts,
         s.jit_row_steps,
         s.verified_row_steps,
         s.jit_tid_steps,
         s.verified_tid_steps,
         s.jit_deforms,
         s.verified_deforms,
         s.compiles,
         s.compile_failures,
         s.last_compile_ms,
         s.code_source,
         s.last_code_at
    FROM btree_jit_index_counters() s
    LEFT JOIN pg_catalog.pg_class c ON c.oid = s.indexrelid
    LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = s.indexrelid
    LEFT JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
   WHERE s.dbid = 0
      OR s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                    WHERE d.datname = pg_catalog.current_database());

GRANT SELECT ON btree_jit_indexes TO PUBLIC;
