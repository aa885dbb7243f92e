-- bench/workloads/data_text_c.sql - data of probe_text_c (a per-type benchmark).
-- Built once per bench run through psql, in one session (setseed makes the
-- probe keys deterministic).
--
--   ttc      1,000,000 rows, id text COLLATE "C" PRIMARY KEY (32-character md5 strings), payload v
--   ttc_pl   200,000 probe keys, all present, drawn at random (LATERAL query)
--   ttc_pj   200,000 probe keys drawn again, a quarter of them absent (join)
BEGIN;
CREATE TABLE ttc (id text COLLATE "C" NOT NULL, v int4 NOT NULL);
INSERT INTO ttc SELECT md5(i::text), i % 1000 FROM generate_series(1, 1000000) i;
ALTER TABLE ttc ADD PRIMARY KEY (id);
SELECT setseed(0.312);
CREATE TABLE ttc_pl (n int4 NOT NULL, k text COLLATE "C" NOT NULL);
INSERT INTO ttc_pl
  SELECT g, (SELECT md5(i::text) FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r)
    FROM generate_series(1, 200000) g;
CREATE TABLE ttc_pj (n int4 NOT NULL, k text COLLATE "C" NOT NULL);
INSERT INTO ttc_pj
  SELECT g, CASE WHEN random() < 0.25
                 THEN (SELECT md5('absent' || i) FROM (SELECT 1000000 + g AS i) r)
                 ELSE (SELECT md5(i::text) FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r) END
    FROM generate_series(1, 200000) g;
COMMIT;
VACUUM (FREEZE, ANALYZE) ttc, ttc_pl, ttc_pj;
