-- bench/workloads/build_int4x3_sorted.sql - build_int4x3 on input already in
-- key order: CREATE INDEX on (a, b, c) over bi3s, the same 1,000,000 rows
-- stored in ascending (a, b, c) order.  The server's quicksort first checks
-- whether its input is sorted and stops there: about one comparison a row
-- (most of them ties of a and b, so comparetup: the compiled build
-- comparator with the module on), against ~20 in random order, so the
-- heap scan, forming the tuples and writing the pages weigh more.  As
-- build_int4x3 otherwise (unit, {N}, round_setup, warm-up).
--
-- @title (int4, int4, int4) CREATE INDEX, 1M rows already in key order
-- @kind sql
-- @uses data_build
-- @index bi3s_a_b_c_idx
-- @unit build
-- @n_full 1
-- @n_timing 1
-- @n_callgrind 1
-- @n_warm 0
-- @target -
-- @ceiling none

-- @section session
SET jit = off;
SET maintenance_work_mem = '1GB';
SET max_parallel_maintenance_workers = 0;
SET btree_jit.build_compile_rows = 0;
-- catalog indexes stay on the server's code in both arms: a catalog index
-- crossing the threshold inside a measured build would compile there
SET btree_jit.compile_threshold = 2147483647;
SELECT pg_prewarm('bi3s'), pg_prewarm('bi3w');

-- @section round_setup
SELECT bench_drop_indexes('bi3s');

-- @section warmup
CREATE INDEX ON bi3w (a, b, c);
SELECT bench_drop_indexes('bi3w');

-- @section teardown
SELECT bench_drop_indexes('bi3s');

-- @query sorted CREATE INDEX ON bi3s (a, b, c): rows in ascending key order
-- @repeat
CREATE INDEX ON bi3s (a, b, c);
