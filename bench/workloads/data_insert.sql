-- bench/workloads/data_insert.sql - base rows for insert_random.
--
--   ins_base  100,000 rows for i = 1..100,000:
--             k = i * 1000003 mod (2^31 - 1)  (a permutation: distinct,
--                 pseudo-random over the int4 range)
--             v = i * 7919 mod 50000           (secondary key, duplicates)
CREATE TABLE ins_base (k int4 NOT NULL, v int4 NOT NULL);
INSERT INTO ins_base SELECT (i::int8 * 1000003 % 2147483647)::int4, (i * 7919) % 50000
  FROM generate_series(1, 100000) i;
VACUUM (FREEZE, ANALYZE) ins_base;
