/* btree_jit--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION btree_jit UPDATE TO '1.1'" to load this file. \quit

-- 1.1: cluster-wide per-index statistics in shared memory.  Every backend
-- adds its per-index counts at each transaction end and at exit; the
-- counters of btree_jit_status() come from the same place.

-- Every index any backend has searched, in every database; dbid is 0 for a
-- shared catalog's index.  state, reason and signature are as the last
-- backend to settle the index saw them ('pending' until one has).
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
    OUT last_code_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_index_counters'
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

-- The shared table: its bound (btree_jit.max_indexes), entries in use,
-- entries evicted to make room, and the last btree_jit_reset().
CREATE FUNCTION btree_jit_indexes_info(
    OUT max_indexes integer,
    OUT entries bigint,
    OUT evictions bigint,
    OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'btree_jit_indexes_info'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- Forget every index's statistics and zero the cluster totals.
CREATE FUNCTION btree_jit_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'btree_jit_reset'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

REVOKE ALL ON FUNCTION btree_jit_reset() FROM PUBLIC;
GRANT SELECT ON btree_jit_indexes TO PUBLIC;
