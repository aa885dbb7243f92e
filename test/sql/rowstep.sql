--
-- The step from one item to the next (btgettuple, 15 to 19, and where the
-- executor asks for the row, index_getnext_tid, 15 to 18): once a scan is
-- positioned and its page has an item left in its direction, with no
-- tuple to kill, the module returns that item (its TID and, for an
-- index-only scan, its tuple); the first call, the step to another page
-- and a tuple to kill are the server's.  Answers must be the server's in
-- both directions, for plain and index-only scans, posting lists, IN lists,
-- LIMIT, cursors moving both ways, a merge join's mark and restore, scans
-- that kill dead tuples, parallel scans and a nested loop alternating
-- with a hash index's scan; verify must take every step the server's way
-- too, and the rows an index scan returns must be counted in its
-- statistics as the server counts them.  On a release the module was not
-- checked against the server steps: the counters stay zero.
--
SET btree_jit.compile_threshold = 0;
SET client_min_messages = warning;	-- earlier tests may have created it
CREATE EXTENSION IF NOT EXISTS btree_jit;
RESET client_min_messages;

-- steps: in btgettuple and in index_getnext_tid (which then calls no
-- btgettuple), both verified under verify
CREATE FUNCTION row_steps(idx regclass, OUT steps bigint, OUT verified bigint,
                          OUT tid_steps bigint, OUT tid_verified bigint)
LANGUAGE sql AS $$
    SELECT r.jit, r.verified, t.jit, t.verified
      FROM jit_counts(idx, 'row_steps') r, jit_counts(idx, 'tid_steps') t
$$;
-- does this server redirect btgettuple, and index_getnext_tid?
SELECT redirected('btgettuple') AS step_redirected,
       redirected('index_getnext_tid') AS tid_redirected \gset

-- Unique keys over some sixty leaf pages; a duplicate column in posting
-- lists; no autovacuum, so that the dead tuples below stay for the scans.
CREATE TABLE rs (id int4 PRIMARY KEY, g int8, t text)
  WITH (autovacuum_enabled = off);
INSERT INTO rs SELECT i, i % 50, 'r' || i FROM generate_series(1, 20000) i;
CREATE INDEX rs_g ON rs (g);
-- a scan of another access method, through the same index_getnext_tid
CREATE INDEX rs_t ON rs USING hash (t);
VACUUM ANALYZE rs;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM rs WHERE id < 100;

-- Both directions, plain and index-only, LIMIT, IN lists, posting lists.
CREATE TABLE rs_queries (q text);
INSERT INTO rs_queries VALUES
    ('SELECT id FROM rs WHERE id BETWEEN 100 AND 2000 ORDER BY id'),
    ('SELECT id FROM rs WHERE id BETWEEN 100 AND 2000 ORDER BY id DESC'),
    ('SELECT id, t FROM rs WHERE id > 19000 ORDER BY id'),
    ('SELECT id, t FROM rs WHERE id < 1000 ORDER BY id DESC'),
    ('SELECT id FROM rs WHERE id > 1000 ORDER BY id LIMIT 37'),
    ('SELECT id FROM rs WHERE id IN (5, 6, 500, 5000, 15000, 20001) ORDER BY id'),
    ('SELECT id FROM rs WHERE id = ANY (ARRAY[3, 4, 5, 9000]::int8[]) ORDER BY id DESC'),
    ('SELECT sum(id) FROM rs WHERE id >= 7'),
    ('SELECT g, id FROM rs WHERE g = 7 ORDER BY g'),
    ('SELECT g, t FROM rs WHERE g = 49 ORDER BY g DESC'),
    ('SELECT count(*) FROM rs WHERE g BETWEEN 3 AND 9');

-- A nested loop: each outer row's B-tree step, then a scan of the hash
-- index (and of a second B-tree index), row after row.
INSERT INTO rs_queries VALUES
    ('SELECT /* nested */ a.id, b.id FROM rs a JOIN rs b ON b.t = a.t
       WHERE a.id BETWEEN 10 AND 400 ORDER BY a.id'),
    ('SELECT /* nested */ a.id, b.id FROM rs a JOIN rs b ON b.g = a.id
       WHERE a.id BETWEEN 3 AND 5 ORDER BY a.id DESC, b.id');
SET enable_hashjoin = off;
SET enable_mergejoin = off;

-- verify: every step taken the server's way too, and compared
SET btree_jit.verify = on;
SELECT steps AS before_steps, verified AS before_verified,
       tid_steps AS before_tid_steps, tid_verified AS before_tid_verified
  FROM row_steps('rs_pkey') \gset
SELECT checked, failures FROM check_queries(ARRAY(SELECT q FROM rs_queries));
SELECT (steps > :before_steps) = :'step_redirected' AS steps_counted,
       verified - :before_verified = steps - :before_steps AS every_step_verified,
       (tid_steps > :before_tid_steps) = :'tid_redirected' AS tid_steps_counted,
       tid_verified - :before_tid_verified = tid_steps - :before_tid_steps
         AS every_tid_step_verified
  FROM row_steps('rs_pkey');
SELECT (steps > 0) = :'step_redirected' AS posting_list_steps_counted
  FROM row_steps('rs_g');

-- A cursor, both ways, across pages and past both ends.
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id FROM rs WHERE id > 19990 OR id < 3 ORDER BY id;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ALL FROM c;
FETCH BACKWARD 4 FROM c;
FETCH 2 FROM c;
CLOSE c;
DECLARE w SCROLL CURSOR FOR SELECT id FROM rs WHERE id BETWEEN 300 AND 1400 ORDER BY id;
MOVE 700 FROM w;
FETCH BACKWARD 3 FROM w;
MOVE FORWARD 399 FROM w;
FETCH 3 FROM w;
MOVE BACKWARD ALL FROM w;
FETCH 2 FROM w;
COMMIT;

-- A merge join: the inner scan marks its position and restores it.
RESET enable_mergejoin;
SET enable_nestloop = off;
SELECT check_query('SELECT a.g, b.id FROM rs a JOIN rs b ON a.g = b.g
                     WHERE a.id < 120 AND b.id < 900 ORDER BY 1, 2') AS merge_join;
SET enable_mergejoin = off;
RESET enable_nestloop;

-- The rows an index scan returns, in its statistics (pg_stat's
-- idx_tup_read): as many as the server counts for the same scans, on the
-- fast path.
BEGIN;
SET LOCAL btree_jit.verify = off;
SELECT pg_stat_get_xact_tuples_returned('rs_pkey'::regclass) AS returned0 \gset
SELECT count(*), sum(id) FROM rs WHERE id BETWEEN 100 AND 2000;
SELECT count(t) FROM rs WHERE id BETWEEN 100 AND 2000;
SELECT pg_stat_get_xact_tuples_returned('rs_pkey'::regclass) AS returned1 \gset
SET LOCAL btree_jit.enabled = off;
SELECT count(*), sum(id) FROM rs WHERE id BETWEEN 100 AND 2000;
SELECT count(t) FROM rs WHERE id BETWEEN 100 AND 2000;
SELECT pg_stat_get_xact_tuples_returned('rs_pkey'::regclass) AS returned2 \gset
COMMIT;
SELECT :returned1 - :returned0 AS rows_counted_on,
       :returned2 - :returned1 AS rows_counted_off;

-- Dead tuples: the scan that finds them dead marks them (kill_prior_tuple,
-- the server's), then scans see them marked.
DELETE FROM rs WHERE id % 3 = 0 AND id < 4000;
SELECT check_query('SELECT id, t FROM rs WHERE id < 4000 ORDER BY id') AS killing_scan,
       check_query('SELECT id, t FROM rs WHERE id < 4000 ORDER BY id DESC') AS after_kills;

-- Parallel scans: each participant steps through its own pages.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT check_query('SELECT count(*), sum(id) FROM rs WHERE id > 100') AS parallel_index_only,
       check_query('SELECT count(t) FROM rs WHERE id > 100') AS parallel_index;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_index_scan_size;
RESET max_parallel_workers_per_gather;

-- The fast path: counted, not verified.
SET btree_jit.verify = off;
SELECT steps AS before_steps, verified AS before_verified,
       tid_steps AS before_tid_steps, tid_verified AS before_tid_verified
  FROM row_steps('rs_pkey') \gset
SELECT checked, failures FROM check_queries(ARRAY(SELECT q FROM rs_queries));
SELECT (steps + tid_steps > :before_steps + :before_tid_steps) = :'step_redirected'
         AS fast_steps_counted,
       (tid_steps > :before_tid_steps) = :'tid_redirected' AS fast_tid_steps_counted,
       verified = :before_verified AND tid_verified = :before_tid_verified
         AS fast_steps_not_verified
  FROM row_steps('rs_pkey');

-- The module off: the server's steps, none counted.
SELECT steps AS before_steps, tid_steps AS before_tid_steps
  FROM row_steps('rs_pkey') \gset
SET btree_jit.enabled = off;
SELECT count(*) FROM rs WHERE id BETWEEN 5000 AND 9000;
RESET btree_jit.enabled;
SELECT steps = :before_steps AND tid_steps = :before_tid_steps AS off_steps_not_counted
  FROM row_steps('rs_pkey');

RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP TABLE rs, rs_queries;
DROP FUNCTION row_steps(regclass);
