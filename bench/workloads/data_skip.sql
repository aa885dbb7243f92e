-- bench/workloads/data_skip.sql - data for skip_scan: an index whose
-- leading column has few values, queried on its second column alone.
--
--   tk  2,000,000 rows (a int4, b int8, v int4): a = 0..19 (20 values),
--       b = 0..99,999 (each (a, b) once), rows loaded in random order;
--       index tk_ab on (a, b)
--   pk  50,000 probe values of b, drawn at random from 0..99,999, as int8
--       (b8) and as int4 (b4: a cross-type key int8 = int4)
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
SELECT setseed(0.6161);
CREATE TABLE tk (a int4 NOT NULL, b int8 NOT NULL, v int4 NOT NULL);
INSERT INTO tk SELECT i % 20, i / 20, i % 1000
  FROM generate_series(0, 1999999) i ORDER BY random();
CREATE INDEX tk_ab ON tk (a, b);
CREATE TABLE pk (i int4 NOT NULL, b8 int8 NOT NULL, b4 int4 NOT NULL);
INSERT INTO pk SELECT i, r, r
  FROM (SELECT i, floor(random() * 100000)::int4 AS r
          FROM generate_series(1, 50000) i) s;
COMMIT;
VACUUM (FREEZE, ANALYZE) tk, pk;
