-- bench/workloads/build_uuid.sql - CREATE INDEX on one uuid column over
-- 1,000,000 distinct uuids (from md5: random order; data_build_keys).  The
-- sort compares uuids by an abbreviated key (their first 8 bytes) and
-- calls comparetup only where those are equal, which random uuids almost
-- never are: like build_unique, a build the module can do little for.  As
-- build_int4x3 otherwise (unit, {N}, round_setup, warm-up on buuw).
--
-- @title uuid CREATE INDEX, 1M distinct uuids in random order
-- @kind sql
-- @uses data_build data_build_keys
-- @index buu_id_idx
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
SELECT pg_prewarm('buu'), pg_prewarm('buuw');

-- @section round_setup
SELECT bench_drop_indexes('buu');

-- @section warmup
CREATE INDEX ON buuw (id);
SELECT bench_drop_indexes('buuw');

-- @section teardown
SELECT bench_drop_indexes('buu');

-- @query random CREATE INDEX ON buu (id): uuids in random order
-- @repeat
CREATE INDEX ON buu (id);
