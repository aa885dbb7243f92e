-- bench/workloads/range_scan.sql - many short range scans (BETWEEN k AND
-- k + 9: ten rows each) over t4's int4 primary key, forward (ORDER BY id)
-- and backward (ORDER BY id DESC: an Index Scan Backward).  {N} is the
-- number of scans: the first N keys of p4.
--
-- @title int4 primary key: short (ten-row) range scans, forward and backward
-- @kind sql
-- @plan nested_loop
-- @uses data_int4
-- @index t4_pkey
-- @unit scan
-- @n_full 200000
-- @n_timing 100000
-- @n_callgrind 5000
-- @target -

-- @section session
SELECT pg_prewarm('t4'), pg_prewarm('t4_pkey'), pg_prewarm('p4');

-- @section warmup
SELECT v FROM t4 WHERE id BETWEEN 42 AND 51 ORDER BY id;

-- @query forward BETWEEN k AND k+9, forward
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM p4 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM t4 WHERE t4.id BETWEEN p.k AND p.k + 9 ORDER BY t4.id) x;

-- @query backward BETWEEN k AND k+9, ORDER BY DESC
SELECT count(*), sum(x.v)
  FROM (SELECT k FROM p4 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM t4 WHERE t4.id BETWEEN p.k AND p.k + 9 ORDER BY t4.id DESC) x;
