-- bench/workloads/data_email.sql - data of probe_email (a per-type benchmark).
-- Built once per bench run through psql, in one session (setseed makes the
-- probe keys deterministic).
--
--   tem      1,000,000 rows, id varchar PRIMARY KEY (like user123@example45.com), payload v
--   tem_pl   200,000 probe keys, all present, drawn at random (LATERAL query)
--   tem_pj   200,000 probe keys drawn again, a quarter of them absent (join)
BEGIN;
CREATE TABLE tem (id varchar NOT NULL, v int4 NOT NULL);
INSERT INTO tem SELECT ('user' || i || '@example' || (i % 97) || '.com')::varchar, i % 1000 FROM generate_series(1, 1000000) i;
ALTER TABLE tem ADD PRIMARY KEY (id);
SELECT setseed(0.313);
CREATE TABLE tem_pl (n int4 NOT NULL, k varchar NOT NULL);
INSERT INTO tem_pl
  SELECT g, (SELECT ('user' || i || '@example' || (i % 97) || '.com')::varchar FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r)
    FROM generate_series(1, 200000) g;
CREATE TABLE tem_pj (n int4 NOT NULL, k varchar NOT NULL);
INSERT INTO tem_pj
  SELECT g, CASE WHEN random() < 0.25
                 THEN (SELECT ('user' || i || '@absent.com')::varchar FROM (SELECT 1000000 + g AS i) r)
                 ELSE (SELECT ('user' || i || '@example' || (i % 97) || '.com')::varchar FROM (SELECT 1 + floor(random() * 1000000)::int4 + g * 0 AS i) r) END
    FROM generate_series(1, 200000) g;
COMMIT;
VACUUM (FREEZE, ANALYZE) tem, tem_pl, tem_pj;
