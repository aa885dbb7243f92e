-- bench/workloads/probe_float8.sql - float8 primary key: equality
-- probes into a 1,000,000-row primary key through an index nested loop, in
-- random key order: LATERAL ... LIMIT 1 over keys that are all present, and
-- a plain join over keys drawn again, a quarter of them absent.  {N} is the
-- number of probes (the first N rows of the probe table).
--
-- @title float8 primary key, 1M rows: 200k nested-loop equality probes (LATERAL LIMIT 1; join, 1/4 absent)
-- @kind sql
-- @plan nested_loop
-- @uses data_float8
-- @index tf8_pkey
-- @unit probe
-- @n_full 200000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target 1.22

-- @section session
SELECT pg_prewarm('tf8'), pg_prewarm('tf8_pkey'), pg_prewarm('tf8_pl'), pg_prewarm('tf8_pj');

-- @section warmup
SELECT count(*) FROM (SELECT k FROM tf8_pl LIMIT 100) p JOIN tf8 ON tf8.id = p.k;

-- @query lateral LATERAL ... LIMIT 1 nested loop, keys all present
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM tf8_pl LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tf8 WHERE tf8.id = p.k LIMIT 1) x;

-- @query join plain join, index nested loop, a quarter of the keys absent
SELECT count(*), sum(tf8.v)
  FROM (SELECT k FROM tf8_pj LIMIT {N}) p
  JOIN tf8 ON tf8.id = p.k;
