--
-- Block hints (btree_jit.prefetch_hints): the compiled search of a level-1
-- page prefetches the leaf it descends to from where this backend last found
-- that leaf.  A hint is only ever a prefetch address, so answers must not
-- depend on it: not when it is right, not when it is stale (the leaf split,
-- the index rebuilt into new blocks, the buffers reused by another file),
-- not when hints are off.  verify takes the slow path, which neither writes
-- nor reads hints, so this test runs the fast path and compares every probe
-- with the server's own search (check_query), then checks the index.
--
SET btree_jit.compile_threshold = 0;
SET btree_jit.verify = off;
SET client_min_messages = warning;	-- earlier tests may have created them
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
SHOW btree_jit.prefetch_hints;

-- Even keys, so that odd probes miss; enough leaves for a level above them.
CREATE TABLE pf (id int4 PRIMARY KEY, v int4);
INSERT INTO pf SELECT g * 2, g FROM generate_series(1, 200000) g;
ANALYZE pf;
SELECT level >= 1 AS has_level_one FROM bt_metap('pf_pkey');
SELECT count(*) FROM pf WHERE id = 2;

-- Probes in an order unrelated to the keys: every leaf hinted, then read
-- through its hint.
CREATE TABLE pf_probes AS
SELECT k FROM generate_series(1, 400001, 37) k ORDER BY md5(k::text);
SELECT check_query('SELECT k, (SELECT v FROM pf WHERE id = k) FROM pf_probes') AS fresh;
SELECT check_query('SELECT k, (SELECT v FROM pf WHERE id = k) FROM pf_probes') AS hinted;

-- Splits: every leaf gets new items, most split; hints name old layouts.
INSERT INTO pf SELECT g * 2 + 1, -g FROM generate_series(1, 200000, 3) g;
SELECT check_query('SELECT k, (SELECT v FROM pf WHERE id = k) FROM pf_probes') AS after_splits;

-- A rebuild: the hinted block numbers now hold other pages, in other buffers.
REINDEX INDEX pf_pkey;
SELECT check_query('SELECT k, (SELECT v FROM pf WHERE id = k) FROM pf_probes') AS after_reindex;

-- The hinted buffers reused: the table emptied and loaded in another order.
TRUNCATE pf;
INSERT INTO pf SELECT g * 3, g FROM generate_series(150000, 1, -1) g;
SELECT check_query('SELECT k, (SELECT v FROM pf WHERE id = k) FROM pf_probes') AS after_truncate;

-- Hints off, then on again with what was written before.
SET btree_jit.prefetch_hints = off;
SELECT check_query('SELECT k, (SELECT v FROM pf WHERE id = k) FROM pf_probes') AS hints_off;
SET btree_jit.prefetch_hints = on;
SELECT check_query('SELECT k, (SELECT v FROM pf WHERE id = k) FROM pf_probes') AS hints_on;

-- The fast path answered, and the index is intact.
SELECT state, searched_jit FROM index_state('pf_pkey');
SELECT bt_index_check('pf_pkey', true);

DROP TABLE pf, pf_probes;
RESET btree_jit.verify;
RESET btree_jit.compile_threshold;
