-- bench/workloads/data_composite_shapes.sql - data for
-- probe_composite_shapes: three more three-column int4 primary keys, each
-- with its own cardinalities, value ranges and load order, so that the
-- composite result does not rest on probe_composite's one data set.
--
--   tcs1  1,000,000 rows, (a, b, c): a 100,000 values (10 rows each), b
--         10 values, c scattered over 0..999; loaded in key order.  The
--         leading column decides almost every comparison.
--   tcs2  1,000,000 rows, (a, b, c): a and b uniform random over
--         -500..499 and 0..9,999, c the row number (unique); loaded in
--         random order.  Every column decides some comparisons.
--   tcs3  1,000,000 rows, (a, b, c): a 2 values, b 3 values, c unique
--         over -500,000..499,999; loaded in random order.  The leading
--         columns are nearly always equal, the last one decides.
--   pcs1, pcs2, pcs3  200,000 probe keys each: existing rows picked at
--         random, in random order
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
SELECT setseed(0.5151);
CREATE TABLE tcs1 (a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL, v int4 NOT NULL);
INSERT INTO tcs1 SELECT i / 10, i % 10, ((i::int8 * 7919) % 1000)::int4, i % 1000 FROM generate_series(0, 999999) i;
ALTER TABLE tcs1 ADD PRIMARY KEY (a, b, c);
CREATE TABLE tcs2 (a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL, v int4 NOT NULL);
INSERT INTO tcs2
SELECT floor(random() * 1000)::int4 - 500, floor(random() * 10000)::int4, i, i % 1000
  FROM generate_series(0, 999999) i ORDER BY random();
ALTER TABLE tcs2 ADD PRIMARY KEY (a, b, c);
CREATE TABLE tcs3 (a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL, v int4 NOT NULL);
INSERT INTO tcs3 SELECT i % 2, i % 3, i - 500000, i % 1000 FROM generate_series(0, 999999) i ORDER BY random();
ALTER TABLE tcs3 ADD PRIMARY KEY (a, b, c);
-- probes: existing rows picked at random, stored in random order (the
-- probe query reads the first N in storage order)
CREATE TABLE pcs1 (i int4 NOT NULL, a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL);
INSERT INTO pcs1 SELECT row_number() OVER (), r / 10, r % 10, ((r::int8 * 7919) % 1000)::int4
  FROM (SELECT floor(random() * 1000000)::int4 AS r FROM generate_series(1, 200000)) s;
CREATE TABLE pcs2 (i int4 NOT NULL, a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL);
INSERT INTO pcs2 SELECT row_number() OVER (), a, b, c
  FROM (SELECT a, b, c FROM tcs2 ORDER BY random() LIMIT 200000) s;
CREATE TABLE pcs3 (i int4 NOT NULL, a int4 NOT NULL, b int4 NOT NULL, c int4 NOT NULL);
INSERT INTO pcs3 SELECT row_number() OVER (), a, b, c
  FROM (SELECT a, b, c FROM tcs3 ORDER BY random() LIMIT 200000) s;
COMMIT;
VACUUM (FREEZE, ANALYZE) tcs1, tcs2, tcs3, pcs1, pcs2, pcs3;
