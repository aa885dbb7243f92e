-- bench/workloads/data_latency.sql - ten small tables for compile_latency,
-- each with a three-column index (int8, int2, int4) of a key shape no other
-- workload and no catalog index has, and all ten shapes different from each
-- other (ASC/DESC and NULLS FIRST patterns), so that each one's first
-- search is a first compile of its signature.  The index is built after
-- the rows are loaded, so nothing searches it before the measurement.
DO $$
DECLARE
  shapes text[] := ARRAY[
    'a, b, c DESC', 'a DESC, b, c', 'a, b DESC, c', 'a DESC, b DESC, c',
    'a, b DESC, c DESC', 'a DESC, b, c DESC', 'a DESC, b DESC, c DESC',
    'a NULLS FIRST, b, c', 'a, b NULLS FIRST, c', 'a, b, c NULLS FIRST'];
BEGIN
  FOR n IN 0..9 LOOP
    EXECUTE format('CREATE TABLE lat%s (a int8, b int2, c int4, v int4)', n);
    EXECUTE format('INSERT INTO lat%s SELECT i * 3, i %% 100, i, i FROM generate_series(1, 10000) i', n);
    EXECUTE format('CREATE INDEX latidx%s ON lat%s (%s)', n, n, shapes[n + 1]);
  END LOOP;
END
$$;
VACUUM (FREEZE, ANALYZE) lat0, lat1, lat2, lat3, lat4, lat5, lat6, lat7, lat8, lat9;
