--
-- The leaf read (_bt_readpage; the module's own on 15, 17, 18 and 19).
-- What its walk must get right beyond the keys: posting
-- lists (a deduplicated index), index-only scans (the tuples copied, a
-- posting list's key part only), both directions, LIMIT 1 and "as of"
-- lookups, and dead items, which an earlier scan marks and a later one
-- skips (a backward scan still tests a dead first item).  First with
-- verify on: every leaf read is also run by the server, from the same scan
-- position, and every byte of the position and of the copied tuples must
-- agree.  Then with verify off, so that the rows come from the module's
-- walk alone, compared with the module off.
--
SET btree_jit.compile_threshold = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE lr (k int4 NOT NULL, v int4 NOT NULL, pad text);
INSERT INTO lr
SELECT g % 50, g, repeat('x', g % 9) FROM generate_series(1, 30000) g;
CREATE INDEX lr_k ON lr (k);
CREATE INDEX lr_kv ON lr (k, v DESC) INCLUDE (pad);
VACUUM ANALYZE lr;

CREATE TABLE lr_queries (q text);
INSERT INTO lr_queries VALUES
  ('SELECT k, count(*) FROM lr WHERE k BETWEEN 10 AND 20 GROUP BY k'),
  ('SELECT k FROM lr WHERE k >= 47'),
  ('SELECT k FROM lr WHERE k < 3 ORDER BY k DESC'),
  ('SELECT k FROM lr WHERE k <= 30 ORDER BY k DESC LIMIT 5'),
  ('SELECT k, v, pad FROM lr WHERE k = 7 AND v > 20000'),
  ('SELECT k, v, pad FROM lr WHERE k = 7 ORDER BY k DESC, v LIMIT 40'),
  ('SELECT v FROM lr WHERE k = 9 AND v <= 15000 ORDER BY k, v DESC LIMIT 1'),
  ('SELECT v FROM lr WHERE k = 9 AND v >= 15000 ORDER BY k DESC, v LIMIT 1'),
  ('SELECT v FROM lr WHERE k = 49 AND v <= 100 ORDER BY k, v DESC LIMIT 1'),
  ('SELECT v, k FROM lr WHERE k IN (3, 4) AND v < 500'),
  ('SELECT k, v FROM lr WHERE k = ANY (ARRAY[1, 7, 7, 20, 49]) AND v > 25000 ORDER BY k DESC, v'),
  ('SELECT k, v, pad FROM lr WHERE k IN (2, 5, 11, 48) AND v BETWEEN 5000 AND 9000'),
  ('SELECT v FROM lr WHERE k = ANY (ARRAY[40, 3]::int8[]) ORDER BY k, v DESC LIMIT 30'),
  ('SELECT count(*) FROM lr WHERE k = 12'),
  ('SELECT v FROM lr WHERE k = 12 ORDER BY k DESC, v LIMIT 20'),
  ('SELECT count(*), sum(v), min(pad) FROM (SELECT v, pad FROM lr WHERE k BETWEEN 5 AND 45 ORDER BY k DESC, v) s'),
  ('SELECT count(*), sum(v) FROM (SELECT v FROM lr WHERE k BETWEEN 5 AND 45 ORDER BY k, v DESC) s');

-- check_queries without the module's verify, and with it, over the
-- queries of a table (lr_queries unless named), index-only scans allowed
-- unless said
CREATE FUNCTION lr_check(verify boolean, queries text DEFAULT 'lr_queries',
                         indexonly boolean DEFAULT true,
                         OUT checked int, OUT failures text[])
LANGUAGE plpgsql AS $$
DECLARE
    qs text[];
BEGIN
    PERFORM set_config('btree_jit.verify', verify::text, true);
    PERFORM set_config('enable_indexonlyscan', indexonly::text, true);
    EXECUTE format('SELECT array_agg(q) FROM %I', queries) INTO qs;
    SELECT c.checked, c.failures INTO checked, failures
      FROM check_queries(qs) c;
END $$;

SELECT * FROM lr_check(true);
SELECT * FROM lr_check(false);

-- dead items: delete every third row, let one scan of each index mark
-- them dead (no older snapshot can see them), then read again
DELETE FROM lr WHERE v % 3 = 0;
SET enable_indexonlyscan = off;
SELECT count(*) FROM lr WHERE k BETWEEN 0 AND 49;
SELECT count(*) FROM (SELECT pad FROM lr WHERE k >= 0 ORDER BY k DESC, v) s;
RESET enable_indexonlyscan;
SELECT * FROM lr_check(true);
SELECT * FROM lr_check(false);

-- the leaf read ran compiled checks; the module read pages itself, and
-- under verify compared its reads with the server's
SELECT s.jit_checks > 0 AS checks_as_expected,
       s.jit_leafreads > 0 AND s.verified_leafreads > 0 AND
       s.verified_leafreads < s.jit_leafreads AS leafreads_as_expected
  FROM btree_jit_index_stats() s WHERE s.indexrelid = 'lr_kv'::regclass;

-- Integer keys as bounds (keybounds.c): keys of built-in integer
-- operators on columns at a fixed offset are tested as one interval per
-- column.  Cross-type keys (int2, int4, int8 on either side), the ends of
-- int8 (a > key at the greatest int8 and a < key at the least cannot be
-- written as inclusive bounds), keys on a later column alone, DESC
-- columns, tuples with NULLs (the compiled check's) and keys the bounds
-- refuse (IS NULL, row comparisons, a column after a text one).
CREATE TABLE kb (a int2, b int8, c int4, t text);
INSERT INTO kb
SELECT (g % 7 - 3)::int2,
       CASE WHEN g % 97 = 0 THEN NULL
            ELSE (g % 1013) * 9000000000000000 - 4500000000000000000 END,
       g, (g % 5)::text
  FROM generate_series(1, 20000) g;
INSERT INTO kb VALUES
  (32767, 9223372036854775807, 1, 'x'), (-32768, -9223372036854775808, 2, 'x'),
  (32767, 9223372036854775806, 3, 'y'), (-32768, -9223372036854775807, 4, 'y'),
  (0, NULL, NULL, NULL), (NULL, 5, 5, 'z');
CREATE INDEX kb_abc ON kb (a, b, c);
CREATE INDEX kb_b ON kb (b DESC, a);
CREATE INDEX kb_ta ON kb (t, a);
VACUUM ANALYZE kb;
CREATE TABLE kb_queries (q text);
INSERT INTO kb_queries VALUES
  ('SELECT a, b, c FROM kb WHERE a = 1 AND b BETWEEN -2000000000 AND 2000000000'),
  ('SELECT a, b, c FROM kb WHERE a = 1::int8 AND b > 0 ORDER BY a DESC, b DESC'),
  ('SELECT a, b, c FROM kb WHERE a = 2 AND b = 4500000000000000000 AND c > 100::int2'),
  ('SELECT a, b FROM kb WHERE a = 32767 AND b > 9223372036854775806'),
  ('SELECT a, b FROM kb WHERE a = 32767 AND b >= 9223372036854775807'),
  ('SELECT a, b FROM kb WHERE a = -32768 AND b < -9223372036854775807'),
  ('SELECT a, b FROM kb WHERE a = -32768 AND b <= -9223372036854775808 ORDER BY a DESC, b DESC'),
  ('SELECT a, b FROM kb WHERE b > 9223372036854775806 ORDER BY b'),
  ('SELECT a, b FROM kb WHERE b < -9223372036854775807 ORDER BY b DESC'),
  ('SELECT count(*) FROM kb WHERE a > -2 AND a < 2::int8'),
  ('SELECT count(*) FROM kb WHERE a >= 2 AND a <= 2 AND b < 0'),
  ('SELECT a, c FROM kb WHERE a > 2 AND c BETWEEN 100 AND 200'),
  ('SELECT count(*), sum(c) FROM kb WHERE c > 19990'),
  ('SELECT a, b FROM kb WHERE a = 0 AND b IS NULL'),
  ('SELECT a, b FROM kb WHERE a = 0 AND b IS NOT NULL AND b < -4000000000000000000'),
  ('SELECT a, b, c FROM kb WHERE (a, b) > (2, 4000000000000000000) AND a < 3'),
  ('SELECT a, b, c FROM kb WHERE a = ANY (ARRAY[-3, 1, 3]) AND b BETWEEN 0 AND 100000000000000000'),
  ('SELECT b, a FROM kb WHERE b BETWEEN -100000000000000000 AND 100000000000000000 ORDER BY b DESC'),
  ('SELECT b, a FROM kb WHERE b >= 4000000000000000000 AND a = 1 ORDER BY b'),
  ('SELECT t, a FROM kb WHERE t = ''3'' AND a BETWEEN -1 AND 1'),
  ('SELECT a, b, c FROM kb WHERE a IS NULL'),
  ('SELECT a, b, c FROM kb WHERE a = 3 AND b > 4400000000000000000 LIMIT 3');
SELECT * FROM lr_check(true, 'kb_queries');
SELECT * FROM lr_check(false, 'kb_queries');
SELECT * FROM lr_check(true, 'kb_queries', false);

-- a leaf read the module did not do is not counted: with the module off
-- no counter moves.  An index scan with array keys is read by the module
-- on 15, where the arrays advance between primitive scans, and on 17,
-- where the server's _bt_checkkeys is handed the tuples at which they may
-- advance; on 18 and 19 by the server: there it counts as a leaf read of
-- the server's, for array keys.
CREATE TEMP TABLE lr_before AS
  SELECT jit_leafreads, verified_leafreads, stock_leafreads,
         searches('lr_kv') AS searches
    FROM btree_jit_index_stats() WHERE indexrelid = 'lr_kv'::regclass;
SET btree_jit.enabled = off;
SELECT count(*) FROM lr WHERE k = 3 AND v BETWEEN 100 AND 2000;
SELECT s.jit_leafreads = b.jit_leafreads AND
       s.verified_leafreads = b.verified_leafreads AND
       s.stock_leafreads = b.stock_leafreads AS off_not_counted
  FROM btree_jit_index_stats() s, lr_before b
 WHERE s.indexrelid = 'lr_kv'::regclass;
RESET btree_jit.enabled;
SELECT count(*) FROM lr WHERE k = ANY (ARRAY[3, 4]) AND v BETWEEN 100 AND 2000;
-- (the array scan searched lr_kv: otherwise this proves nothing)
SELECT searches('lr_kv') > b.searches AS array_scan_used_lr_kv,
       CASE WHEN current_setting('server_version_num')::int < 190000
            THEN s.jit_leafreads > b.jit_leafreads AND
                 s.stock_leafreads = b.stock_leafreads
            ELSE s.jit_leafreads = b.jit_leafreads AND
                 s.stock_leafreads > b.stock_leafreads
       END AS array_scan_counted_as_expected
  FROM btree_jit_index_stats() s, lr_before b
 WHERE s.indexrelid = 'lr_kv'::regclass;
SELECT count(*) FROM lr WHERE k = 3 AND v BETWEEN 100 AND 2000;
SELECT s.jit_leafreads > b.jit_leafreads AS counted
  FROM btree_jit_index_stats() s, lr_before b
 WHERE s.indexrelid = 'lr_kv'::regclass;
DROP TABLE lr_before;

-- Parallel scans: the module reads their leaf pages too, handing the next
-- page to the other participants as the server's read does.  With the
-- leader not reading, the workers read every page (under verify, then
-- without it), the rows are the server's, and the workers' counts reach
-- the cluster's view as they exit while the leader's own do not move.
-- The workers run at the default compile threshold (they inherit the
-- leader's settings): a worker lives for one query, and opens the index at
-- its first leaf read and links the leader's cached code whatever the
-- threshold says.
RESET btree_jit.compile_threshold;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET parallel_leader_participation = off;
CREATE FUNCTION lr_reads(cluster boolean) RETURNS bigint
LANGUAGE sql AS $$
    SELECT CASE WHEN cluster THEN
        (SELECT coalesce(sum(c.jit_leafreads), 0)
           FROM btree_jit_index_counters() c
          WHERE c.dbid = (SELECT oid FROM pg_database
                           WHERE datname = current_database())
            AND c.indexrelid IN ('lr_k'::regclass::oid, 'lr_kv'::regclass::oid))
    ELSE
        (SELECT coalesce(sum(s.jit_leafreads), 0)
           FROM btree_jit_index_stats() s
          WHERE s.indexrelid IN ('lr_k'::regclass, 'lr_kv'::regclass))
    END
$$;
-- (this backend's counts so far reach the cluster's view first: a
-- transaction ending a second after its last flush flushes them)
DO $$ BEGIN PERFORM pg_sleep(1.1); END $$;
CREATE TEMP TABLE lrp_before AS
  SELECT lr_reads(true) AS cluster_reads, lr_reads(false) AS own_reads;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM lr WHERE k BETWEEN 5 AND 45;
SET btree_jit.verify = on;
SELECT count(*), sum(v) FROM lr WHERE k BETWEEN 5 AND 45;
RESET btree_jit.verify;
SELECT count(*), sum(v) FROM lr WHERE k BETWEEN 5 AND 45;
SET btree_jit.enabled = off;
SELECT count(*), sum(v) FROM lr WHERE k BETWEEN 5 AND 45;
RESET btree_jit.enabled;
-- (a worker flushes its counts as it exits: wait up to 10 s for them)
DO $$
BEGIN
    FOR i IN 1..100 LOOP
        EXIT WHEN lr_reads(true) > (SELECT cluster_reads FROM lrp_before);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
SELECT lr_reads(true) > b.cluster_reads AS workers_read_pages,
       lr_reads(false) = b.own_reads AS leader_read_none
  FROM lrp_before b;
-- A shape in no object cache: a parallel worker does not compile it (half
-- a second in each worker of each query), reads with the server's code,
-- and says why; the rows are the same.
CREATE TABLE lr_uncached (a int2, b int8, c int2);
INSERT INTO lr_uncached
  SELECT (g % 30000)::int2, g, (g % 7)::int2 FROM generate_series(1, 100000) g;
CREATE INDEX lr_uncached_cba ON lr_uncached (c DESC, b, a DESC NULLS LAST);
VACUUM ANALYZE lr_uncached;
EXPLAIN (COSTS OFF) SELECT count(*) FROM lr_uncached WHERE c = 3 AND b > 50;
SELECT count(*) FROM lr_uncached WHERE c = 3 AND b > 50;
DO $$
BEGIN
    FOR i IN 1..100 LOOP
        EXIT WHEN EXISTS (SELECT FROM btree_jit_indexes
                           WHERE indexname = 'lr_uncached_cba'
                             AND stock_leafreads > 0);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
SELECT state, reason, jit_leafreads, stock_leafreads > 0 AS read_by_server
  FROM btree_jit_indexes WHERE indexname = 'lr_uncached_cba';
SET btree_jit.enabled = off;
SELECT count(*) FROM lr_uncached WHERE c = 3 AND b > 50;
RESET btree_jit.enabled;
DROP TABLE lr_uncached;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_index_scan_size;
RESET parallel_leader_participation;
SET btree_jit.compile_threshold = 0;
DROP TABLE lrp_before;
DROP TABLE kb, kb_queries;
DROP FUNCTION lr_reads(boolean);

-- The page shortcut: when every key bounds the index order, a run of
-- matches is found by testing the page's last item (or by bisection) and
-- saved untested.  Runs of every length from 1 to 400 (a = floor(sqrt(g))), so
-- that runs end at every place on a page and bisection is exercised, NULLs
-- in both columns, an index NULLS FIRST on a and DESC on b, keys of both
-- directions, cross-type keys, and scans the shortcut must not take: a key
-- on b alone or after a range on a (not required: it may fail anywhere in
-- a run).
CREATE TABLE lrs (a int4, b int4);
INSERT INTO lrs
SELECT CASE WHEN g % 101 = 0 THEN NULL ELSE floor(sqrt(g))::int4 END,
       CASE WHEN g % 37 = 0 THEN NULL ELSE (g * 7919) % 5000 END
  FROM generate_series(1, 40000) g;
CREATE INDEX lrs_ab ON lrs (a NULLS FIRST, b DESC);
VACUUM ANALYZE lrs;
DELETE FROM lr_queries;
INSERT INTO lr_queries VALUES
  ('SELECT count(*), sum(b) FROM lrs WHERE a = 150'),
  ('SELECT b FROM lrs WHERE a = 199 ORDER BY a DESC, b'),
  ('SELECT b FROM lrs WHERE a = 7 AND b <= 2500 ORDER BY a, b DESC LIMIT 1'),
  ('SELECT b FROM lrs WHERE a = 180 AND b >= 1000 ORDER BY a DESC, b LIMIT 1'),
  ('SELECT a, b FROM lrs WHERE a = 120 AND b BETWEEN 1000 AND 3000'),
  ('SELECT count(*), sum(b) FROM lrs WHERE a < 60'),
  ('SELECT a, b FROM lrs WHERE a < 60 ORDER BY a DESC, b'),
  ('SELECT count(*), sum(b) FROM lrs WHERE a BETWEEN 30 AND 170'),
  ('SELECT a, b FROM lrs WHERE a > 170 ORDER BY a DESC, b LIMIT 900'),
  ('SELECT count(*) FROM lrs WHERE a IS NULL'),
  ('SELECT a, b FROM lrs WHERE a IS NOT NULL AND a <= 40 ORDER BY a DESC, b'),
  ('SELECT count(*), sum(a) FROM lrs WHERE a = 90::int8'),
  ('SELECT count(*), sum(b) FROM lrs WHERE a < 45::int2 AND a >= 3::int8'),
  ('SELECT a, b FROM lrs WHERE a = 100::int8 AND b < 2000::int2 ORDER BY a DESC, b'),
  ('SELECT count(*), sum(a) FROM lrs WHERE b BETWEEN 100 AND 300'),
  ('SELECT a, b FROM lrs WHERE a BETWEEN 20 AND 140 AND b > 4000 ORDER BY a DESC, b');

SELECT * FROM lr_check(true);
SELECT * FROM lr_check(false);

-- dead items in the runs and at the pages' edges, then again
DELETE FROM lrs WHERE b % 5 = 0 OR a % 11 = 0;
SET enable_indexonlyscan = off;
SELECT count(*) FROM lrs WHERE a >= 0;
SELECT count(*) FROM (SELECT b FROM lrs WHERE a >= 0 ORDER BY a DESC, b) s;
RESET enable_indexonlyscan;
SELECT * FROM lr_check(true);
SELECT * FROM lr_check(false);

-- a long run is read testing a few of its tuples, not each: the compiled
-- checks for reading a = 199's 319 live rows are fewer than 100
CREATE TEMP TABLE lrs_before AS
  SELECT coalesce(sum(s.jit_checks), 0) AS n
    FROM btree_jit_index_stats() s WHERE s.indexrelid = 'lrs_ab'::regclass;
SELECT count(*) FROM (SELECT b FROM lrs WHERE a = 199 ORDER BY a, b DESC) s;
SELECT s.jit_checks - b.n < 100 AS shortcut_as_expected
  FROM btree_jit_index_stats() s, lrs_before b
 WHERE s.indexrelid = 'lrs_ab'::regclass;

-- verify counts only the tests the compiled check answered: a tuple with
-- a NULL, which it hands to the server, is not a verified test.  Two
-- rows in three have one here (not deduplicated, so each is a tuple of
-- its own), and the server's read under verify tests every row while the
-- module's tests a few (the page shortcut).
CREATE TABLE lrn (a int4, b int4);
INSERT INTO lrn
SELECT g % 20, CASE WHEN g % 3 = 0 THEN g END FROM generate_series(1, 20000) g;
CREATE INDEX lrn_ab ON lrn (a, b) WITH (deduplicate_items = off);
VACUUM ANALYZE lrn;
SET btree_jit.verify = on;
SELECT count(*), count(b) FROM lrn WHERE a = 7;
RESET btree_jit.verify;
SELECT s.verified_checks > 0 AS checks_verified,
       s.verified_checks <= s.jit_checks AS verified_within_answered
  FROM btree_jit_index_stats() s WHERE s.indexrelid = 'lrn_ab'::regclass;

-- The checks and leaf reads that ran the server's code, by reason
-- (btree_jit_stock_calls, cluster-wide; this backend's counts reach it as
-- it is read): tuples with a NULL, which the compiled check hands to the
-- server's _bt_checkkeys (up to 18) or to the module's test in C (19); a
-- row comparison, likewise up to 18, and on 19 a page the server reads;
-- array keys: on 15 the module's read, on 17 and 18 the module's read
-- handing the tuples where the arrays advance to the server (key checks),
-- unless an array is not required (b's after a range on a: the server's
-- read; on 18 the range is a skip array on a), and on 19 a page the
-- server reads.
SELECT count(*) FROM lrn WHERE a = 3 AND b IS NULL;
EXPLAIN (COSTS OFF) SELECT count(*) FROM lrn WHERE (a, b) > (18, 100);
SELECT count(*) FROM lrn WHERE (a, b) > (18, 100);
SELECT count(*) FROM lrn WHERE a = ANY (ARRAY[2, 5]) AND b > 10;
SELECT coalesce(sum(calls) FILTER (WHERE reason = 'NULLs'), 0) > 0 AS nulls_counted,
       coalesce(sum(calls) FILTER (WHERE reason = 'row comparison'), 0) > 0 AS row_comparison_counted,
       CASE WHEN current_setting('server_version_num')::int < 170000
            THEN count(*) FILTER (WHERE reason = 'array keys') = 0
            WHEN current_setting('server_version_num')::int < 190000
            THEN coalesce(sum(calls) FILTER (WHERE reason = 'array keys' AND work = 'key check'), 0) > 0 AND
                 count(*) FILTER (WHERE reason = 'array keys' AND work = 'leaf read') = 0
            ELSE coalesce(sum(calls) FILTER (WHERE reason = 'array keys' AND work = 'leaf read'), 0) > 0
       END AS array_keys_as_expected,
       bool_and(indexname = 'lrn_ab' AND tablename = 'lrn') AS named
  FROM btree_jit_stock_calls WHERE indexrelid = 'lrn_ab'::regclass;
-- an array that is not required: from 17 on the server's read (on 18 and
-- 19 the range on a is a skip array)
SELECT count(*) FROM lrn WHERE a > 15 AND b = ANY (ARRAY[3, 6, 9999]);
SELECT CASE WHEN current_setting('server_version_num')::int < 170000
            THEN count(*) FILTER (WHERE reason = 'array keys') = 0
            ELSE coalesce(sum(calls) FILTER (WHERE reason IN ('array keys', 'skip arrays') AND work = 'leaf read'), 0) > 0
       END AS nonrequired_array_as_expected
  FROM btree_jit_stock_calls WHERE indexrelid = 'lrn_ab'::regclass;
-- the totals in btree_jit_indexes are the sums of the reasons
SELECT i.stock_checks + i.stock_leafreads = (SELECT sum(calls) FROM btree_jit_stock_calls c
                                              WHERE c.indexrelid = i.indexrelid) AS totals_match
  FROM btree_jit_indexes i WHERE i.indexrelid = 'lrn_ab'::regclass;

-- IN lists whose elements lie some twenty tuples apart (an IN list of a
-- parent's keys on a (parent, child) index): from 17 on the arrays advance
-- inside the read, and most tuples lie before the arrays' current
-- elements.  The module places such a tuple itself where every key up to
-- the failed one is a required = key, and moves past the tuples before the
-- elements: the server's _bt_checkkeys is handed about one tuple per
-- element here (where the arrays advance), not twenty.  Ascending and
-- DESC columns, both directions, int2, int4 and int8 keys of the column's
-- type and cross-type, and text (an ORDER procedure called, not compared
-- inline); rows compared with the module off, under verify and without.
CREATE TABLE lrin (a int4 NOT NULL, b int4 NOT NULL, c int8 NOT NULL,
                   t text COLLATE "C" NOT NULL, s int2 NOT NULL);
INSERT INTO lrin SELECT a, b, b * 3, lpad(b::text, 6, '0'), b
  FROM generate_series(1, 3) a, generate_series(1, 4000) b;
CREATE INDEX lrin_ab ON lrin (a, b);
CREATE INDEX lrin_ac_desc ON lrin (a, c DESC);
CREATE INDEX lrin_at ON lrin (a, t);
CREATE INDEX lrin_as ON lrin (a, s);
VACUUM ANALYZE lrin;
CREATE TABLE lrin_queries (q text);
INSERT INTO lrin_queries VALUES
  ('SELECT a, b FROM lrin WHERE a = 2 AND b IN (' ||
     (SELECT string_agg((i * 20)::text, ', ') FROM generate_series(1, 100) i) || ')'),
  ('SELECT a, b FROM lrin WHERE a = 2 AND b = ANY (ARRAY[' ||
     (SELECT string_agg((i * 37 + 5)::text, ', ') FROM generate_series(1, 90) i) ||
     ']::int8[]) ORDER BY a DESC, b DESC'),
  ('SELECT a, b FROM lrin WHERE a IN (1, 3) AND b = ANY (ARRAY[7, 700, 1400, 1401, 3999, 5000]) ORDER BY a, b'),
  ('SELECT a, c FROM lrin WHERE a = 3 AND c IN (' ||
     (SELECT string_agg((i * 60)::text, ', ') FROM generate_series(1, 150) i) || ')'),
  ('SELECT a, c FROM lrin WHERE a = 3 AND c = ANY (ARRAY[' ||
     (SELECT string_agg((i * 90)::text, ', ') FROM generate_series(1, 100) i) ||
     ']::int4[]) ORDER BY a DESC, c'),
  ('SELECT a, t FROM lrin WHERE a = 1 AND t IN (' ||
     (SELECT string_agg(quote_literal(lpad((i * 25)::text, 6, '0')), ', ')
        FROM generate_series(1, 120) i) || ')'),
  ('SELECT a, t FROM lrin WHERE a = 1 AND t IN (' ||
     (SELECT string_agg(quote_literal(lpad((i * 25)::text, 6, '0')), ', ')
        FROM generate_series(1, 120) i) || ') ORDER BY a DESC, t DESC'),
  ('SELECT a, s FROM lrin WHERE a = 2 AND s IN (' ||
     (SELECT string_agg((i * 23)::text, ', ') FROM generate_series(1, 150) i) || ')'),
  ('SELECT a, s FROM lrin WHERE a = 3 AND s = ANY (ARRAY[' ||
     (SELECT string_agg((i * 41)::text, ', ') FROM generate_series(1, 80) i) ||
     ']::int8[]) ORDER BY a DESC, s DESC'),
  ('SELECT a, b FROM lrin WHERE a = 2 AND b IN (20, 40, 60) AND b > 30'),
  ('SELECT count(*) FROM lrin WHERE a = 2 AND b IN (' ||
     (SELECT string_agg((i * 20)::text, ', ') FROM generate_series(1, 100) i) || ')');
SELECT * FROM lr_check(true, 'lrin_queries');
SELECT * FROM lr_check(false, 'lrin_queries');
-- the key checks handed to the server for array keys in one IN list of
-- 100 elements over some 2,000 tuples
CREATE FUNCTION lrin_array_handoffs() RETURNS bigint
LANGUAGE sql AS $$
    SELECT coalesce(sum(calls), 0)::bigint FROM btree_jit_stock_calls
     WHERE indexrelid = 'lrin_ab'::regclass AND reason = 'array keys'
       AND work = 'key check'
$$;
CREATE TEMP TABLE lrin_before AS
  SELECT lrin_array_handoffs() AS handoffs,
         (jit_counts('lrin_ab', 'checks')).jit AS checks,
         (jit_counts('lrin_ab', 'leafreads')).jit AS leafreads;
SELECT count(*) FROM lrin WHERE a = 2 AND b IN (
  20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 220, 240, 260, 280, 300,
  320, 340, 360, 380, 400, 420, 440, 460, 480, 500, 520, 540, 560, 580,
  600, 620, 640, 660, 680, 700, 720, 740, 760, 780, 800, 820, 840, 860,
  880, 900, 920, 940, 960, 980, 1000, 1020, 1040, 1060, 1080, 1100, 1120,
  1140, 1160, 1180, 1200, 1220, 1240, 1260, 1280, 1300, 1320, 1340, 1360,
  1380, 1400, 1420, 1440, 1460, 1480, 1500, 1520, 1540, 1560, 1580, 1600,
  1620, 1640, 1660, 1680, 1700, 1720, 1740, 1760, 1780, 1800, 1820, 1840,
  1860, 1880, 1900, 1920, 1940, 1960, 1980, 2000);
SELECT CASE WHEN current_setting('server_version_num')::int BETWEEN 170000 AND 189999
            THEN lrin_array_handoffs() - b.handoffs BETWEEN 1 AND 250 AND
                 (jit_counts('lrin_ab', 'checks')).jit > b.checks AND
                 (jit_counts('lrin_ab', 'leafreads')).jit > b.leafreads
            ELSE true
       END AS before_elements_told_by_module
  FROM lrin_before b;
DROP TABLE lrin_before;

-- Long runs of a plain index scan (the heap's ctid asked for, so no
-- index-only scan): the walk saves a run's TIDs in a loop of its own,
-- which must take posting lists (a deduplicated index on a column of few
-- values, with single tuples between them) and skip dead items as the
-- server does, forward and backward, in full ranges and LIMIT 1 probes.
CREATE TABLE lrp (k int4 NOT NULL, v int4 NOT NULL);
INSERT INTO lrp
SELECT CASE WHEN g % 7 = 0 THEN g ELSE g % 40 END, g
  FROM generate_series(1, 40000) g;
CREATE INDEX lrp_k ON lrp (k);
VACUUM ANALYZE lrp;
CREATE TABLE lrp_queries (q text);
INSERT INTO lrp_queries VALUES
  ('SELECT ctid, k FROM lrp WHERE k BETWEEN 3 AND 20'),
  ('SELECT ctid, k FROM lrp WHERE k >= 35 AND k < 3000 ORDER BY k DESC'),
  ('SELECT ctid FROM lrp WHERE k = 17'),
  ('SELECT ctid, k FROM lrp WHERE k <= 12 ORDER BY k DESC LIMIT 1'),
  ('SELECT ctid, k FROM lrp WHERE k >= 100 ORDER BY k LIMIT 1'),
  ('SELECT count(*), min(ctid), max(ctid) FROM lrp WHERE k > 5');
CREATE TEMP TABLE lrp_before AS
  SELECT jit_leafreads, verified_leafreads FROM btree_jit_index_stats()
   WHERE indexrelid = 'lrp_k'::regclass
  UNION ALL SELECT 0, 0 LIMIT 1;
SELECT * FROM lr_check(true, 'lrp_queries', false);
SELECT * FROM lr_check(false, 'lrp_queries', false);
-- dead items inside the runs, marked by a scan of the index
DELETE FROM lrp WHERE v % 5 = 0;
SET enable_indexonlyscan = off;
SELECT count(*) FROM lrp WHERE k >= 0;
RESET enable_indexonlyscan;
SELECT * FROM lr_check(true, 'lrp_queries', false);
SELECT * FROM lr_check(false, 'lrp_queries', false);
-- the module read those pages itself, and verify read them again
SELECT s.jit_leafreads > b.jit_leafreads AS read_by_module,
       s.verified_leafreads > b.verified_leafreads AS verified
  FROM btree_jit_index_stats() s, lrp_before b
 WHERE s.indexrelid = 'lrp_k'::regclass;
DROP TABLE lrp, lrp_queries, lrp_before;

DROP TABLE lr, lr_queries, lrs, lrs_before, lrn, lrin, lrin_queries;
DROP FUNCTION lrin_array_handoffs();
DROP FUNCTION lr_check(boolean, text, boolean);
