-- bench/workloads/data_int8.sql - data for probe_int8.
--
--   t8  2,000,000 rows, id int8 PRIMARY KEY: i * 4294967311 (a prime above
--       2^32, so the keys use all 64 bits), payload v
--   p8  500,000 probe keys, pseudo-random over the keys of t8
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE t8 (id int8 NOT NULL, v int4 NOT NULL);
INSERT INTO t8 SELECT i::int8 * 4294967311, i % 1000 FROM generate_series(1, 2000000) i;
ALTER TABLE t8 ADD PRIMARY KEY (id);
SELECT setseed(0.4343);
CREATE TABLE p8 (i int4 NOT NULL, k int8 NOT NULL);
INSERT INTO p8 SELECT i, (1 + floor(random() * 2000000))::int8 * 4294967311 FROM generate_series(1, 500000) i;
COMMIT;
VACUUM (FREEZE, ANALYZE) t8, p8;
