/* btree_jit--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION btree_jit UPDATE TO '1.2'" to load this file. \quit

-- 1.2: shapes are compiled by a background worker (btree_jit.compile_mode).
-- btree_jit_status() gains the worker's columns: its process id (NULL when
-- it is not running), the shapes queued or being compiled, the compiles and
-- failures it has done since the server started, the enqueues refused
-- because the queue was full, and its last compile's duration and time.
-- Indexes waiting for their shape show the state 'queued'.
--
-- The leaf search of insertions (_bt_binsrch_insert) runs compiled code
-- too: btree_jit_index_stats(), btree_jit_index_counters() and the view
-- btree_jit_indexes gain its counts (jit_inserts, verified_inserts).
--
-- Each changed function has a C entry point of its own for 1.2, so that
-- 1.1's definitions keep working with this module until the update.
DROP FUNCTION btree_jit_status();
CREATE FUNCTION btree_jit_status(
    OUT active boolean,
    OUT reason text,
    OUT server_version text,
    OUT build_id text,
    OUT binsrch_address text,
    OUT call_sites integer,
    OUT evidence text,
    OUT jit_searches bigint,
    OUT stock_searches bigint,
    OUT verified_searches bigint,
    OUT compiles bigint,
    OUT compile_failures bigint,
    OUT worker_pid integer,
    OUT queue_length integer,
    OUT worker_compiles bigint,
    OUT worker_failures bigint,
    OUT queue_full bigint,
    OUT last_compile_ms float8,
    OUT last_compile_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'btree_jit_status_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

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
    OUT verified_inserts bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_index_stats_1_2'
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
    OUT verified_inserts bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_index_counters_1_2'
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
