-- bench/workloads/skip_scan.sql - skip scans (PostgreSQL 18 on): an index
-- on (a int4 with 20 values, b int8) probed on b alone, WHERE b = $1, in a
-- nested loop.  From 18 the server gives a a skip array: each probe is 20
-- descents, one per value of a, each reading one leaf page.  b8 sends b as
-- int8 (the column's type), b4 as int4 (a cross-type key int8 = int4).
-- Before 18 the same plan reads the whole index for each probe: the
-- workload is for 18 and 19 (`bench/run --pg 18 skip_scan`), and not part
-- of --all.  {N} is the number of probes: the first N rows of pk.
--
-- @title (a int4 with 20 values, b int8) index, 2M rows: b = $1 probes on b alone (skip scans from 18; int8 and int4 b)
-- @kind sql
-- @plan nested_loop
-- @uses data_skip
-- @index tk_ab
-- @unit probe
-- @n_full 50000
-- @n_timing 20000
-- @n_callgrind 2000
-- @n_warm 200
-- @target 1.5

-- @section session
SET enable_seqscan = off;
SELECT pg_prewarm('tk'), pg_prewarm('tk_ab'), pg_prewarm('pk');

-- @query b8 b = $1 (int8), skip scan over a
SELECT count(*), sum(x.v)
  FROM (SELECT b8 FROM pk LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tk WHERE tk.b = p.b8) x;

-- @query b4 the same with b int4 (cross-type int8 = int4)
SELECT count(*), sum(x.v)
  FROM (SELECT b4 FROM pk LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tk WHERE tk.b = p.b4) x;
