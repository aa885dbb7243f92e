-- bench/workloads/probe_composite.sql - probes into a 2,000,000-row
-- three-column int4 primary key (a, b, c) whose leading columns have low
-- cardinality (10 and 100 values): full-key probes (a, b, c) and prefix
-- probes (a, b), both as LATERAL ... LIMIT 1 nested loops.  {N} is the
-- number of probes: the first N rows of pc.
--
-- @title (a, b, c) int4 primary key, 2M rows: 500k full-key and (a, b) prefix probes
-- @kind sql
-- @plan nested_loop
-- @uses data_composite
-- @index tc_pkey
-- @unit probe
-- @n_full 500000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target 1.35

-- @section session
SELECT pg_prewarm('tc'), pg_prewarm('tc_pkey'), pg_prewarm('pc');

-- @section warmup
SELECT v FROM tc WHERE a = 4 AND b = 42 AND c = 420 LIMIT 1;

-- @query full full-key probes (a, b, c)
SELECT count(*), sum(x.v)
  FROM (SELECT a, b, c FROM pc LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tc WHERE tc.a = p.a AND tc.b = p.b AND tc.c = p.c LIMIT 1) x;

-- @query prefix prefix probes (a, b) LIMIT 1
SELECT count(*), sum(x.v)
  FROM (SELECT a, b FROM pc LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tc WHERE tc.a = p.a AND tc.b = p.b LIMIT 1) x;
