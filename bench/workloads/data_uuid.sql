-- bench/workloads/data_uuid.sql - data of probe_uuid (a per-type benchmark).
-- Built once per bench run through psql, in one session (setseed makes the
-- probe keys deterministic).
--
--   tu      1,000,000 rows, id uuid PRIMARY KEY (uuid from md5), payload v
--   tu_pl   200,000 probe keys, all present, drawn at random (LATERAL query)
--   tu_pj   200,000 probe keys drawn again, a quarter of them absent (join)
BEGIN;
CREATE TABLE tu (id uuid NOT NULL, v int4 NOT NULL);
INSERT INTO tu SELECT md5(i::text)::uuid, i % 1000 FROM generate_series(1, 1000000) i;
ALTER TABLE tu ADD PRIMARY KEY (id);
SELECT setseed(0.311);
CREATE TABLE tu_pl (n int4 NOT NULL, k uuid NOT NULL);
INSERT INTO tu_pl
  SELECT g, (SELECT md5(i::text)::uuid FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r)
    FROM generate_series(1, 200000) g;
CREATE TABLE tu_pj (n int4 NOT NULL, k uuid NOT NULL);
INSERT INTO tu_pj
  SELECT g, CASE WHEN random() < 0.25
                 THEN (SELECT md5('absent' || i)::uuid FROM (SELECT 1000000 + g AS i) r)
                 ELSE (SELECT md5(i::text)::uuid FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r) END
    FROM generate_series(1, 200000) g;
COMMIT;
VACUUM (FREEZE, ANALYZE) tu, tu_pl, tu_pj;
