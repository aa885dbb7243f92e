-- bench/workloads/range_scan_ios.sql - long index-only range scans
-- (BETWEEN k AND k + 2999: 3,000 rows, eight or nine leaf pages each) over
-- t4's int4 primary key, forward and backward (ORDER BY id DESC: an Index
-- Only Scan Backward).  Unlike range_scan's ten-row scans, nearly every
-- leaf page read here is not the scan's first, which is where 17's
-- precheck (pstate->prechecked, firstmatch) and 18's startikey let the
-- server's _bt_checkkeys skip keys: the workload shows what the scan-key
-- checks and the leaf read cost per row.  {N} is the number of scans: the
-- first N keys of p4.  t4 is frozen (data_int4), so the visibility map
-- lets the scan skip the heap.
--
-- @title int4 primary key: long (3,000-row) index-only range scans, forward and backward
-- @kind sql
-- @plan nested_loop
-- @uses data_int4
-- @index t4_pkey
-- @unit scan
-- @n_full 20000
-- @n_timing 5000
-- @n_callgrind 500
-- @target -

-- @section session
SELECT pg_prewarm('t4'), pg_prewarm('t4_pkey'), pg_prewarm('p4');

-- @section warmup
SELECT count(*) FROM t4 WHERE id BETWEEN 42 AND 3041;

-- @query forward BETWEEN k AND k+2999, index only, forward
SELECT count(*), sum(x.id)
  FROM (SELECT k FROM p4 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT t4.id FROM t4 WHERE t4.id BETWEEN p.k AND p.k + 2999 ORDER BY t4.id) x;

-- @query backward BETWEEN k AND k+2999, index only, ORDER BY DESC
SELECT count(*), sum(x.id)
  FROM (SELECT k FROM p4 LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT t4.id FROM t4 WHERE t4.id BETWEEN p.k AND p.k + 2999 ORDER BY t4.id DESC) x;
