--
-- Every page search of a user index reaches the dispatcher: descents
-- through internal pages and leaf searches, forward and backward scans,
-- and the descents of inserts.  For an index of height level+1, a probe
-- searches level+1 pages (_bt_search's descent, then _bt_first's leaf
-- search), and an insert searches the level internal pages on its way down
-- (its leaf search is _bt_binsrch_insert, which this module leaves alone).
--
CREATE EXTENSION pageinspect;
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE disp (id int4 PRIMARY KEY, pad int4);
-- even keys only, so inserts can land in the middle of the tree
INSERT INTO disp SELECT 2 * g, g FROM generate_series(1, 400000) g;
VACUUM ANALYZE disp;
SELECT level >= 2 AS three_levels FROM bt_metap('disp_pkey');

-- A probe: level + 1 page searches.
CREATE TEMP TABLE before AS SELECT searches('disp_pkey') AS n;
SELECT pad FROM disp WHERE id = 123456;
SELECT searches('disp_pkey') - (SELECT n FROM before) = level + 1 AS probe_searches
  FROM bt_metap('disp_pkey');

-- A backward scan.
UPDATE before SET n = searches('disp_pkey');
SELECT id FROM disp WHERE id < 200001 ORDER BY id DESC LIMIT 2;
SELECT searches('disp_pkey') - (SELECT n FROM before) = level + 1 AS backward_searches
  FROM bt_metap('disp_pkey');

-- A forward range scan.
UPDATE before SET n = searches('disp_pkey');
SELECT id FROM disp WHERE id > 300001 ORDER BY id LIMIT 2;
SELECT searches('disp_pkey') - (SELECT n FROM before) = level + 1 AS forward_searches
  FROM bt_metap('disp_pkey');

-- IS NULL: a search with a NULL scankey, on a nullable column (from 17 the
-- planner drops IS NULL on a NOT NULL column without searching).
CREATE INDEX disp_pad ON disp (pad);
SELECT count(*) FROM disp WHERE pad IS NULL;
UPDATE before SET n = searches('disp_pad');
SELECT count(*) FROM disp WHERE pad IS NULL;
SELECT searches('disp_pad') - (SELECT n FROM before) = level + 1 AS isnull_searches
  FROM bt_metap('disp_pad');

-- An insert into the middle: the descent through internal pages only.
UPDATE before SET n = searches('disp_pkey');
INSERT INTO disp VALUES (150001, 0);
SELECT searches('disp_pkey') - (SELECT n FROM before) = level AS insert_searches
  FROM bt_metap('disp_pkey');

-- A unique violation is still detected.
INSERT INTO disp VALUES (150002, 0);

-- The index runs compiled code, and verify compared every search.
SELECT state, signature, searched_jit, verified FROM index_state('disp_pkey');
SELECT jit_searches = verified_searches AS all_verified, declined_searches
  FROM btree_jit_index_stats() WHERE indexrelid = 'disp_pkey'::regclass;

-- Switched off, searches go straight to the server's code, uncounted.
SET btree_jit.enabled = off;
CREATE TEMP TABLE stock_before AS
  SELECT jit_searches, stock_searches, jit_compares FROM btree_jit_index_stats()
   WHERE indexrelid = 'disp_pkey'::regclass;
SELECT pad FROM disp WHERE id = 4242;
SELECT s.jit_searches = b.jit_searches AS no_jit,
       s.stock_searches = b.stock_searches AS not_counted,
       s.jit_compares = b.jit_compares AS no_jit_compares
  FROM btree_jit_index_stats() s, stock_before b
 WHERE s.indexrelid = 'disp_pkey'::regclass;
RESET btree_jit.enabled;
-- Back on, the next probe is compiled again (high-key checks included).
SELECT pad FROM disp WHERE id = 4244;
SELECT s.jit_searches - b.jit_searches = m.level + 1 AS jit_again,
       s.jit_compares > b.jit_compares AS compares_compiled
  FROM btree_jit_index_stats() s, stock_before b, bt_metap('disp_pkey') m
 WHERE s.indexrelid = 'disp_pkey'::regclass;

-- Catalog indexes go through the dispatcher too.
SELECT count(*) > 0 AS catalog_searched
  FROM btree_jit_index_stats() WHERE indexrelid = 'pg_class_oid_index'::regclass;

DROP TABLE disp;
