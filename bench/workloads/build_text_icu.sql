-- bench/workloads/build_text_icu.sql - CREATE INDEX on (b text COLLATE
-- "und-x-icu", a int8) over the 500,000 rows of build_int8_text
-- (data_build_text: b distinct md5 strings, in random order).  The leading
-- key is text in an ICU collation: both arms compare it through the sort's
-- SortSupport (ICU's abbreviated keys, then ucol_strcoll on their ties);
-- the compiled comparator takes only the call of comparetup and the int8
-- column, which the distinct strings almost never reach.  What the module
-- adds to a build whose comparisons it cannot compile.  As build_int4x3
-- otherwise (unit, {N}, round_setup, warm-up on bt2w).
--
-- @title (text ICU, int8) CREATE INDEX, 500k rows in random order
-- @kind sql
-- @uses data_build data_build_text
-- @index bt2_b_a_idx
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
CREATE INDEX ON bt2w (b COLLATE "und-x-icu", a);
SELECT bench_drop_indexes('bt2w');

-- @section teardown
SELECT bench_drop_indexes('bt2');

-- @query random CREATE INDEX ON bt2 (b COLLATE "und-x-icu", a): rows in random order
-- @repeat
CREATE INDEX ON bt2 (b COLLATE "und-x-icu", a);
