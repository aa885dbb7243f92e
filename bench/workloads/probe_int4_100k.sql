-- bench/workloads/probe_int4_100k.sql - equality probes into a 100,000-row
-- int4 primary key through an index nested loop (seed 003's LATERAL ...
-- LIMIT 1 shape, and a plain join with hash/merge joins and
-- materialisation disabled).  {N} is the number of probes: the first N
-- rows of p4s (pseudo-random keys over the whole key range).
--
-- @title int4 primary key, 100k rows (working set): 500k nested-loop equality probes (LATERAL LIMIT 1, plain join)
-- @kind sql
-- @uses data_int4_100k
-- @index t4s_pkey
-- @unit probe
-- @n_full 500000
-- @n_timing 500000
-- @n_callgrind 20000
-- @target -

-- @section session
SET jit = off;
SET enable_memoize = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_bitmapscan = off;
SELECT pg_prewarm('t4s'), pg_prewarm('t4s_pkey'), pg_prewarm('p4s');

-- @section warmup
SELECT v FROM t4s WHERE id = 42 LIMIT 1;

-- @query lateral LATERAL ... LIMIT 1 nested loop
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM p4s LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM t4s WHERE t4s.id = p.k LIMIT 1) x;

-- @query join plain join, index nested loop
SELECT count(*), sum(t4s.v)
  FROM (SELECT k FROM p4s LIMIT {N}) p
  JOIN t4s ON t4s.id = p.k;
