-- bench/workloads/build_int8_text.sql - CREATE INDEX on (a int8, b text
-- COLLATE "C") over 500,000 rows in random order (data_build_text: a 2,000
-- values of 250 rows each, b distinct md5 strings).  Most comparisons tie
-- on a and compare the strings: the server's comparetup calls the C
-- collation's sort comparator (varstrfastcmp_c), the compiled one compares
-- the bytes inline.  As build_int4x3 otherwise (unit, {N}, round_setup,
-- warm-up on bt2w).
--
-- @title (int8, text "C") CREATE INDEX, 500k rows in random order
-- @kind sql
-- @uses data_build data_build_text
-- @index bt2_a_b_idx
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
SELECT pg_prewarm('bt2'), pg_prewarm('bt2w');

-- @section round_setup
SELECT bench_drop_indexes('bt2');

-- @section warmup
CREATE INDEX ON bt2w (a, b);
SELECT bench_drop_indexes('bt2w');

-- @section teardown
SELECT bench_drop_indexes('bt2');

-- @query random CREATE INDEX ON bt2 (a, b): rows in random order
-- @repeat
CREATE INDEX ON bt2 (a, b);
