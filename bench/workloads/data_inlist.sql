-- bench/workloads/data_inlist.sql - data for probe_inlist: IN-lists and
-- = ANY($1) arrays, as ORMs send them to load related rows.
--
--   pl10  50,000 lists of 10 keys of t4's primary key (data_int4: ids
--         1..2,000,000), each key drawn at random (unsorted, a repeat
--         possible), as int4[] (ks) and as int8[] (ks8: the array an
--         application with 64-bit parameters binds, a cross-type key
--         int4 = ANY (int8[]))
--   tb    2,000,000 rows, PRIMARY KEY (a int4, b int4): a = 0..999, b =
--         0..1,999 in steps of 1 (i = a * 2,000 + b), rows loaded in
--         random order
--   pl100 50,000 lists (a, bs): a at random; bs 100 distinct values of b,
--         st + k * sp (mod 2,000) for a random start st and a random step
--         sp prime to 2,000, k = 0..99 in a scrambled order (the server
--         sorts the array; from 17 on, one descent can serve many of its
--         elements)
--   pl3   50,000 lists of 3 random keys k of data_asof's ta (0..1,999: each
--         key has 1,000 rows, about four leaf pages of ta_k_ts)
-- one transaction: with wal_level = minimal the bulk load skips WAL
BEGIN;
SELECT setseed(0.5151);
CREATE TABLE pl10 (i int4 NOT NULL, ks int4[] NOT NULL, ks8 int8[] NOT NULL);
INSERT INTO pl10
SELECT i, ks, ks::int8[]
  FROM (SELECT i, ARRAY(SELECT 1 + floor(random() * 2000000)::int4
                          FROM generate_series(1, 10) j
                         WHERE j > i * 0) AS ks
          FROM generate_series(1, 50000) i) s;
CREATE TABLE tb (a int4 NOT NULL, b int4 NOT NULL, v int4 NOT NULL);
INSERT INTO tb SELECT i / 2000, i % 2000, i % 1000
  FROM generate_series(0, 1999999) i ORDER BY random();
ALTER TABLE tb ADD PRIMARY KEY (a, b);
CREATE TABLE pl100 (i int4 NOT NULL, a int4 NOT NULL, bs int4[] NOT NULL);
INSERT INTO pl100
SELECT i, a, ARRAY(SELECT (st + ((j * 37) % 100) * sp) % 2000
                     FROM generate_series(0, 99) j)
  FROM (SELECT i, floor(random() * 1000)::int4 AS a,
               floor(random() * 2000)::int4 AS st,
               10 * floor(random() * 200)::int4
               + (ARRAY[1, 3, 7, 9])[1 + floor(random() * 4)::int4] AS sp
          FROM generate_series(1, 50000) i) s;
CREATE TABLE pl3 (i int4 NOT NULL, ks int4[] NOT NULL);
INSERT INTO pl3
SELECT i, ARRAY[floor(random() * 2000)::int4, floor(random() * 2000)::int4,
                floor(random() * 2000)::int4]
  FROM generate_series(1, 50000) i;
COMMIT;
VACUUM (FREEZE, ANALYZE) tb, pl10, pl100, pl3;
