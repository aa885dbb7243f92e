-- bench/workloads/probe_uuid.sql - uuid primary key from md5: equality
-- probes into a 1,000,000-row primary key through an index nested loop, in
-- random key order: LATERAL ... LIMIT 1 over keys that are all present, and
-- a plain join over keys drawn again, a quarter of them absent.  {N} is the
-- number of probes (the first N rows of the probe table).
--
-- @title uuid primary key from md5, 1M rows: 200k nested-loop equality probes (LATERAL LIMIT 1; join, 1/4 absent)
-- @kind sql
-- @plan nested_loop
-- @uses data_uuid
-- @index tu_pkey
-- @unit probe
-- @n_full 200000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target 1.25

-- @section session
SELECT pg_prewarm('tu'), pg_prewarm('tu_pkey'), pg_prewarm('tu_pl'), pg_prewarm('tu_pj');

-- @section warmup
SELECT count(*) FROM (SELECT k FROM tu_pl LIMIT 100) p JOIN tu ON tu.id = p.k;

-- @query lateral LATERAL ... LIMIT 1 nested loop, keys all present
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM tu_pl LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tu WHERE tu.id = p.k LIMIT 1) x;

-- @query join plain join, index nested loop, a quarter of the keys absent
SELECT count(*), sum(tu.v)
  FROM (SELECT k FROM tu_pj LIMIT {N}) p
  JOIN tu ON tu.id = p.k;
