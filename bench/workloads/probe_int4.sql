-- bench/workloads/probe_int4.sql - equality probes into a 2,000,000-row
-- int4 primary key through an index nested loop (the LATERAL ... LIMIT 1
-- shape of Floris Van Nee's 2019 pgsql-hackers thread "Optimize single
-- tuple fetch from nbtree index", and a plain join with hash/merge joins and
-- materialisation disabled).  {N} is the number of probes: the first N
-- rows of p4 (pseudo-random keys over the whole key range).
--
-- The same file, with other values of its @param placeholders, is
-- probe_int4_100k and probe_int4_20m (bench/run --working-set; INSTANCES
-- in bench/lib/workloads.py): the table at 100,000 and 20,000,000 rows,
-- on tables of their own (t4s/p4s, t4x/p4x; data_int4.sql likewise).
--
-- @param ROWS 2000000
-- @param SFX
-- @param DATA data_int4
-- @param LABEL 2M rows
-- @param TARGET 1.45
-- @title int4 primary key, {LABEL}: 500k nested-loop equality probes (LATERAL LIMIT 1, plain join)
-- @kind sql
-- @plan nested_loop
-- @uses {DATA}
-- @index t4{SFX}_pkey
-- @unit probe
-- @n_full 500000
-- @n_timing 500000
-- @n_callgrind 20000
-- @target {TARGET}

-- @section session
SELECT pg_prewarm('t4{SFX}'), pg_prewarm('t4{SFX}_pkey'), pg_prewarm('p4{SFX}');

-- @section warmup
SELECT v FROM t4{SFX} WHERE id = 42 LIMIT 1;

-- @query lateral LATERAL ... LIMIT 1 nested loop
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM p4{SFX} LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM t4{SFX} WHERE t4{SFX}.id = p.k LIMIT 1) x;

-- @query join plain join, index nested loop
SELECT count(*), sum(t4{SFX}.v)
  FROM (SELECT k FROM p4{SFX} LIMIT {N}) p
  JOIN t4{SFX} ON t4{SFX}.id = p.k;
