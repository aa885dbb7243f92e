-- bench/workloads/data_float8.sql - data of probe_float8 (a per-type benchmark).
-- Built once per bench run through psql, in one session (setseed makes the
-- probe keys deterministic).
--
--   tf8      1,000,000 rows, id float8 PRIMARY KEY (distinct doubles), payload v
--   tf8_pl   200,000 probe keys, all present, drawn at random (LATERAL query)
--   tf8_pj   200,000 probe keys drawn again, a quarter of them absent (join)
BEGIN;
CREATE TABLE tf8 (id float8 NOT NULL, v int4 NOT NULL);
INSERT INTO tf8 SELECT (i * 0.7311 + 0.5)::float8, i % 1000 FROM generate_series(1, 1000000) i;
ALTER TABLE tf8 ADD PRIMARY KEY (id);
SELECT setseed(0.314);
CREATE TABLE tf8_pl (n int4 NOT NULL, k float8 NOT NULL);
INSERT INTO tf8_pl
  SELECT g, (SELECT (i * 0.7311 + 0.5)::float8 FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r)
    FROM generate_series(1, 200000) g;
CREATE TABLE tf8_pj (n int4 NOT NULL, k float8 NOT NULL);
INSERT INTO tf8_pj
  SELECT g, CASE WHEN random() < 0.25
                 THEN (SELECT (i * 0.7311 + 0.25)::float8 FROM (SELECT 1000000 + g AS i) r)
                 ELSE (SELECT (i * 0.7311 + 0.5)::float8 FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r) END
    FROM generate_series(1, 200000) g;
COMMIT;
VACUUM (FREEZE, ANALYZE) tf8, tf8_pl, tf8_pj;
