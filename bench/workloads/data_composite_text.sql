-- bench/workloads/data_composite_text.sql - data for probe_composite_text.
--
--   tct  1,000,000 rows, PRIMARY KEY (region, customer, n): region text
--        COLLATE "C" with 8 values sharing a 24-byte prefix, customer text
--        COLLATE "C" with 500 values ('customer-' and a zero-padded
--        number), n int4 unique within (region, customer); loaded in a
--        random order
--   pct  200,000 probe keys of pseudo-random existing rows
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
CREATE TABLE tct (region text COLLATE "C" NOT NULL, customer text COLLATE "C" NOT NULL,
                  n int4 NOT NULL, v int4 NOT NULL);
SELECT setseed(0.2718);
INSERT INTO tct
SELECT 'eu-central-datacenter-00' || (i % 8), 'customer-' || lpad(((i / 8) % 500)::text, 5, '0'),
       i / 4000, i % 1000
  FROM generate_series(0, 999999) i ORDER BY random();
ALTER TABLE tct ADD PRIMARY KEY (region, customer, n);
CREATE TABLE pct (i int4 NOT NULL, region text COLLATE "C" NOT NULL,
                  customer text COLLATE "C" NOT NULL, n int4 NOT NULL);
INSERT INTO pct
SELECT i, 'eu-central-datacenter-00' || (r % 8), 'customer-' || lpad(((r / 8) % 500)::text, 5, '0'), r / 4000
  FROM (SELECT i, floor(random() * 1000000)::int4 AS r FROM generate_series(1, 200000) i) s;
COMMIT;
VACUUM (FREEZE, ANALYZE) tct, pct;
