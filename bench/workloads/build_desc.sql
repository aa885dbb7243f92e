-- bench/workloads/build_desc.sql - CREATE INDEX on (a DESC NULLS FIRST, b),
-- two int4 columns with NULLs, over 1,000,000 rows in random order
-- (data_build_keys: a ~1,000 values and 2% NULLs, b pseudo-random and 2%
-- NULLs).  The sort's ties on a reach comparetup: the compiled comparator
-- with a descending, NULLs-first leading column and NULLs in both.  As
-- build_int4x3 otherwise (unit, {N}, round_setup, warm-up on bdnw).
--
-- @title (int4 DESC NULLS FIRST, int4) CREATE INDEX with NULLs, 1M rows
-- @kind sql
-- @uses data_build data_build_keys
-- @index bdn_a_b_idx
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
SELECT pg_prewarm('bdn'), pg_prewarm('bdnw');

-- @section round_setup
SELECT bench_drop_indexes('bdn');

-- @section warmup
CREATE INDEX ON bdnw (a DESC NULLS FIRST, b);
SELECT bench_drop_indexes('bdnw');

-- @section teardown
SELECT bench_drop_indexes('bdn');

-- @query random CREATE INDEX ON bdn (a DESC NULLS FIRST, b): rows in random order
-- @repeat
CREATE INDEX ON bdn (a DESC NULLS FIRST, b);
