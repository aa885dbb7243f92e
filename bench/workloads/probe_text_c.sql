-- bench/workloads/probe_text_c.sql - text COLLATE "C" primary key, md5 strings: equality
-- probes into a 1,000,000-row primary key through an index nested loop, in
-- random key order: LATERAL ... LIMIT 1 over keys that are all present, and
-- a plain join over keys drawn again, a quarter of them absent.  {N} is the
-- number of probes (the first N rows of the probe table).
--
-- @title text COLLATE "C" primary key, md5 strings, 1M rows: 200k nested-loop equality probes (LATERAL LIMIT 1; join, 1/4 absent)
-- @kind sql
-- @plan nested_loop
-- @uses data_text_c
-- @index ttc_pkey
-- @unit probe
-- @n_full 200000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target 1.28

-- @section session
SELECT pg_prewarm('ttc'), pg_prewarm('ttc_pkey'), pg_prewarm('ttc_pl'), pg_prewarm('ttc_pj');

-- @section warmup
SELECT count(*) FROM (SELECT k FROM ttc_pl LIMIT 100) p JOIN ttc ON ttc.id = p.k;

-- @query lateral LATERAL ... LIMIT 1 nested loop, keys all present
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM ttc_pl LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM ttc WHERE ttc.id = p.k LIMIT 1) x;

-- @query join plain join, index nested loop, a quarter of the keys absent
SELECT count(*), sum(ttc.v)
  FROM (SELECT k FROM ttc_pj LIMIT {N}) p
  JOIN ttc ON ttc.id = p.k;
