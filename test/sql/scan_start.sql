--
-- The start of a scan (_bt_first, 15, 17 and 18): for a simple scan
-- (keys, no row or NULL key, not parallel; on 18 no skip array) of an
-- index with compiled code, each primitive scan of an IN list or = ANY
-- included
-- the module chooses the keys the scan starts from, builds the insertion
-- scan key, descends with no stack, searches the leaf and reads it, and
-- steps on with _bt_next when the leaf has nothing to return.  Answers must
-- be the server's for every strategy and direction, on unique and
-- duplicate keys, descending and NULLS FIRST columns, composite and
-- cross-type keys, index-only scans, empty and one-page indexes, runs that
-- start at a page's end, cursors moving both ways, mark and restore, and
-- serializable scans of an empty index; verify must start every such scan
-- the server's way too.  On 19 the server starts every scan: the counters
-- stay zero.
--
SET btree_jit.compile_threshold = 0;
SET client_min_messages = warning;	-- earlier tests may have created it
CREATE EXTENSION IF NOT EXISTS btree_jit;
RESET client_min_messages;

CREATE FUNCTION scan_starts(idx regclass, OUT starts bigint, OUT verified bigint)
LANGUAGE sql AS $$ SELECT * FROM jit_counts(idx, 'scan_starts') $$;
-- does this server redirect _bt_first?  (15, 17 and 18)
SELECT redirected('_bt_first') AS first_redirected \gset

-- Unique even keys (odd probes miss), duplicates in long runs that cross
-- pages, a descending column with NULLs, a NULLS FIRST column, text.
CREATE TABLE ss (id int4 PRIMARY KEY, dup int8, d int4, nf int4, t text);
INSERT INTO ss
SELECT g * 2, g / 700, CASE WHEN g % 97 = 0 THEN NULL ELSE g % 5000 END,
       CASE WHEN g % 89 = 0 THEN NULL ELSE g % 3000 END,
       'k' || lpad((g % 20000)::text, 6, '0')
  FROM generate_series(1, 60000) g;
CREATE INDEX ss_dup ON ss (dup);
CREATE INDEX ss_d ON ss (d DESC);
CREATE INDEX ss_nf ON ss (nf NULLS FIRST);
CREATE INDEX ss_dup_id ON ss (dup, id);
CREATE INDEX ss_dup_d_id ON ss (dup, d DESC, id);
CREATE INDEX ss_t ON ss (t);
CREATE TABLE ss_empty (id int4 PRIMARY KEY);
CREATE TABLE ss_small (id int4 PRIMARY KEY);
INSERT INTO ss_small SELECT generate_series(1, 50);
VACUUM ANALYZE ss;
VACUUM ANALYZE ss_small;

-- Every strategy, both directions, hits and misses, the ends of the index.
CREATE TABLE ss_queries (q text);
INSERT INTO ss_queries
SELECT format(q, k) FROM unnest(ARRAY[
    'SELECT id FROM ss WHERE id = %s',
    'SELECT id FROM ss WHERE id < %s ORDER BY id DESC LIMIT 5',
    'SELECT id FROM ss WHERE id <= %s ORDER BY id DESC LIMIT 5',
    'SELECT id FROM ss WHERE id > %s ORDER BY id LIMIT 5',
    'SELECT id FROM ss WHERE id >= %s ORDER BY id LIMIT 5',
    'SELECT id FROM ss WHERE id > %s ORDER BY id DESC LIMIT 5',
    'SELECT id FROM ss WHERE id < %s ORDER BY id LIMIT 5',
    'SELECT id FROM ss WHERE id >= %s AND id < %1$s + 9 ORDER BY id DESC',
    'SELECT id FROM ss WHERE id = %s ORDER BY id DESC',
    'SELECT count(*) FROM ss WHERE id = %s::int8',
    'SELECT id FROM ss WHERE id > %s::int8 ORDER BY id LIMIT 3',
    'SELECT id FROM ss WHERE id < least(%s, 32000)::int2 ORDER BY id DESC LIMIT 3',
    'SELECT count(*) FROM ss WHERE dup = %s / 1000',
    'SELECT id FROM ss WHERE dup = %s / 1000 ORDER BY dup DESC LIMIT 3',
    'SELECT dup FROM ss WHERE dup > %s / 1000 ORDER BY dup LIMIT 2',
    'SELECT dup, id FROM ss WHERE dup = %s / 1000 AND id > %1$s ORDER BY dup, id LIMIT 4',
    'SELECT dup, id FROM ss WHERE dup = %s / 1000 AND id < %1$s ORDER BY dup DESC, id DESC LIMIT 4',
    'SELECT dup, id FROM ss WHERE dup >= %s / 1000 AND id = %1$s ORDER BY dup, id',
    'SELECT dup FROM ss WHERE dup > %s / 1000 AND dup <= %1$s / 1000 + 2 ORDER BY dup DESC LIMIT 5',
    'SELECT id FROM ss WHERE id >= %s::int8 AND id < least(%1$s + 9, 32000)::int2 ORDER BY id DESC',
    'SELECT id FROM ss WHERE id < %s AND id >= %1$s - 7 ORDER BY id',
    'SELECT id FROM ss WHERE id = %s AND id > %1$s - 10',
    'SELECT id FROM ss WHERE id < %s AND id <= %1$s + 4 ORDER BY id DESC LIMIT 3',
    'SELECT id FROM ss WHERE id > %s AND id > %1$s::int8 - 3 ORDER BY id LIMIT 3',
    'SELECT d FROM ss WHERE d >= %s / 30 AND d < %1$s / 30 + 5 ORDER BY d DESC',
    'SELECT d FROM ss WHERE d > %s / 30 AND d <= %1$s / 30 + 5 ORDER BY d',
    'SELECT d FROM ss WHERE d > %s / 30 AND d >= %1$s / 30 + 1 ORDER BY d DESC LIMIT 4',
    'SELECT d FROM ss WHERE d <= %s / 30 AND d < %1$s / 30 - 1 ORDER BY d LIMIT 4',
    'SELECT dup, d, id FROM ss WHERE dup = %s / 1000 AND d < %1$s / 20 AND id > %1$s ORDER BY dup, d DESC, id LIMIT 4',
    'SELECT dup, d, id FROM ss WHERE dup = %s / 1000 AND id > %1$s ORDER BY dup DESC, d, id DESC LIMIT 4',
    'SELECT dup, d, id FROM ss WHERE dup >= %s / 1000 AND d = %1$s / 20 AND id <= %1$s ORDER BY dup, d DESC, id LIMIT 4',
    'SELECT d FROM ss WHERE d > %s / 30 ORDER BY d DESC LIMIT 4',
    'SELECT d FROM ss WHERE d < %s / 30 ORDER BY d LIMIT 4',
    'SELECT d FROM ss WHERE d <= %s / 30 ORDER BY d DESC LIMIT 4',
    'SELECT nf FROM ss WHERE nf < %s / 40 ORDER BY nf NULLS FIRST LIMIT 4',
    'SELECT nf FROM ss WHERE nf > %s / 40 ORDER BY nf DESC NULLS LAST LIMIT 4',
    'SELECT t FROM ss WHERE t >= ''k'' || lpad((%s / 7)::text, 6, ''0'') ORDER BY t LIMIT 3',
    'SELECT t FROM ss WHERE t < ''k'' || lpad((%s / 7)::text, 6, ''0'') ORDER BY t DESC LIMIT 3',
    'SELECT id FROM ss_empty WHERE id = %s',
    'SELECT id FROM ss_empty WHERE id > %s ORDER BY id DESC',
    'SELECT id FROM ss_small WHERE id >= %s / 2000 ORDER BY id LIMIT 2',
    'SELECT id FROM ss_small WHERE id < %s / 2000 ORDER BY id DESC LIMIT 2'
]) q, unnest(ARRAY[-5, 0, 1, 2, 3, 700, 701, 5000, 59999, 60000, 119999,
                   120000, 120001, 200000]) k;

-- Fast path, results against the server's (check_query: module off / on).
SET btree_jit.verify = off;
SELECT checked, failures FROM check_queries(ARRAY(SELECT q FROM ss_queries));
-- index-only scans keep the page's tuples
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT check_query('SELECT dup FROM ss WHERE dup = 40') AS index_only_dup,
       check_query('SELECT id FROM ss WHERE id >= 1000 ORDER BY id LIMIT 500') AS index_only_range;
SELECT (starts > 0) = :'first_redirected' AS starts_counted FROM scan_starts('ss_pkey');

-- A cursor, both ways, past both ends; and a merge join's mark and restore.
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id FROM ss WHERE id > 119990 ORDER BY id;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ALL FROM c;
FETCH BACKWARD 3 FROM c;
COMMIT;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT check_query('SELECT a.dup, b.id FROM ss a JOIN ss b ON a.dup = b.dup
                     WHERE a.id < 3000 AND b.dup < 3 ORDER BY 1, 2') AS merge_join;
RESET enable_hashjoin;
RESET enable_nestloop;

-- A serializable scan of an empty index locks the relation, as the server's.
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT id FROM ss_empty WHERE id = 1;
SELECT count(*) > 0 AS relation_locked
  FROM pg_locks WHERE relation = 'ss_empty_pkey'::regclass AND mode = 'SIReadLock'
   AND pid = pg_backend_pid();
COMMIT;

-- IN lists and = ANY: each primitive scan is the module's (15: with the
-- current elements as ordinary keys; 17 and 18: after the server's
-- preprocessing of the arrays, which the module starts as _bt_first does).
-- An array of NULLs only is contradictory: the server's.
SELECT starts AS before_starts FROM scan_starts('ss_pkey') \gset
SELECT check_query('SELECT id FROM ss WHERE id IN (4, 8, 15, 7, 120000) ORDER BY id') AS in_list,
       check_query('SELECT id FROM ss WHERE id = ANY (ARRAY[9, 2, NULL, 40]::int8[]) ORDER BY id DESC') AS any_crosstype,
       check_query('SELECT id FROM ss WHERE id > ANY (ARRAY[119990, 119994]) ORDER BY id') AS inequality_array,
       check_query('SELECT id FROM ss WHERE id = ANY (ARRAY[NULL, NULL]::int4[])') AS only_nulls;
SELECT (starts > :before_starts) = :'first_redirected' AS arrays_started_as_expected
  FROM scan_starts('ss_pkey');
-- (an array with a range: the planner may take either index, and the
-- range alone on ss_pkey is a simple scan on every major; not counted)
SELECT check_query('SELECT dup, id FROM ss WHERE dup IN (3, 1) AND id >= 2500 AND id < 2520 ORDER BY dup, id') AS in_list_and_range;

-- Keys the server starts: IS NULL, a row comparison, no key.
SELECT starts AS before_starts FROM scan_starts('ss_pkey') \gset
SELECT check_query('SELECT nf FROM ss WHERE nf IS NULL LIMIT 3') AS is_null,
       check_query('SELECT dup, id FROM ss WHERE (dup, id) > (3, 2500) ORDER BY dup, id LIMIT 3') AS row_compare,
       check_query('SELECT id FROM ss ORDER BY id LIMIT 3') AS no_key;
SELECT starts = :before_starts AS ss_pkey_started_by_server FROM scan_starts('ss_pkey');

-- A key after a column with no = key: 18's preprocessing adds a skip
-- array for that column, and the server starts the scan; 15 and 17 start
-- from the leading bound, and so does the module.  A key on the second
-- column alone starts from the index's end: the server's everywhere.
CREATE TABLE ss_gap (a int4, b int4);
INSERT INTO ss_gap SELECT g % 50, g FROM generate_series(1, 20000) g;
CREATE INDEX ss_gap_ab ON ss_gap (a, b);
VACUUM ANALYZE ss_gap;
-- (its first search compiles its shape: the scans counted come after)
SELECT count(*) AS primed FROM ss_gap WHERE a = 3 AND b < 100;
SELECT current_setting('server_version_num')::int >= 180000 AS skip_arrays \gset
SELECT check_query('SELECT a, b FROM ss_gap WHERE a >= 47 AND b = 4049') AS bound_then_key,
       check_query('SELECT a, b FROM ss_gap WHERE b < 30 ORDER BY a DESC, b DESC') AS second_column_only;
SELECT (starts > 0) = (:'first_redirected' AND NOT :'skip_arrays') AS gap_started_as_expected
  FROM scan_starts('ss_gap_ab');
SELECT check_query('SELECT a, b FROM ss_gap WHERE a = 47 AND b >= 4000 AND b < 4200 ORDER BY a DESC, b DESC') AS no_gap;
SELECT (starts > 0) = :'first_redirected' AS no_gap_started
  FROM scan_starts('ss_gap_ab');

-- EXPLAIN ANALYZE's "Index Searches" (18 on; absent before) counts the
-- module's starts as the server's: a nested loop's five probes.
CREATE FUNCTION index_searches(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q
        INTO plan;
    RETURN coalesce((SELECT string_agg(v::text, ',')
                       FROM jsonb_path_query(plan, 'strict $.**."Index Searches"') v),
                    'none');
END $$;
SELECT starts AS before_starts FROM scan_starts('ss_pkey') \gset
SET btree_jit.enabled = on;
SELECT index_searches('SELECT x.id FROM generate_series(1, 5) g, LATERAL (SELECT id FROM ss WHERE id = g * 2) x') AS searches_on \gset
SET btree_jit.enabled = off;
SELECT index_searches('SELECT x.id FROM generate_series(1, 5) g, LATERAL (SELECT id FROM ss WHERE id = g * 2) x') AS searches_off \gset
SET btree_jit.enabled = on;
SELECT :'searches_on' = :'searches_off' AS index_searches_as_server,
       :'searches_on' IN ('5', 'none') AS index_searches_counted;
SELECT (starts - :before_starts = 5) = :'first_redirected' AS explain_probes_started
  FROM scan_starts('ss_pkey');

-- verify: each start the module makes is made again by the server's
-- _bt_first and compared field by field.
SET btree_jit.verify = on;
SELECT checked, failures FROM check_queries(ARRAY(SELECT q FROM ss_queries));
SELECT check_query('SELECT id FROM ss WHERE id IN (4, 8, 15, 7, 120000) ORDER BY id DESC') AS verify_in_list,
       check_query('SELECT dup, id FROM ss WHERE dup = ANY (ARRAY[5, 3]::int8[]) AND id < 3600 ORDER BY dup DESC, id DESC LIMIT 7') AS verify_any;
-- many primitive scans (one per element on its own leaf), both directions,
-- cross-type, text, arrays on two columns, an array that is not required
-- (after an inequality: the server's leaf read, the module's start), a
-- cursor turning back and an array scan under mark and restore
SELECT starts AS before_starts, verified AS before_verified FROM scan_starts('ss_pkey') \gset
SELECT check_query('SELECT id FROM ss WHERE id = ANY (ARRAY(SELECT g * 997 FROM generate_series(1, 120) g)) ORDER BY id') AS verify_many_forward,
       check_query('SELECT id FROM ss WHERE id = ANY (ARRAY(SELECT g * 997 FROM generate_series(1, 120) g)) ORDER BY id DESC') AS verify_many_backward,
       check_query('SELECT id FROM ss WHERE id = ANY (ARRAY(SELECT (g * 1999)::int8 FROM generate_series(1, 60) g)) ORDER BY id') AS verify_many_crosstype;
-- (each element on a leaf of its own: one primitive scan each, or on 17
-- and 18 a step to the next leaf where the read finds the next element
-- there; at least 100 of the 300 in all)
-- (19: the server starts every scan, and the counters stay put)
SELECT (starts - :before_starts >= 100) = :'first_redirected' AS many_started_as_expected,
       (verified - :before_verified >= 100) = :'first_redirected' AS many_verified_as_expected
  FROM scan_starts('ss_pkey');
SELECT check_query('SELECT t FROM ss WHERE t IN (''k000007'', ''k019999'', ''k010000'', ''zzz'') ORDER BY t DESC') AS verify_text,
       check_query('SELECT dup, id FROM ss WHERE dup IN (1, 7, 30, 85) AND id IN (1402, 9802, 9804, 42002, 119000) ORDER BY dup, id') AS verify_two_arrays,
       check_query('SELECT dup, id FROM ss WHERE dup >= 20 AND dup < 40 AND id IN (14000, 27000, 27002, 55000) ORDER BY dup, id') AS verify_array_not_required;
BEGIN;
DECLARE c_arr SCROLL CURSOR FOR SELECT id FROM ss WHERE id IN (2, 4, 6000, 6002, 90000) ORDER BY id;
FETCH 3 FROM c_arr;
FETCH BACKWARD 2 FROM c_arr;
FETCH 4 FROM c_arr;
COMMIT;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_sort = off;
SELECT count(*) AS merge_rows, sum(a.id) AS merge_sum
  FROM ss a JOIN ss b ON a.dup = b.dup
 WHERE a.dup IN (3, 5, 80) AND b.dup = ANY (ARRAY[3, 80]::int8[]);
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_sort;
SELECT check_query('SELECT dup FROM ss WHERE dup = 40') AS verify_index_only,
       check_query('SELECT a, b FROM ss_gap WHERE a >= 47 AND b = 4049') AS verify_gap,
       check_query('SELECT a, b FROM ss_gap WHERE a = 47 AND b > 4000 ORDER BY a, b LIMIT 3') AS verify_no_gap;
SELECT index_searches('SELECT x.id FROM generate_series(1, 5) g, LATERAL (SELECT id FROM ss WHERE id = g * 2) x') = :'searches_off' AS verify_index_searches_as_server;
SELECT (verified > 0) = :'first_redirected' AS verified_counted,
       verified <= starts AS verified_within_starts
  FROM scan_starts('ss_pkey');
SET btree_jit.verify = off;

DROP TABLE ss, ss_empty, ss_small, ss_queries, ss_gap;
DROP FUNCTION scan_starts(regclass), index_searches(text);
