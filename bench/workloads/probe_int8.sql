-- bench/workloads/probe_int8.sql - equality probes into a 2,000,000-row
-- int8 primary key through an index nested loop (the LATERAL ... LIMIT 1
-- shape of Floris Van Nee's 2019 pgsql-hackers thread "Optimize single
-- tuple fetch from nbtree index", and a plain join with hash/merge joins and
-- materialisation disabled).  {N} is the number of probes: the first N
-- rows of p8 (pseudo-random keys over the whole key range).
--
-- @title int8 primary key, 2M rows: 500k nested-loop equality probes (LATERAL LIMIT 1, plain join)
-- @kind sql
-- @plan nested_loop
-- @uses data_int8
-- @index t8_pkey
-- @unit probe
-- @n_full 500000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target -

-- @section session
SELECT pg_prewarm('t8'), pg_prewarm('t8_pkey'), pg_prewarm('p8');

-- @section warmup
SELECT v FROM t8 WHERE id = 42 * 4294967311::int8 LIMIT 1;

-- @query lateral LATERAL ... LIMIT 1 nested loop
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM p8 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM t8 WHERE t8.id = p.k LIMIT 1) x;

-- @query join plain join, index nested loop
SELECT count(*), sum(t8.v)
  FROM (SELECT k FROM p8 LIMIT {N}) p
  JOIN t8 ON t8.id = p.k;
