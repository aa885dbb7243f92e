-- bench/workloads/probe_composite_shapes.sql - full-key probes into three
-- more three-column int4 primary keys of 1,000,000 rows with other
-- cardinalities and value ranges (data_composite_shapes.sql: a leading
-- column that nearly always decides, uniform random columns, two leading
-- columns that nearly never do), in random probe order, as LATERAL ...
-- LIMIT 1 nested loops like probe_composite.  {N} is the number of probes:
-- the first N rows of pcs1, pcs2, pcs3.
--
-- @title three other (a, b, c) int4 primary keys, 1M rows each: 200k full-key probes
-- @kind sql
-- @plan nested_loop
-- @uses data_composite_shapes
-- @index tcs1_pkey tcs2_pkey tcs3_pkey
-- @unit probe
-- @n_full 200000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target 1.40

-- @section session
SELECT pg_prewarm('tcs1'), pg_prewarm('tcs1_pkey'), pg_prewarm('pcs1');
SELECT pg_prewarm('tcs2'), pg_prewarm('tcs2_pkey'), pg_prewarm('pcs2');
SELECT pg_prewarm('tcs3'), pg_prewarm('tcs3_pkey'), pg_prewarm('pcs3');

-- @section warmup
-- every index past compile_threshold before any query is counted (each
-- query's own warm-up reaches only its own index)
SELECT count(*) FROM (SELECT a, b, c FROM pcs1 LIMIT 200) p
  CROSS JOIN LATERAL (SELECT v FROM tcs1 WHERE tcs1.a = p.a AND tcs1.b = p.b AND tcs1.c = p.c LIMIT 1) x;
SELECT count(*) FROM (SELECT a, b, c FROM pcs2 LIMIT 200) p
  CROSS JOIN LATERAL (SELECT v FROM tcs2 WHERE tcs2.a = p.a AND tcs2.b = p.b AND tcs2.c = p.c LIMIT 1) x;
SELECT count(*) FROM (SELECT a, b, c FROM pcs3 LIMIT 200) p
  CROSS JOIN LATERAL (SELECT v FROM tcs3 WHERE tcs3.a = p.a AND tcs3.b = p.b AND tcs3.c = p.c LIMIT 1) x;

-- @query leading (a, b, c) probes, a 100,000 values: the leading column decides
SELECT count(*), sum(x.v)
  FROM (SELECT a, b, c FROM pcs1 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tcs1 WHERE tcs1.a = p.a AND tcs1.b = p.b AND tcs1.c = p.c LIMIT 1) x;

-- @query uniform (a, b, c) probes, a and b uniform random, c unique
SELECT count(*), sum(x.v)
  FROM (SELECT a, b, c FROM pcs2 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tcs2 WHERE tcs2.a = p.a AND tcs2.b = p.b AND tcs2.c = p.c LIMIT 1) x;

-- @query trailing (a, b, c) probes, a 2 values, b 3: the last column decides
SELECT count(*), sum(x.v)
  FROM (SELECT a, b, c FROM pcs3 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tcs3 WHERE tcs3.a = p.a AND tcs3.b = p.b AND tcs3.c = p.c LIMIT 1) x;
