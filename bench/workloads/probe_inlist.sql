-- bench/workloads/probe_inlist.sql - IN-lists and = ANY($1) arrays: the
-- way ORMs load related rows.  any10 probes t4's int4 primary key with
-- id = ANY (10 random keys) per statement; any10_k8 binds the same keys as
-- int8[] (a cross-type array key int4 = ANY (int8[])); in100 reads 100
-- rows of one a from tb's primary key (a int4, b int4) with a = $1 AND b
-- IN (100 values); dense3 counts the rows of 3 keys of data_asof's ta
-- (1,000 rows each, an index-only scan of ta_k_ts: the IN-list of a
-- parent's children, where each element matches many tuples).  Each is a nested loop over the lists (one index scan
-- per list, its array keys advanced through the index by the server's
-- rules); {N} is the number of lists.
--
-- @title = ANY of 10 keys on an int4 primary key (int4[] and int8[]), and a = $1 AND b IN (100 values) on an (a, b) primary key
-- @kind sql
-- @plan nested_loop
-- @uses data_int4 data_asof data_inlist
-- @index t4_pkey tb_pkey ta_k_ts
-- @unit list
-- @n_full 50000
-- @n_timing 5000
-- @n_callgrind 500
-- @target 1.5

-- @section session
SELECT pg_prewarm('t4'), pg_prewarm('t4_pkey'), pg_prewarm('tb'), pg_prewarm('tb_pkey'), pg_prewarm('pl10'), pg_prewarm('pl100'), pg_prewarm('ta_k_ts'), pg_prewarm('pl3');

-- @section warmup
-- (both indexes past btree_jit.compile_threshold in every run, whichever
-- query it measures)
SELECT count(*) FROM (SELECT generate_series(1, 2000) * 997 AS k) p CROSS JOIN LATERAL (SELECT v FROM t4 WHERE t4.id = p.k) x;
SELECT count(*) FROM (SELECT generate_series(0, 1999) % 1000 AS a) p CROSS JOIN LATERAL (SELECT v FROM tb WHERE tb.a = p.a AND tb.b = 7) x;
SELECT count(*) FROM (SELECT generate_series(0, 1999) AS k) p CROSS JOIN LATERAL (SELECT 1 FROM ta WHERE ta.k = p.k AND ta.ts < timestamptz '2026-01-01 00:00:30+00') x;

-- @query any10 id = ANY (10 random keys), int4[]
SELECT count(*), sum(x.v)
  FROM (SELECT ks FROM pl10 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM t4 WHERE t4.id = ANY (p.ks)) x;

-- @query any10_k8 the same keys as int8[] (cross-type int4 = ANY (int8[]))
SELECT count(*), sum(x.v)
  FROM (SELECT ks8 FROM pl10 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM t4 WHERE t4.id = ANY (p.ks8)) x;

-- @query in100 a = $1 AND b IN (100 values) on (a, b)
SELECT count(*), sum(x.v)
  FROM (SELECT a, bs FROM pl100 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tb WHERE tb.a = p.a AND tb.b = ANY (p.bs)) x;

-- @query dense3 k = ANY (3 keys of 1,000 rows each), index-only
SELECT count(*), sum(x.c)
  FROM (SELECT ks FROM pl3 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT count(*) AS c FROM ta WHERE ta.k = ANY (p.ks)) x;
