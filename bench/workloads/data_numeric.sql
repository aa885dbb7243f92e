-- bench/workloads/data_numeric.sql - data of probe_numeric (a per-type benchmark).
-- Built once per bench run through psql, in one session (setseed makes the
-- probe keys deterministic).
--
--   tnu      1,000,000 rows, id numeric PRIMARY KEY (numerics of scale 2), payload v
--   tnu_pl   200,000 probe keys, all present, drawn at random (LATERAL query)
--   tnu_pj   200,000 probe keys drawn again, a quarter of them absent (join)
BEGIN;
CREATE TABLE tnu (id numeric NOT NULL, v int4 NOT NULL);
INSERT INTO tnu SELECT (i * 3.7 + (i % 3) * 0.05)::numeric, i % 1000 FROM generate_series(1, 1000000) i;
ALTER TABLE tnu ADD PRIMARY KEY (id);
SELECT setseed(0.315);
CREATE TABLE tnu_pl (n int4 NOT NULL, k numeric NOT NULL);
INSERT INTO tnu_pl
  SELECT g, (SELECT (i * 3.7 + (i % 3) * 0.05)::numeric FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r)
    FROM generate_series(1, 200000) g;
CREATE TABLE tnu_pj (n int4 NOT NULL, k numeric NOT NULL);
INSERT INTO tnu_pj
  SELECT g, CASE WHEN random() < 0.25
                 THEN (SELECT (i * 3.7 + 0.01)::numeric FROM (SELECT 1000000 + g AS i) r)
                 ELSE (SELECT (i * 3.7 + (i % 3) * 0.05)::numeric FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r) END
    FROM generate_series(1, 200000) g;
COMMIT;
VACUUM (FREEZE, ANALYZE) tnu, tnu_pl, tnu_pj;
