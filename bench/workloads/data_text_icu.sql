-- bench/workloads/data_text_icu.sql - data of probe_text_icu (a per-type benchmark).
-- Built once per bench run through psql, in one session (setseed makes the
-- probe keys deterministic).
--
--   tti      1,000,000 rows, id text COLLATE "en-US-x-icu" PRIMARY KEY (md5 strings under an ICU collation), payload v
--   tti_pl   200,000 probe keys, all present, drawn at random (LATERAL query)
--   tti_pj   200,000 probe keys drawn again, a quarter of them absent (join)
BEGIN;
CREATE TABLE tti (id text COLLATE "en-US-x-icu" NOT NULL, v int4 NOT NULL);
INSERT INTO tti SELECT md5(i::text), i % 1000 FROM generate_series(1, 1000000) i;
ALTER TABLE tti ADD PRIMARY KEY (id);
SELECT setseed(0.316);
CREATE TABLE tti_pl (n int4 NOT NULL, k text COLLATE "en-US-x-icu" NOT NULL);
INSERT INTO tti_pl
  SELECT g, (SELECT md5(i::text) FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r)
    FROM generate_series(1, 200000) g;
CREATE TABLE tti_pj (n int4 NOT NULL, k text COLLATE "en-US-x-icu" NOT NULL);
INSERT INTO tti_pj
  SELECT g, CASE WHEN random() < 0.25
                 THEN (SELECT md5('absent' || i) FROM (SELECT 1000000 + g AS i) r)
                 ELSE (SELECT md5(i::text) FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r) END
    FROM generate_series(1, 200000) g;
COMMIT;
VACUUM (FREEZE, ANALYZE) tti, tti_pl, tti_pj;
