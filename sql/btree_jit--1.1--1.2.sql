/* btree_jit--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION btree_jit UPDATE TO '1.2'" to load this file. \quit

-- 1.2: shapes are compiled by a background worker (btree_jit.compile_mode).
-- btree_jit_status() gains the worker's columns: its process id (NULL when
-- it is not running), the shapes queued or being compiled, the compiles and
-- failures it has done since the server started, the enqueues refused
-- because the queue was full, and its last compile's duration and time.
-- Indexes waiting for their shape show the state 'queued'.
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
