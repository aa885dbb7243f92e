-- bench/workloads/probe_numeric.sql - numeric primary key: equality
-- probes into a 1,000,000-row primary key through an index nested loop, in
-- random key order: LATERAL ... LIMIT 1 over keys that are all present, and
-- a plain join over keys drawn again, a quarter of them absent.  {N} is the
-- number of probes (the first N rows of the probe table).
--
-- @title numeric primary key, 1M rows: 200k nested-loop equality probes (LATERAL LIMIT 1; join, 1/4 absent)
-- @kind sql
-- @plan nested_loop
-- @uses data_numeric
-- @index tnu_pkey
-- @unit probe
-- @n_full 200000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target 1.12

-- @section session
SELECT pg_prewarm('tnu'), pg_prewarm('tnu_pkey'), pg_prewarm('tnu_pl'), pg_prewarm('tnu_pj');

-- @section warmup
SELECT count(*) FROM (SELECT k FROM tnu_pl LIMIT 100) p JOIN tnu ON tnu.id = p.k;

-- @query lateral LATERAL ... LIMIT 1 nested loop, keys all present
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM tnu_pl LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tnu WHERE tnu.id = p.k LIMIT 1) x;

-- @query join plain join, index nested loop, a quarter of the keys absent
SELECT count(*), sum(tnu.v)
  FROM (SELECT k FROM tnu_pj LIMIT {N}) p
  JOIN tnu ON tnu.id = p.k;
