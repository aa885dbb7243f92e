-- bench/workloads/data_build_text.sql - data of build_int8_text.  Built
-- once per bench run through psql, in one session (setseed makes the load
-- order deterministic).
--
--   bt2   500,000 rows (a int8, b text COLLATE "C") in random order: a 2,000
--         distinct values (multiples of 1,000,000,007: 250 rows each), b
--         32-character md5 strings (distinct)
--   bt2w  1,000 of those rows: the warm-up's build
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
SELECT setseed(0.2468);
CREATE TABLE bt2 (a int8 NOT NULL, b text COLLATE "C" NOT NULL);
INSERT INTO bt2
  SELECT (i % 2000)::int8 * 1000000007, md5(i::text)
    FROM generate_series(1, 500000) i ORDER BY random();
CREATE TABLE bt2w (a int8 NOT NULL, b text COLLATE "C" NOT NULL);
INSERT INTO bt2w SELECT a, b FROM bt2 LIMIT 1000;
COMMIT;
VACUUM (FREEZE, ANALYZE) bt2, bt2w;
