-- bench/workloads/insert_random.sql - inserts of pseudo-random keys into a
-- table with an int4 primary key and a secondary int4 index, starting from
-- the same 100,000 rows every time: timing rounds rebuild the table from
-- ins_base before each round (round_setup, untimed); instruction counts use
-- the table data_insert built (count_setup: each arm runs on its own copy
-- of the same data directory).  {N} is the number of inserted rows (one
-- INSERT ... SELECT).
--
-- @title INSERT of random keys into a table with a primary key and a secondary index
-- @kind sql
-- @uses data_insert
-- @index ins_pkey ins_v
-- @unit insert
-- @n_full 100000
-- @n_timing 100000
-- @n_callgrind 10000
-- @target 1.05
-- @n_warm 0

-- @section session
SET jit = off;
SELECT pg_prewarm('ins_base');

-- @section round_setup
DROP TABLE IF EXISTS ins;
CREATE TABLE ins AS SELECT k, v FROM ins_base;
ALTER TABLE ins ADD PRIMARY KEY (k);
CREATE INDEX ins_v ON ins (v);

-- @section count_setup
-- nothing: ins as data_insert built it

-- @section warmup
SELECT pg_prewarm('ins'), pg_prewarm('ins_pkey'), pg_prewarm('ins_v');
-- 1,000 rows from a range of i the measured INSERT never reaches: enough
-- page searches to pass btree_jit.compile_threshold on both indexes.
INSERT INTO ins
  SELECT (i::int8 * 1000003 % 2147483647)::int4, (i::int8 * 7919 % 50000)::int4
  FROM generate_series(900001, 901000) i;

-- @query insert INSERT ... SELECT of random keys
INSERT INTO ins
  SELECT (i::int8 * 1000003 % 2147483647)::int4, (i::int8 * 7919 % 50000)::int4
  FROM generate_series(100001, 100000 + {N}) i;
