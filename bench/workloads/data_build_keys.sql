-- bench/workloads/data_build_keys.sql - data of build_unique, build_desc and
-- build_uuid.  Built once per bench run through psql, in one session
-- (setseed makes the rows deterministic).
--
--   buq   1,000,000 distinct int4 keys k = i * 1000003 mod (2^31 - 1) (a
--         permutation: pseudo-random over the int4 range), in that order
--   bdn   1,000,000 rows (a int4, b int4) in random order: a ~1,000
--         distinct values and 2% NULLs, b pseudo-random over 0..999,999
--         and 2% NULLs
--   buu   1,000,000 distinct uuids (from md5: random order)
--   buqw, bdnw, buuw  1,000 rows of each: the warm-ups' builds
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE buq (k int4 NOT NULL);
INSERT INTO buq SELECT (i::int8 * 1000003 % 2147483647)::int4 FROM generate_series(1, 1000000) i;
SELECT setseed(0.3579);
CREATE TABLE bdn (a int4, b int4);
INSERT INTO bdn
  SELECT CASE WHEN random() < 0.02 THEN NULL ELSE floor(random() * 1000)::int4 END,
         CASE WHEN random() < 0.02 THEN NULL ELSE floor(random() * 1000000)::int4 END
    FROM generate_series(1, 1000000) i;
CREATE TABLE buu (id uuid NOT NULL);
INSERT INTO buu SELECT md5(i::text)::uuid FROM generate_series(1, 1000000) i;
CREATE TABLE buqw (k int4 NOT NULL);
INSERT INTO buqw SELECT k FROM buq LIMIT 1000;
CREATE TABLE bdnw (a int4, b int4);
INSERT INTO bdnw SELECT a, b FROM bdn LIMIT 1000;
CREATE TABLE buuw (id uuid NOT NULL);
INSERT INTO buuw SELECT id FROM buu LIMIT 1000;
COMMIT;
VACUUM (FREEZE, ANALYZE) buq, bdn, buu, buqw, bdnw, buuw;
