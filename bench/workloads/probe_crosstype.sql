-- bench/workloads/probe_crosstype.sql - probes into a 2,000,000-row
-- (int2, int8, int4) primary key (a, b, c) by int4 values: the scan keys
-- on a and b are cross-type (int2 = int4, int8 = int4), as applications
-- send them.  Each query has a same-type twin whose probe values are
-- stored in the columns' own types (px.a2 int2, px.b8 int8), so the two
-- differ only in the scan keys' operators.  Full-key probes (a, b, c) and
-- prefix probes (a, b) LIMIT 1, as LATERAL ... LIMIT 1 nested loops.  {N}
-- is the number of probes: the first N rows of px.  The aim: the
-- cross-type queries at least as far above 1.0x as their twins.
--
-- @title (int2, int8, int4) primary key, 2M rows: int4-valued (cross-type) and same-type probes, full key and (a, b) LIMIT 1
-- @kind sql
-- @plan nested_loop
-- @uses data_crosstype
-- @index tx_pkey
-- @unit probe
-- @n_full 500000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target -

-- @section session
SELECT pg_prewarm('tx'), pg_prewarm('tx_pkey'), pg_prewarm('px');

-- @section warmup
SELECT v FROM tx WHERE a = 4 AND b = 42 AND c = 420 LIMIT 1;

-- @query prefix_x prefix probes (a, b) LIMIT 1, int4 values (int2 = int4, int8 = int4)
SELECT count(*), sum(x.v)
  FROM (SELECT a4, b4 FROM px LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tx WHERE tx.a = p.a4 AND tx.b = p.b4 LIMIT 1) x;

-- @query prefix_s prefix probes (a, b) LIMIT 1, same-type values (twin of prefix_x)
SELECT count(*), sum(x.v)
  FROM (SELECT a2, b8 FROM px LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tx WHERE tx.a = p.a2 AND tx.b = p.b8 LIMIT 1) x;

-- @query full_x full-key probes (a, b, c), int4 values (int2 = int4, int8 = int4)
SELECT count(*), sum(x.v)
  FROM (SELECT a4, b4, c4 FROM px LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tx WHERE tx.a = p.a4 AND tx.b = p.b4 AND tx.c = p.c4 LIMIT 1) x;

-- @query full_s full-key probes (a, b, c), same-type values (twin of full_x)
SELECT count(*), sum(x.v)
  FROM (SELECT a2, b8, c4 FROM px LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tx WHERE tx.a = p.a2 AND tx.b = p.b8 AND tx.c = p.c4 LIMIT 1) x;
