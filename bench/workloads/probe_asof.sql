-- bench/workloads/probe_asof.sql - "as of" probes into a time series (the
-- query of Floris Van Nee's 2019 pgsql-hackers thread "Optimize single
-- tuple fetch from nbtree index"): an index on (k int4, ts
-- timestamptz DESC) over 2,000 keys with 1,000 timestamps each, rows
-- loaded in random order, and in a nested loop, for random (k, t),
--
--   SELECT v FROM ta WHERE k = $1 AND ts <= $2 ORDER BY k, ts DESC LIMIT 1
--
-- the key's latest row at or before t.  The leaf read dominates: the
-- server's _bt_readpage tests every remaining tuple of the key on the leaf
-- (k = $1 ends the scan at the next key) and saves each before the first
-- row is returned.  asof sends k as int4 (the column's type), asof_k8 as
-- int8 (a cross-type key int4 = int8: what an application with 64-bit
-- parameters sends); otherwise the two are the same probes.  {N} is the
-- number of probes: the first N rows of pa.
--
-- @title (k int4, ts timestamptz DESC) index, 2M rows (2,000 keys x 1,000 timestamps, random load order): 500k "as of" probes k = $1 AND ts <= $2 ORDER BY k, ts DESC LIMIT 1 (int4 and int8 k)
-- @kind sql
-- @plan nested_loop
-- @uses data_asof
-- @index ta_k_ts
-- @unit probe
-- @n_full 500000
-- @n_timing 200000
-- @n_callgrind 10000
-- @target 2.5

-- @section session
SELECT pg_prewarm('ta'), pg_prewarm('ta_k_ts'), pg_prewarm('pa');

-- @section warmup
SELECT v FROM ta WHERE k = 42 AND ts <= timestamptz '2026-01-01 08:00:00+00' ORDER BY k, ts DESC LIMIT 1;

-- @query asof k = $1 AND ts <= $2 ORDER BY k, ts DESC LIMIT 1, k int4
SELECT count(*), sum(x.v)
  FROM (SELECT k, t FROM pa LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM ta WHERE ta.k = p.k AND ta.ts <= p.t ORDER BY ta.k, ta.ts DESC LIMIT 1) x;

-- @query asof_k8 the same with k int8 (cross-type key int4 = int8)
SELECT count(*), sum(x.v)
  FROM (SELECT k8, t FROM pa LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM ta WHERE ta.k = p.k8 AND ta.ts <= p.t ORDER BY ta.k, ta.ts DESC LIMIT 1) x;
