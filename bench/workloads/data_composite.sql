-- bench/workloads/data_composite.sql - data for probe_composite.
--
--   tc  2,000,000 rows, PRIMARY KEY (a, b, c), all int4, built from
--       i = 0..1,999,999:  a = i % 10 (10 values), b = (i / 10) % 100
--       (100 values), c = i / 1000 (2,000 values, unique within (a, b))
--   pc  500,000 probe keys (a, b, c) of pseudo-random existing rows
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE tc (a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL, v int4 NOT NULL);
INSERT INTO tc SELECT i % 10, (i / 10) % 100, i / 1000, i % 1000 FROM generate_series(0, 1999999) i;
ALTER TABLE tc ADD PRIMARY KEY (a, b, c);
SELECT setseed(0.4444);
CREATE TABLE pc (i int4 NOT NULL, a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL);
INSERT INTO pc SELECT i, r % 10, (r / 10) % 100, r / 1000
  FROM (SELECT i, floor(random() * 2000000)::int4 AS r FROM generate_series(1, 500000) i) s;
COMMIT;
VACUUM (FREEZE, ANALYZE) tc, pc;
