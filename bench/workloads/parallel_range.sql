-- bench/workloads/parallel_range.sql - range counts over t4's int4 primary
-- key by a leader and 2 parallel workers: a Parallel Index Only Scan of
-- 500,000 keys (count(*)) and a Parallel Index Scan of 100,000 (sum(v), the
-- heap fetched).  {LO} is each query's first key, pseudo-random and the
-- same every run.
--
-- Instructions cannot be counted in single-user mode (it starts no
-- workers): bench/lib/parallel.py starts the postmaster under callgrind
-- with --toggle-collect=standard_ExecutorRun, so that the leader's and
-- each worker's execution of the query is counted (not their start-up or
-- the planner), and sums the leader's part between two markers and every
-- worker's profile: per query = that sum / @count_queries.  The leader
-- warms up with serial scans first (its index passes the compile
-- threshold); a worker lives for one query and links the code the leader's
-- backend stored.  The module's object cache is primed first, so that no
-- process compiles while counted.  Timing: interleaved off/on rounds of
-- @timing_queries queries on the running cluster.
--
-- @title int4 primary key: parallel range counts, leader + 2 workers
-- @kind parallel
-- @uses data_int4
-- @index t4_pkey
-- @unit query
-- @key_range 1400000
-- @count_queries 4
-- @timing_queries 20
-- @rounds 9
-- @n_warm 0
-- @target 1.2

-- @section session
SET jit = off;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT pg_prewarm('t4'), pg_prewarm('t4_pkey');

-- @section warmup
SET max_parallel_workers_per_gather = 0;
SELECT sum(x.c) FROM generate_series(1, 200) g
  CROSS JOIN LATERAL (SELECT count(*) AS c FROM t4 WHERE id BETWEEN g * 5000 AND g * 5000 + 9) x;
SET max_parallel_workers_per_gather = 2;

-- @query ios count(*) of 500,000 keys, Parallel Index Only Scan
SELECT count(*) FROM t4 WHERE id BETWEEN {LO} AND {LO} + 499999;

-- @query scan sum(v) of 100,000 keys, Parallel Index Scan
SELECT sum(v) FROM t4 WHERE id BETWEEN {LO} AND {LO} + 99999;
