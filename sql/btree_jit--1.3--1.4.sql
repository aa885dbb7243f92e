/* btree_jit--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION btree_jit UPDATE TO '1.4'" to load this file. \quit

-- 1.4: on PostgreSQL 15, 17 and 18 the module reads leaf pages itself
-- (_bt_readpage) for scans whose keys it compiles.  btree_jit_index_stats(),
-- btree_jit_index_counters() and the view btree_jit_indexes gain its
-- counts: jit_leafreads (leaf pages read by the module) and
-- verified_leafreads (of those, compared with the server's own read under
-- btree_jit.verify); and stock_checks and stock_leafreads, the scan-key
-- checks and leaf reads of the index that ran the server's code, whose
-- reasons btree_jit_stock_calls() and the view btree_jit_stock_calls
-- give.
--
-- Each changed function has a C entry point of its own for 1.4, so that
-- 1.3's definitions keep working with this module until the update.

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
    OUT stock_leafreads bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_index_stats_1_4'
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
    OUT stock_leafreads bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_index_counters_1_4'
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

-- The scan-key checks and leaf reads that ran the server's code rather than
-- compiled code, per index (as btree_jit_index_counters() shows them), kind
-- of work ('key check', 'leaf read') and reason ('array keys', 'skip
-- arrays', 'row comparison', 'NULLs', 'not compiled', 'declined').
CREATE FUNCTION btree_jit_stock_calls(
    OUT dbid oid,
    OUT indexrelid oid,
    OUT work text,
    OUT reason text,
    OUT calls bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_stock_calls'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW btree_jit_stock_calls AS
  SELECT s.dbid,
         n.nspname AS schemaname,
         t.relname AS tablename,
         c.relname AS indexname,
         s.indexrelid,
         s.work,
         s.reason,
         s.calls
    FROM btree_jit_stock_calls() s
    LEFT JOIN pg_catalog.pg_class c ON c.oid = s.indexrelid
    LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = s.indexrelid
    LEFT JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
   WHERE s.dbid = 0
      OR s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                    WHERE d.datname = pg_catalog.current_database());

GRANT SELECT ON btree_jit_stock_calls TO PUBLIC;
