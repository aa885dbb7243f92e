-- bench/workloads/data_interval.sql - data of probe_interval (a
-- column compared by a proc imported from the server's bitcode).  Built once per bench
-- run through psql, in one session (setseed makes the probe keys
-- deterministic).
--
--   tiv      1,000,000 rows, id interval PRIMARY KEY, payload v; the keys
--            mix months, days and seconds and are distinct as interval_cmp
--            orders them (months * 30 + days is i / 1000, seconds < 3500)
--   tiv_pl   200,000 probe keys, all present, drawn at random (LATERAL query)
--   tiv_pj   200,000 probe keys drawn again, a quarter of them absent (join)
BEGIN;
CREATE FUNCTION pg_temp.tiv_key(i int4) RETURNS interval LANGUAGE sql IMMUTABLE AS
$$ SELECT make_interval(months => i / 30000, days => (i / 1000) % 30, secs => (i % 1000) * 3.5) $$;
CREATE TABLE tiv (id interval NOT NULL, v int4 NOT NULL);
INSERT INTO tiv SELECT pg_temp.tiv_key(i), i % 1000 FROM generate_series(1, 1000000) i;
ALTER TABLE tiv ADD PRIMARY KEY (id);
SELECT setseed(0.314);
CREATE TABLE tiv_pl (n int4 NOT NULL, k interval NOT NULL);
INSERT INTO tiv_pl
  SELECT g, pg_temp.tiv_key(1 + floor(random() * 1000000)::int4 + g * 0)
    FROM generate_series(1, 200000) g;
CREATE TABLE tiv_pj (n int4 NOT NULL, k interval NOT NULL);
INSERT INTO tiv_pj
  SELECT g, CASE WHEN random() < 0.25
                 THEN pg_temp.tiv_key(1 + floor(random() * 1000000)::int4 + g * 0) + interval '1.75 sec'
                 ELSE pg_temp.tiv_key(1 + floor(random() * 1000000)::int4 + g * 0) END
    FROM generate_series(1, 200000) g;
COMMIT;
VACUUM (FREEZE, ANALYZE) tiv, tiv_pl, tiv_pj;
