-- bench/workloads/build_int4x3.sql - CREATE INDEX on (a, b, c), three int4
-- columns, over 1,000,000 rows in random order (data_build: a ~100
-- distinct values, b ~1,000, c nearly unique).  The build's sort compares
-- the leading key as the server's specialised quicksort does and, where it
-- ties (a has ~100 values), calls comparetup: with the module on, the
-- compiled build comparator.  A unit is one build; {N} is the number of
-- builds (@repeat: the statement N times, each naming its own index
-- bi3r_a_b_c_idx, bi3r_a_b_c_idx1, ...).  round_setup (untimed,
-- uncounted) drops the table's indexes before each timing round and each
-- counted statement.
--
-- The first build of a shape in a session compiles it (about 1 s, LLVM):
-- the warm-up builds the same key shape on bi3w (1,000 rows), so that the
-- measured build uses the code the warm-up compiled or linked from the
-- object cache.  btree_jit.build_compile_rows = 0: every build compiles or
-- links, the warm-up's too (the default, 1,000,000 estimated rows, would
-- leave it to the server's comparator).  btree_jit.compile_threshold at
-- its maximum: no catalog index is compiled inside a measured build (a
-- build's catalog lookups may take one past the threshold, and a
-- single-user backend compiles inline).  @ceiling none: the table's
-- ceiling is the page search's, which a build does not do.
--
-- @title (int4, int4, int4) CREATE INDEX, 1M rows in random order
-- @kind sql
-- @uses data_build
-- @index bi3r_a_b_c_idx
-- @unit build
-- @n_full 1
-- @n_timing 1
-- @n_callgrind 1
-- @n_warm 0
-- @target 1.5
-- @ceiling none

-- @section session
SET jit = off;
SET maintenance_work_mem = '1GB';
SET max_parallel_maintenance_workers = 0;
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

-- @query random CREATE INDEX ON bi3r (a, b, c): rows in random order
-- @repeat
CREATE INDEX ON bi3r (a, b, c);
