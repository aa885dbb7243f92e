--
-- The descent's page reads (15, 17, 18): the cached root (_bt_getroot), a
-- page read by number (_bt_getbuf) and each step to another page
-- (_bt_relandgetbuf) of an index with compiled code are pinned through the
-- buffer this backend last found the page in (ReadRecentBuffer), skipping
-- the buffer mapping table.  A remembered buffer is only a guess the
-- buffer manager checks, so answers must not depend on it (fresh, after
-- splits, after a root split, a rebuild, reused buffers, the setting off),
-- verify must find every such buffer to be the mapping table's, and the
-- statistics a read leaves (pg_statio's blocks fetched and hit, EXPLAIN's
-- shared hits) must be the server's own.  19 leaves all three to the
-- server: its counters stay zero.
--
-- The descent itself (_bt_search, 15, 17, 18) is the module's for an
-- index with compiled code: a scan's descent, an insertion's (write-locking
-- the leaf, also when the root is the leaf), a temporary index's (read
-- through the server's functions), with recent_buffers off; verify checks
-- each level's page search and each decision not to move right.
--
SET btree_jit.compile_threshold = 0;
SET client_min_messages = warning;	-- earlier tests may have created it
CREATE EXTENSION IF NOT EXISTS btree_jit;
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
SHOW btree_jit.recent_buffers;

CREATE FUNCTION descent_reads(idx regclass, OUT roots bigint, OUT reads bigint,
                              OUT steps bigint, OUT verified bigint)
LANGUAGE sql AS $$
    SELECT s.jit_recent_roots, s.jit_recent_reads, s.jit_recent_steps,
           s.verified_recent_roots + s.verified_recent_reads + s.verified_recent_steps
      FROM btree_jit_index_stats() s WHERE s.indexrelid = idx
$$;
CREATE FUNCTION descents(idx regclass, OUT descents bigint, OUT verified bigint)
LANGUAGE sql AS $$ SELECT * FROM jit_counts(idx, 'descents') $$;
-- does this server redirect the three, and _bt_search?  (not on 19)
SELECT redirected('_bt_relandgetbuf') AS redirects,
       redirected('_bt_search') AS search_redirected \gset

-- Even keys, so that odd probes miss; three levels.
CREATE TABLE dsc (id int4 PRIMARY KEY, v int4);
INSERT INTO dsc SELECT g * 2, g FROM generate_series(1, 300000) g;
ANALYZE dsc;
SELECT level AS root_level FROM bt_metap('dsc_pkey');
CREATE TABLE dsc_probes AS
SELECT k FROM generate_series(1, 600001, 41) k ORDER BY md5(k::text);

-- Fast path, results against the server's (check_query: module off / on).
SET btree_jit.verify = off;
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS fresh;
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS remembered;
-- (the root on every build; the steps and reads by number only where the
-- build calls _bt_relandgetbuf and _bt_getbuf rather than inlining them
-- into their callers, as gcc's LTO does: src/README)
SELECT roots > 0 AS read_through_remembered_buffers
  FROM descent_reads('dsc_pkey') \gset
SELECT :'read_through_remembered_buffers' = :'redirects' AS counted_as_expected;
SELECT (descents >= (SELECT count(*) FROM dsc_probes)) = :'search_redirected'
       AS descents_counted
  FROM descents('dsc_pkey');

-- The statistics of a read: the same blocks fetched and hit, with the
-- module and without it (the xact counters are this backend's pending
-- counts: each run is the difference from the one before).
SET enable_seqscan = off;
SET enable_bitmapscan = off;
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched('dsc_pkey'::regclass) AS base_fetched,
       pg_stat_get_xact_blocks_hit('dsc_pkey'::regclass) AS base_hit \gset
SET LOCAL btree_jit.enabled = off;
SELECT sum((SELECT v FROM dsc WHERE id = k)) FROM dsc_probes;
SELECT pg_stat_get_xact_blocks_fetched('dsc_pkey'::regclass) AS off_fetched,
       pg_stat_get_xact_blocks_hit('dsc_pkey'::regclass) AS off_hit \gset
SET LOCAL btree_jit.enabled = on;
SELECT sum((SELECT v FROM dsc WHERE id = k)) FROM dsc_probes;
SELECT pg_stat_get_xact_blocks_fetched('dsc_pkey'::regclass) AS on_fetched,
       pg_stat_get_xact_blocks_hit('dsc_pkey'::regclass) AS on_hit \gset
COMMIT;
SELECT :off_fetched - :base_fetched = :on_fetched - :off_fetched AS same_blocks_fetched,
       :off_hit - :base_hit = :on_hit - :off_hit AS same_blocks_hit,
       :on_fetched - :off_fetched >= 3 * (SELECT count(*) FROM dsc_probes) AS three_levels_each;

-- EXPLAIN's shared hits (pgBufferUsage) likewise, for a range scan that
-- steps right (_bt_getbuf) and a backward one.
CREATE FUNCTION shared_hits(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    -- the top node's line holds the whole statement's hits
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'shared hit=' THEN
            RETURN substring(line FROM 'shared hit=(\d+)')::bigint;
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
CREATE FUNCTION shared_hits_off_on(q text, OUT off_hits bigint, OUT on_hits bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('btree_jit.enabled', 'off', true);
    off_hits := shared_hits(q);
    PERFORM set_config('btree_jit.enabled', 'on', true);
    on_hits := shared_hits(q);
END $$;
SELECT q, h.off_hits = h.on_hits AS same_shared_hits, h.on_hits > 0 AS hit
  FROM (VALUES ('SELECT sum((SELECT v FROM dsc WHERE id = k)) FROM dsc_probes'),
               ('SELECT sum(v) FROM dsc WHERE id BETWEEN 1000 AND 90000'),
               ('SELECT v FROM dsc WHERE id < 50000 ORDER BY id DESC')) AS t(q),
       LATERAL shared_hits_off_on(q) h;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- verify: each page pinned through a remembered buffer is looked up in the
-- mapping table as well, and must be the same buffer.
SELECT verified AS verified_before, roots + reads + steps AS reads_before
  FROM descent_reads('dsc_pkey') \gset
SELECT descents AS descents_before, verified AS verified_descents_before
  FROM descents('dsc_pkey') \gset
SET btree_jit.verify = on;
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS verified;
SELECT check_query('SELECT id, v FROM dsc WHERE id BETWEEN 5000 AND 60000') AS verified_range;
SELECT check_query('SELECT id, v FROM dsc WHERE id < 40000 ORDER BY id DESC') AS verified_backward;
SELECT (verified > :verified_before) = :'redirects' AS verify_compared,
       verified - :verified_before = roots + reads + steps - :reads_before AS every_read_verified
  FROM descent_reads('dsc_pkey');
SELECT (verified > :verified_descents_before) = :'search_redirected' AS descents_verified,
       verified - :verified_descents_before = descents - :descents_before AS every_descent_verified
  FROM descents('dsc_pkey');
SET btree_jit.verify = off;

-- Splits: most leaves split, the remembered buffers name pages whose
-- contents moved.  Then the root splits (the metapage cache goes stale:
-- the cached root is no longer the root, and the server's function
-- re-reads the metapage).
-- The insertions' descents (write-locking the leaf) under verify.
SELECT descents AS descents_before FROM descents('dsc_pkey') \gset
SET btree_jit.verify = on;
INSERT INTO dsc SELECT g * 2 + 1, -g FROM generate_series(1, 300000, 3) g;
SET btree_jit.verify = off;
SELECT (descents > :descents_before) = :'search_redirected' AS insertion_descents
  FROM descents('dsc_pkey');
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS after_splits;
CREATE TABLE dsc_small (id int8 PRIMARY KEY, pad text);
INSERT INTO dsc_small SELECT g, repeat('x', 200) FROM generate_series(1, 30) g;
SELECT level AS small_level_before FROM bt_metap('dsc_small_pkey');
SELECT check_query('SELECT g, (SELECT id FROM dsc_small WHERE id = g) FROM generate_series(0, 31) g') AS small_before;
-- insertions while the root is the leaf (the read lock traded for a write
-- lock), then past the root's split, under verify
SET btree_jit.verify = on;
INSERT INTO dsc_small SELECT g, repeat('y', 200) FROM generate_series(31, 20000) g;
SET btree_jit.verify = off;
SELECT level > 0 AS small_root_split FROM bt_metap('dsc_small_pkey');
SET btree_jit.verify = on;
SELECT check_query('SELECT g, (SELECT id FROM dsc_small WHERE id = g) FROM generate_series(0, 20001, 7) g') AS small_after_root_split;
SET btree_jit.verify = off;

-- A rebuild: the remembered block numbers belong to a file that is gone.
REINDEX INDEX dsc_pkey;
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS after_reindex;

-- The remembered buffers reused: the table emptied and loaded anew.
TRUNCATE dsc;
INSERT INTO dsc SELECT g * 3, g FROM generate_series(200000, 1, -1) g;
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS after_truncate;

-- The setting off, then on with what was remembered before.  The descent
-- stays the module's, its reads the server's.
SELECT roots AS roots_before FROM descent_reads('dsc_pkey') \gset
SELECT descents AS descents_before FROM descents('dsc_pkey') \gset
SET btree_jit.recent_buffers = off;
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS recent_buffers_off;
SELECT roots = :roots_before AS none_while_off FROM descent_reads('dsc_pkey');
SELECT (descents > :descents_before) = :'search_redirected' AS descents_while_off
  FROM descents('dsc_pkey');
SET btree_jit.verify = on;
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS recent_buffers_off_verified;
SET btree_jit.verify = off;
RESET btree_jit.recent_buffers;
SELECT check_query('SELECT k, (SELECT v FROM dsc WHERE id = k) FROM dsc_probes') AS recent_buffers_on;

-- A temporary index (local buffers): its reads stay the server's, its
-- descents are the module's.
CREATE TEMP TABLE dsc_temp (id int4 PRIMARY KEY);
INSERT INTO dsc_temp SELECT generate_series(1, 100000);
SELECT check_query('SELECT g, (SELECT id FROM dsc_temp WHERE id = g) FROM generate_series(1, 100001, 97) g') AS temp_index;
SELECT coalesce((SELECT roots + reads + steps FROM descent_reads('dsc_temp_pkey')), 0) AS temp_reads;
SELECT (descents > 0) = :'search_redirected' AS temp_descents FROM descents('dsc_temp_pkey');
SET btree_jit.verify = on;
INSERT INTO dsc_temp SELECT generate_series(100001, 120000);
SELECT check_query('SELECT g, (SELECT id FROM dsc_temp WHERE id = g) FROM generate_series(1, 120001, 89) g') AS temp_index_verified;
SET btree_jit.verify = off;
SELECT bt_index_parent_check('dsc_temp_pkey', true, true);

SELECT bt_index_parent_check('dsc_pkey', true, true);
SELECT bt_index_parent_check('dsc_small_pkey', true, true);
DROP TABLE dsc, dsc_probes, dsc_small, dsc_temp;
DROP FUNCTION descent_reads(regclass);
DROP FUNCTION descents(regclass);
DROP FUNCTION shared_hits_off_on(text);
DROP FUNCTION shared_hits(text);
RESET btree_jit.verify;
RESET btree_jit.compile_threshold;
