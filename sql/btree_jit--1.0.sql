/* btree_jit--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION btree_jit" to load this file. \quit

-- Is the redirect installed, where, and why not?  Counters are cluster-wide:
-- exited backends plus the calling one.
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
    OUT compile_failures bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'btree_jit_status'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- One row per index this backend has searched since it started.  state is
-- 'jit', 'stock' (reason says why) or 'pending' (not searched often enough
-- yet: btree_jit.compile_threshold).  compile_ms is the time this backend
-- spent compiling the index's shape, or loading it from the object cache
-- (code_source says which); indexes of one shape share that figure.  The
-- *_compares columns count calls of the redirected _bt_compare answered by
-- compiled code (high-key checks, insert positions, unique checks).  With
-- btree_jit.enabled off nothing is counted.
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
    OUT verified_compares bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'btree_jit_index_stats'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- The optimised IR ('ir') or machine code ('asm') generated for an index.
CREATE FUNCTION btree_jit_explain(index regclass, format text DEFAULT 'ir')
RETURNS text
AS 'MODULE_PATHNAME', 'btree_jit_explain'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

-- Compile the page search for an index now, ahead of its first search;
-- returns the resulting state and signature.
CREATE FUNCTION btree_jit_compile(index regclass,
    OUT state text,
    OUT signature text,
    OUT reason text,
    OUT compile_ms float8)
RETURNS record
AS 'MODULE_PATHNAME', 'btree_jit_compile'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

REVOKE ALL ON FUNCTION btree_jit_explain(regclass, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION btree_jit_compile(regclass) FROM PUBLIC;
