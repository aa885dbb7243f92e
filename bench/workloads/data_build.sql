-- bench/workloads/data_build.sql - data of build_int4x3, build_int4x3_sorted
-- and build_parallel, and the helper every build_* workload drops its
-- indexes with.  Built once per bench run through psql, in one session
-- (setseed makes the rows deterministic).
--
--   bench_drop_indexes(t)  drops every index of table t (a build_*
--            workload's round_setup and teardown: the measured CREATE
--            INDEX names its index itself, t_a_b_c_idx, t_a_b_c_idx1, ...)
--   bi3r     1,000,000 rows (a, b, c) int4 in random order: a ~100
--            distinct values, b ~1,000, c pseudo-random over 0..2^31-2
--            (nearly unique)
--   bi3s     the same rows in ascending (a, b, c) order
--   bi3w     1,000 of those rows: the warm-up's build, which compiles (or
--            links) the (int4, int4, int4) shape before anything is measured
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE FUNCTION bench_drop_indexes(t regclass) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  i regclass;
  n int := 0;
BEGIN
  FOR i IN SELECT indexrelid::regclass FROM pg_index WHERE indrelid = t LOOP
    EXECUTE 'DROP INDEX ' || i;
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
SELECT setseed(0.1357);
CREATE TABLE bi3r (a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL);
INSERT INTO bi3r
  SELECT floor(random() * 100)::int4, floor(random() * 1000)::int4, floor(random() * 2147483647)::int4
    FROM generate_series(1, 1000000) i;
CREATE TABLE bi3s (a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL);
INSERT INTO bi3s SELECT a, b, c FROM bi3r ORDER BY a, b, c;
CREATE TABLE bi3w (a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL);
INSERT INTO bi3w SELECT a, b, c FROM bi3r LIMIT 1000;
COMMIT;
VACUUM (FREEZE, ANALYZE) bi3r, bi3s, bi3w;
