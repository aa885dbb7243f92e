-- bench/workloads/data_insert.sql - base rows for insert_random.
--
--   ins_base  100,000 rows for i = 1..100,000:
--             k = i * 1000003 mod (2^31 - 1)  (a permutation: distinct,
--                 pseudo-random over the int4 range)
--             v = i * 7919 mod 50000           (secondary key, duplicates)
BEGIN;
CREATE TABLE ins_base (k int4 NOT NULL, v int4 NOT NULL);
INSERT INTO ins_base SELECT (i::int8 * 1000003 % 2147483647)::int4, (i::int8 * 7919 % 50000)::int4
  FROM generate_series(1, 100000) i;
-- ins: what the measured inserts go into (rebuilt like this before every
-- timing round; instruction counts use it as built here)
CREATE TABLE ins AS SELECT k, v FROM ins_base;
ALTER TABLE ins ADD PRIMARY KEY (k);
CREATE INDEX ins_v ON ins (v);
COMMIT;
VACUUM (FREEZE, ANALYZE) ins_base, ins;
