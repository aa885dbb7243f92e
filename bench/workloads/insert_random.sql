-- bench/workloads/insert_random.sql - inserts of pseudo-random keys into a
-- table with an int4 primary key and a secondary int4 index, starting from
-- the same 100,000 rows every time (round_setup rebuilds the table, untimed
-- and, in instruction counts, part of the subtracted baseline).  {N} is the
-- number of inserted rows (one INSERT ... SELECT).
--
-- @title INSERT of random keys into a table with a primary key and a secondary index
-- @kind sql
-- @uses data_insert
-- @index ins_pkey ins_v
-- @unit insert
-- @n_full 100000
-- @n_callgrind 20000
-- @target 1.05

-- @section session
SET jit = off;
SELECT pg_prewarm('ins_base');

-- @section round_setup
DROP TABLE IF EXISTS ins;
CREATE TABLE ins AS SELECT k, v FROM ins_base;
ALTER TABLE ins ADD PRIMARY KEY (k);
CREATE INDEX ins_v ON ins (v);

-- @section warmup
INSERT INTO ins VALUES (0, 0);

-- @query insert INSERT ... SELECT of random keys
INSERT INTO ins
  SELECT (i::int8 * 1000003 % 2147483647)::int4, (i * 7919) % 50000
  FROM generate_series(100001, 100000 + {N}) i;

-- @section teardown
DROP TABLE ins;
