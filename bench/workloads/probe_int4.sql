-- bench/workloads/probe_int4.sql - equality probes into a 2,000,000-row
-- int4 primary key through an index nested loop (seed 003's LATERAL ...
-- LIMIT 1 shape, and a plain join with hash/merge joins and
-- materialisation disabled).  {N} is the number of probes: the first N
-- rows of p4 (pseudo-random keys over the whole key range).
--
-- @title int4 primary key, 2M rows: 500k nested-loop equality probes (LATERAL LIMIT 1, plain join)
-- @kind sql
-- @uses data_int4
-- @index t4_pkey
-- @unit probe
-- @n_full 500000
-- @n_timing 500000
-- @n_callgrind 20000
-- @target 1.25

-- @section session
SET jit = off;
SET enable_memoize = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_bitmapscan = off;
SELECT pg_prewarm('t4'), pg_prewarm('t4_pkey'), pg_prewarm('p4');

-- @section warmup
SELECT v FROM t4 WHERE id = 42 LIMIT 1;

-- @query lateral LATERAL ... LIMIT 1 nested loop
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM p4 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM t4 WHERE t4.id = p.k LIMIT 1) x;

-- @query join plain join, index nested loop
SELECT count(*), sum(t4.v)
  FROM (SELECT k FROM p4 LIMIT {N}) p
  JOIN t4 ON t4.id = p.k;
