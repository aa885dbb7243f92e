-- bench/workloads/data_int4_20m.sql - data_int4.sql's shape at 20,000,000 rows,
-- for probe_int4_20m (bench/run --working-set).  Built once per bench run.
--
--   t4x  20,000,000 rows, id int4 PRIMARY KEY (1..20,000,000), payload v
--   p4x  500,000 probe keys, pseudo-random over 1..20,000,000, in order of i
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE t4x (id int4 NOT NULL, v int4 NOT NULL);
INSERT INTO t4x SELECT i, i % 1000 FROM generate_series(1, 20000000) i;
ALTER TABLE t4x ADD PRIMARY KEY (id);
SELECT setseed(0.4242);
CREATE TABLE p4x (i int4 NOT NULL, k int4 NOT NULL);
INSERT INTO p4x SELECT i, 1 + floor(random() * 20000000)::int4 FROM generate_series(1, 500000) i;
COMMIT;
VACUUM (FREEZE, ANALYZE) t4x, p4x;
