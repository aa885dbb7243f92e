-- bench/workloads/data_int4.sql - data shared by probe_int4 and range_scan.
-- Built once per bench run through psql, in one session (setseed makes the
-- probe keys deterministic).
--
--   t4  2,000,000 rows, id int4 PRIMARY KEY (1..2,000,000), payload v
--   p4  500,000 probe keys, pseudo-random over 1..2,000,000, in order of i
--
-- With other values of its @param placeholders ({ROWS} rows, tables
-- t4{SFX} and p4{SFX}) it is data_int4_100k (t4s, p4s: 100,000 rows) and
-- data_int4_20m (t4x, p4x: 20,000,000 rows), for probe_int4_100k and
-- probe_int4_20m (INSTANCES in bench/lib/workloads.py).
--
-- @param ROWS 2000000
-- @param SFX
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE t4{SFX} (id int4 NOT NULL, v int4 NOT NULL);
INSERT INTO t4{SFX} SELECT i, i % 1000 FROM generate_series(1, {ROWS}) i;
ALTER TABLE t4{SFX} ADD PRIMARY KEY (id);
SELECT setseed(0.4242);
CREATE TABLE p4{SFX} (i int4 NOT NULL, k int4 NOT NULL);
INSERT INTO p4{SFX} SELECT i, 1 + floor(random() * {ROWS})::int4 FROM generate_series(1, 500000) i;
COMMIT;
VACUUM (FREEZE, ANALYZE) t4{SFX}, p4{SFX};
