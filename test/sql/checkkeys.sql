--
-- Scan-key checks (_bt_checkkeys) on compiled code, PostgreSQL 15, 17 and
-- 18: every tuple an index scan reads is tested against the scan's keys by
-- the compiled check, which verify compares with the server's own (the
-- result and continuescan).  Range scans forward and backward with every
-- operator, equality prefixes, DESC and NULLS FIRST columns, cross-type
-- operators, NULLs in tuples and IS [NOT] NULL keys (declined), row
-- comparisons (declined), arrays (the server's own on 17 and 18), cursors
-- that change direction, and the inline kinds (integers, floats with NaN,
-- dates, timestamps, uuid, numeric, text in C and in another collation).
-- On 19 _bt_checkkeys is static: the module's leaf read calls the compiled
-- check, and verify compares each page it reads with the server's read.
--
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- Checks of one index in this backend: compiled (where the server's
-- version has them) and verified.
CREATE FUNCTION check_state(idx regclass, OUT state text, OUT as_expected boolean)
LANGUAGE sql AS $$
    SELECT s.state,
           s.jit_checks > 0 AND s.verified_checks > 0
      FROM btree_jit_index_stats() s WHERE s.indexrelid = idx
$$;

CREATE TABLE ck (id int4 PRIMARY KEY, g int8, f float8, d date,
                 ts timestamptz, u uuid, n numeric, t text COLLATE "C",
                 tl text COLLATE "en-x-icu", pad text);
INSERT INTO ck
SELECT g, g % 40,
       CASE WHEN g % 211 = 0 THEN 'NaN'::float8 WHEN g % 97 = 0 THEN NULL
            ELSE (g % 500) / 7.0 END,
       date '2020-01-01' + g % 900,
       timestamptz '2021-01-01 00:00+00' + (g % 3000) * interval '37 min',
       md5((g % 2500)::text)::uuid,
       CASE WHEN g % 113 = 0 THEN NULL ELSE (g % 700) * 1.25 - 300 END,
       md5((g % 1500)::text),
       md5((g % 1200)::text),
       repeat('p', g % 10)
  FROM (SELECT g FROM generate_series(1, 40000) g ORDER BY md5(g::text)) s;
CREATE INDEX ck_g_d ON ck (g, d DESC, id);
CREATE INDEX ck_f ON ck (f NULLS FIRST);
CREATE INDEX ck_ts ON ck (ts DESC);
CREATE INDEX ck_u ON ck (u);
CREATE INDEX ck_n ON ck (n, id);
CREATE INDEX ck_t ON ck (t, id) INCLUDE (pad);
CREATE INDEX ck_tl ON ck (tl);
ANALYZE ck;

-- Every operator, both directions, on the primary key; LIMIT stops scans
-- part-way through a page.
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT id FROM ck WHERE id BETWEEN 100 AND 190 ORDER BY id',
    'SELECT id FROM ck WHERE id BETWEEN 100 AND 190 ORDER BY id DESC',
    'SELECT id FROM ck WHERE id > 39950 ORDER BY id',
    'SELECT id FROM ck WHERE id >= 39950 ORDER BY id DESC',
    'SELECT id FROM ck WHERE id < 60 ORDER BY id DESC',
    'SELECT id FROM ck WHERE id <= 60 ORDER BY id',
    'SELECT id FROM ck WHERE id = 777',
    'SELECT id FROM ck WHERE id > 500 AND id < 505 ORDER BY id DESC',
    'SELECT id FROM ck WHERE id >= 1000 ORDER BY id LIMIT 3',
    'SELECT id FROM ck WHERE id <= 1000 ORDER BY id DESC LIMIT 3',
    'SELECT id FROM ck WHERE id > 10 AND id < 5',
    'SELECT id FROM ck WHERE id = ANY (ARRAY[5, 77, 4000, 39999, 50000]) ORDER BY id',
    'SELECT id FROM ck WHERE id = ANY (ARRAY[5, 77, 4000]) ORDER BY id DESC',
    'SELECT id FROM ck WHERE id > 20000::int8 AND id <= 20020::int2 ORDER BY id',
    'SELECT id FROM ck WHERE id < 30::int8 ORDER BY id DESC'
]);
SELECT * FROM check_state('ck_pkey');

-- Three columns with an equality prefix, a DESC middle column and a
-- trailing key: required and non-required keys in both directions.
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT g, d, id FROM ck WHERE g = 7 ORDER BY g, d DESC, id',
    'SELECT g, d, id FROM ck WHERE g = 7 ORDER BY g DESC, d, id DESC',
    'SELECT g, d, id FROM ck WHERE g = 7 AND d > ''2021-06-01'' ORDER BY g, d DESC, id',
    'SELECT g, d, id FROM ck WHERE g = 7 AND d <= ''2021-06-01'' ORDER BY g DESC, d, id DESC',
    'SELECT g, d, id FROM ck WHERE g = 7 AND d = ''2021-06-01'' AND id > 100',
    'SELECT g, d, id FROM ck WHERE g >= 38 AND id < 500 ORDER BY g, d DESC, id',
    'SELECT g, d, id FROM ck WHERE g < 2 AND d > ''2022-01-01'' ORDER BY g DESC, d, id DESC',
    'SELECT g, id FROM ck WHERE g = 3::int4 AND id = ANY (ARRAY[3, 43, 83, 123]) ORDER BY id',
    'SELECT g, d FROM ck WHERE g = 9 AND d > ''2020-03-01''::timestamp LIMIT 4',
    'SELECT count(*) FROM ck WHERE g = 11 AND d < ''2020-09-01'''
]);
SELECT * FROM check_state('ck_g_d');

-- Row comparisons are the server's own (declined), as is every tuple
-- with a NULL and every IS [NOT] NULL key.
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT g, d, id FROM ck WHERE (g, d) > (37, ''2020-05-01'') ORDER BY g, d DESC, id LIMIT 20',
    'SELECT f FROM ck WHERE f IS NULL',
    'SELECT count(*) FROM ck WHERE f IS NOT NULL',
    'SELECT f FROM ck WHERE f > 70 ORDER BY f',
    'SELECT f FROM ck WHERE f < 1 ORDER BY f DESC',
    'SELECT count(*) FROM ck WHERE f = ''NaN''',
    'SELECT count(*) FROM ck WHERE f >= ''NaN''',
    'SELECT f FROM ck WHERE f > 71::float4 ORDER BY f DESC',
    'SELECT count(*) FROM ck WHERE f = 0 OR f = -0.0',
    'SELECT count(*) FROM ck WHERE n > 100 AND n < 200',
    'SELECT n, id FROM ck WHERE n = 0 ORDER BY n DESC, id DESC',
    'SELECT count(*) FROM ck WHERE n IS NULL',
    'SELECT n FROM ck WHERE n >= 570 ORDER BY n LIMIT 5'
]);
SELECT * FROM check_state('ck_f');
SELECT * FROM check_state('ck_n');

-- Timestamps in a DESC index, uuid, text in C and in an ICU collation
-- (the last called, not inline).
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT ts FROM ck WHERE ts > ''2021-01-02 00:00+00'' AND ts < ''2021-01-02 06:00+00'' ORDER BY ts',
    'SELECT ts FROM ck WHERE ts >= ''2021-02-01 00:00+00'' ORDER BY ts DESC LIMIT 7',
    'SELECT count(*) FROM ck WHERE ts < ''2021-01-01 12:00''::timestamp',
    'SELECT u FROM ck WHERE u > ''f0000000-0000-0000-0000-000000000000'' ORDER BY u',
    'SELECT u FROM ck WHERE u <= ''0fffffff-ffff-ffff-ffff-ffffffffffff'' ORDER BY u DESC',
    'SELECT count(*) FROM ck WHERE u = md5(''17'')::uuid',
    'SELECT t, id FROM ck WHERE t = md5(''42'') ORDER BY t, id',
    'SELECT t FROM ck WHERE t > ''fff'' ORDER BY t DESC',
    'SELECT t FROM ck WHERE t >= ''a0'' AND t < ''a1'' ORDER BY t',
    'SELECT tl FROM ck WHERE tl > ''ff'' ORDER BY tl',
    'SELECT count(*) FROM ck WHERE tl = md5(''99'')'
]);
SELECT * FROM check_state('ck_ts');
SELECT * FROM check_state('ck_u');
SELECT * FROM check_state('ck_t');
SELECT * FROM check_state('ck_tl');

-- A cursor that reads forward, then backward, then forward again: the
-- scan direction changes between calls of the same scan.
BEGIN;
DECLARE c SCROLL CURSOR FOR
    SELECT id FROM ck WHERE id > 30000 AND id <= 30400 ORDER BY id;
FETCH 3 FROM c;
FETCH FORWARD 300 FROM c \g /dev/null
FETCH BACKWARD 2 FROM c;
FETCH BACKWARD ALL FROM c \g /dev/null
FETCH FORWARD 2 FROM c;
FETCH LAST FROM c;
FETCH RELATIVE 1 FROM c;
COMMIT;

-- Index-only scans test their keys the same way.
SET enable_indexscan = off;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT id FROM ck WHERE id BETWEEN 5000 AND 5600',
    'SELECT g, d FROM ck WHERE g = 17 AND d >= ''2021-01-01'''
]);
RESET enable_indexscan;

-- Long scans, where most pages read are not the scan's first: on 17 the
-- server then skips the keys its precheck of the page's last tuple found
-- to hold (and, after a match, those required the other way), on 18 the
-- keys before startikey, and the compiled check skips the same ones.  A
-- key that is required in neither direction (id < 20000 after a range on
-- g) is never skipped and fails on pages whose other keys were skipped.
-- On 19 the server's read calls no compiled check under verify, and the
-- module's tests only the ends of a run of matches (the page shortcut):
-- there the leaf pages the module read, and verify compared, are counted.
CREATE TEMP TABLE before_long AS
  SELECT sum(jit_checks) AS jit_checks, sum(verified_checks) AS verified_checks,
         sum(jit_leafreads) AS jit_leafreads,
         sum(verified_leafreads) AS verified_leafreads
    FROM btree_jit_index_stats()
   WHERE indexrelid IN ('ck_pkey'::regclass, 'ck_g_d'::regclass);
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT id FROM ck WHERE id BETWEEN 1000 AND 21000 ORDER BY id',
    'SELECT id FROM ck WHERE id BETWEEN 1000 AND 21000 ORDER BY id DESC',
    'SELECT id FROM ck WHERE id > 20000 ORDER BY id',
    'SELECT id FROM ck WHERE id < 20000 ORDER BY id DESC',
    'SELECT g, d, id FROM ck WHERE g BETWEEN 3 AND 30 AND id < 20000 ORDER BY g, d DESC, id',
    'SELECT g, d, id FROM ck WHERE g BETWEEN 3 AND 30 AND id < 20000 ORDER BY g DESC, d, id DESC',
    'SELECT g, d, id FROM ck WHERE g >= 20 AND d < ''2021-06-01'' ORDER BY g, d DESC, id'
]);
SET enable_indexscan = off;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT id FROM ck WHERE id BETWEEN 1000 AND 21000',
    'SELECT g, d FROM ck WHERE g BETWEEN 3 AND 30 AND d > ''2021-01-01'''
]);
RESET enable_indexscan;
SELECT CASE WHEN current_setting('server_version_num')::int < 190000
            THEN s.jit_checks > b.jit_checks + 40000
            ELSE s.jit_leafreads > b.jit_leafreads + p.pages
       END AS long_scans_compiled,
       CASE WHEN current_setting('server_version_num')::int < 190000
            THEN s.verified_checks > b.verified_checks + 40000
            ELSE s.verified_leafreads > b.verified_leafreads + p.pages
       END AS long_scans_verified
  FROM (SELECT sum(jit_checks) AS jit_checks, sum(verified_checks) AS verified_checks,
               sum(jit_leafreads) AS jit_leafreads,
               sum(verified_leafreads) AS verified_leafreads
          FROM btree_jit_index_stats()
         WHERE indexrelid IN ('ck_pkey'::regclass, 'ck_g_d'::regclass)) s,
       before_long b,
       (SELECT pg_relation_size('ck_pkey') / current_setting('block_size')::int
               AS pages) p;

-- A merge join over the index: the outer keys repeat and the inner ones
-- are not unique, so the join marks the inner scan's position and
-- restores it for each repeat, forward and backward (the second plan
-- scans the index backward).
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT v.x, c.g, c.d, c.id FROM unnest(ARRAY[3, 3, 3, 17, 17, 30, 38]) v(x)
  JOIN ck c ON c.g = v.x ORDER BY v.x;
EXPLAIN (COSTS OFF)
SELECT v.x, c.g, c.d, c.id FROM unnest(ARRAY[3, 3, 3, 17, 17, 30, 38]) v(x)
  JOIN ck c ON c.g = v.x ORDER BY v.x DESC;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT v.x, c.g, c.d, c.id FROM unnest(ARRAY[3, 3, 3, 17, 17, 30, 38]) v(x) JOIN ck c ON c.g = v.x ORDER BY v.x, c.d DESC, c.id',
    'SELECT v.x, c.g, c.d, c.id FROM unnest(ARRAY[3, 3, 3, 17, 17, 30, 38]) v(x) JOIN ck c ON c.g = v.x ORDER BY v.x DESC, c.d, c.id DESC',
    'SELECT v.x, c.g, c.d FROM unnest(ARRAY[3, 3, 3, 17, 17, 30]) v(x) JOIN (SELECT g, d FROM ck WHERE d > ''2021-01-01'') c ON c.g = v.x ORDER BY v.x, c.d'
]);
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_material;

-- Writes while scanning: an UPDATE that scans the index it modifies, and
-- amcheck over every index afterwards.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
UPDATE ck SET g = g + 100 WHERE id BETWEEN 2000 AND 2600;
DELETE FROM ck WHERE id > 39000 AND id % 2 = 0;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT g, count(*) FROM ck WHERE g > 100 GROUP BY g ORDER BY g',
    'SELECT id FROM ck WHERE id > 38990 ORDER BY id DESC'
]);
SELECT c.relname, bt_index_parent_check(c.oid, true)
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indrelid = 'ck'::regclass ORDER BY c.relname;

-- Scans with array keys: on 15 the arrays are advanced outside
-- _bt_checkkeys, which the compiled check answers; on 17 and 18 inside
-- it, and the module's leaf read calls the compiled check, handing the
-- server's the tuples at which the arrays may advance (a skip scan of a
-- non-leading column on 18 is the server's); on 19 the server's own
-- answers every tuple of such a scan.  The results are compared all the
-- same.
CREATE TEMP TABLE before_arrays AS
  SELECT jit_checks, verified_checks FROM btree_jit_index_stats()
   WHERE indexrelid = 'ck_pkey'::regclass;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT id FROM ck WHERE id = ANY (ARRAY[5, 77, 4000, 39999]) ORDER BY id',
    'SELECT id FROM ck WHERE id = ANY (ARRAY[12, 13, 14]) ORDER BY id DESC'
]);
SELECT (s.jit_checks > b.jit_checks) =
       (current_setting('server_version_num')::int < 190000) AS array_checks_as_expected
  FROM btree_jit_index_stats() s, before_arrays b
 WHERE s.indexrelid = 'ck_pkey'::regclass;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT count(*) FROM ck WHERE d = ''2021-03-03''',
    'SELECT g, d, id FROM ck WHERE d >= ''2022-06-01'' AND id < 3000 ORDER BY g, d DESC, id'
]);

-- Off: the server's own function and no new compiled checks.
SET btree_jit.enabled = off;
CREATE TEMP TABLE before AS
  SELECT jit_checks FROM btree_jit_index_stats() WHERE indexrelid = 'ck_pkey'::regclass;
SELECT count(*) FROM ck WHERE id BETWEEN 10 AND 900;
SET btree_jit.enabled = on;
SELECT s.jit_checks = b.jit_checks AS no_checks_while_off
  FROM btree_jit_index_stats() s, before b WHERE s.indexrelid = 'ck_pkey'::regclass;

DROP TABLE ck;
DROP FUNCTION check_state(regclass);
