-- bench/workloads/data_int4_100k.sql - data_int4.sql's shape at 100,000 rows,
-- for probe_int4_100k (bench/run --working-set).  Built once per bench run.
--
--   t4s  100,000 rows, id int4 PRIMARY KEY (1..100,000), payload v
--   p4s  500,000 probe keys, pseudo-random over 1..100,000, in order of i
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE t4s (id int4 NOT NULL, v int4 NOT NULL);
INSERT INTO t4s SELECT i, i % 1000 FROM generate_series(1, 100000) i;
ALTER TABLE t4s ADD PRIMARY KEY (id);
SELECT setseed(0.4242);
CREATE TABLE p4s (i int4 NOT NULL, k int4 NOT NULL);
INSERT INTO p4s SELECT i, 1 + floor(random() * 100000)::int4 FROM generate_series(1, 500000) i;
COMMIT;
VACUUM (FREEZE, ANALYZE) t4s, p4s;
