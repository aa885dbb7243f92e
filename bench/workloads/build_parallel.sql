-- bench/workloads/build_parallel.sql - build_int4x3's CREATE INDEX on
-- bi3r (a, b, c) as a parallel build: the leader and 2 workers each sort
-- a part of the heap (max_parallel_maintenance_workers = 2; the planner
-- gives a 42 MB heap 2 workers) and the leader merges.  The leader's
-- btbuild compiles or links the shape before the workers start; each
-- worker links the code from the object cache and sorts with it.
--
-- Time only (@counts none): single-user mode starts no workers, so its
-- count would be build_int4x3's serial build again, and parallel_range's
-- postmaster under callgrind collects standard_ExecutorRun, which a build
-- never enters.  Interleaved off/on rounds of one build each on the
-- running cluster, as build_int4x3 otherwise (round_setup, warm-up).
--
-- @title (int4, int4, int4) parallel CREATE INDEX (2 workers), 1M rows, time only
-- @kind sql
-- @counts none
-- @uses data_build
-- @index bi3r_a_b_c_idx
-- @unit build
-- @n_full 1
-- @n_timing 1
-- @n_warm 0
-- @target -

-- @section session
SET jit = off;
SET maintenance_work_mem = '1GB';
SET max_parallel_maintenance_workers = 2;
SET btree_jit.build_compile_rows = 0;
-- catalog indexes stay on the server's code in both arms: a catalog index
-- crossing the threshold inside a measured build would compile there
SET btree_jit.compile_threshold = 2147483647;
SELECT pg_prewarm('bi3r'), pg_prewarm('bi3w');

-- @section round_setup
SELECT bench_drop_indexes('bi3r');

-- @section warmup
CREATE INDEX ON bi3w (a, b, c);
SELECT bench_drop_indexes('bi3w');

-- @section teardown
SELECT bench_drop_indexes('bi3r');

-- @query random CREATE INDEX ON bi3r (a, b, c), leader + 2 workers
-- @repeat
CREATE INDEX ON bi3r (a, b, c);
