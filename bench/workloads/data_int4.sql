-- bench/workloads/data_int4.sql - data shared by probe_int4 and range_scan.
-- Built once per bench run through psql, in one session (setseed makes the
-- probe keys deterministic).
--
--   t4  2,000,000 rows, id int4 PRIMARY KEY (1..2,000,000), payload v
--   p4  500,000 probe keys, pseudo-random over 1..2,000,000, in order of i
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE t4 (id int4 NOT NULL, v int4 NOT NULL);
INSERT INTO t4 SELECT i, i % 1000 FROM generate_series(1, 2000000) i;
ALTER TABLE t4 ADD PRIMARY KEY (id);
SELECT setseed(0.4242);
CREATE TABLE p4 (i int4 NOT NULL, k int4 NOT NULL);
INSERT INTO p4 SELECT i, 1 + floor(random() * 2000000)::int4 FROM generate_series(1, 500000) i;
COMMIT;
VACUUM (FREEZE, ANALYZE) t4, p4;
