-- bench/workloads/data_asof.sql - data for probe_asof: a time series, the
-- table of Floris Van Nee's 2019 pgsql-hackers thread "Optimize single
-- tuple fetch from nbtree index" (an index on (k, ts DESC), the state of
-- key k as of a time t).
--
--   ta  2,000,000 rows (k int4, ts timestamptz, v int4): 2,000 keys (k =
--       0..1,999), 1,000 timestamps each: the j-th (j = 0..999) at minute
--       j after 2026-01-01 00:00 UTC plus (7k + 13j) mod 60 seconds, so
--       (k, ts) is unique and the keys' series interleave unevenly; the
--       rows loaded in random order, then the index ta_k_ts on (k, ts
--       DESC) built (default fillfactor: about 260 tuples a leaf, so a key
--       spans about four leaves)
--   pa  500,000 probes (k, t), each drawn at random: k an existing key, t
--       an instant (with microseconds) from 00:01 to 16:40 of that day, so
--       every probe finds a row (each key has a timestamp in its first
--       minute); k also as int8 (k8: the value an application with 64-bit
--       parameters sends, a cross-type key int4 = int8)
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
SELECT setseed(0.3131);
CREATE TABLE ta (k int4 NOT NULL, ts timestamptz NOT NULL, v int4 NOT NULL);
INSERT INTO ta
SELECT k, timestamptz '2026-01-01 00:00:00+00' + (j * 60 + (7 * k + 13 * j) % 60) * interval '1 second', j
  FROM generate_series(0, 1999) k, generate_series(0, 999) j
 ORDER BY random();
CREATE INDEX ta_k_ts ON ta (k, ts DESC);
CREATE TABLE pa (i int4 NOT NULL, k int4 NOT NULL, k8 int8 NOT NULL, t timestamptz NOT NULL);
INSERT INTO pa SELECT i, k, k, t
  FROM (SELECT i, floor(random() * 2000)::int4 AS k,
               timestamptz '2026-01-01 00:01:00+00' + random() * interval '999 minutes' AS t
          FROM generate_series(1, 500000) i) s;
COMMIT;
VACUUM (FREEZE, ANALYZE) ta, pa;
