-- bench/workloads/build_unique.sql - CREATE UNIQUE INDEX on one int4 column
-- over 1,000,000 distinct keys in pseudo-random order (data_build_keys).
-- The server's quicksort for an int4 leading key compares it inline and
-- calls comparetup only where two keys are equal, which distinct keys never
-- are: what the module can do for a single-column unique build is little
-- or nothing, and this workload shows what it costs there.  As
-- build_int4x3 otherwise (unit, {N}, round_setup, warm-up on buqw).
--
-- @title int4 CREATE UNIQUE INDEX, 1M distinct keys in random order
-- @kind sql
-- @uses data_build data_build_keys
-- @index buq_k_idx
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
SELECT pg_prewarm('buq'), pg_prewarm('buqw');

-- @section round_setup
SELECT bench_drop_indexes('buq');

-- @section warmup
CREATE UNIQUE INDEX ON buqw (k);
SELECT bench_drop_indexes('buqw');

-- @section teardown
SELECT bench_drop_indexes('buq');

-- @query random CREATE UNIQUE INDEX ON buq (k): distinct keys in random order
-- @repeat
CREATE UNIQUE INDEX ON buq (k);
