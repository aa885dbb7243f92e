-- bench/workloads/data_crosstype.sql - data for probe_crosstype.
--
--   tx  2,000,000 rows, PRIMARY KEY (a, b, c) of types (int2, int8, int4),
--       built from i = 0..1,999,999:  a = i % 7 (7 values), b = (i / 7) %
--       400 (400 values), c = i / 2800 (715 values, unique within (a, b))
--   px  500,000 probe keys of pseudo-random existing rows, each twice: as
--       int4 values (a4, b4, c4: what an application sends, giving the
--       cross-type scan keys int2 = int4 and int8 = int4) and as the
--       columns' own types (a2, b8, c4: the same-type twin)
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE tx (a int2 NOT NULL, b int8 NOT NULL, c int4 NOT NULL, v int4 NOT NULL);
INSERT INTO tx SELECT i % 7, (i / 7) % 400, i / 2800, i % 1000 FROM generate_series(0, 1999999) i;
ALTER TABLE tx ADD PRIMARY KEY (a, b, c);
SELECT setseed(0.2323);
CREATE TABLE px (i int4 NOT NULL, a4 int4 NOT NULL, b4 int4 NOT NULL, c4 int4 NOT NULL,
                 a2 int2 NOT NULL, b8 int8 NOT NULL);
INSERT INTO px SELECT i, r % 7, (r / 7) % 400, r / 2800, r % 7, (r / 7) % 400
  FROM (SELECT i, floor(random() * 2000000)::int4 AS r FROM generate_series(1, 500000) i) s;
COMMIT;
VACUUM (FREEZE, ANALYZE) tx, px;
