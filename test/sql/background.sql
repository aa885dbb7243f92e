--
-- Background compilation (btree_jit.compile_mode = background): an index
-- whose shape is not in the object cache is 'queued' and keeps the stock
-- path, the compile worker compiles the shape, and the next search after
-- that links the object: no query waits for LLVM.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS btree_jit;
CREATE EXTENSION btree_jit;
RESET client_min_messages;

SET btree_jit.compile_mode = background;
SET btree_jit.verify = on;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

SELECT worker_pid IS NOT NULL AS worker_running FROM btree_jit_status();

-- run q every 0.1 s, at most 600 times, while index idx is queued: each
-- run is a search on the stock path, the dispatcher's chance to notice
-- that the worker finished
CREATE FUNCTION wait_while_queued(idx regclass, q text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  st text;
BEGIN
  FOR i IN 1..600 LOOP
    EXECUTE q;
    SELECT state INTO st FROM btree_jit_index_stats() WHERE indexrelid = idx;
    EXIT WHEN st <> 'queued';
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;

-- a shape no other test uses, so that it is not in the object cache:
-- (int2 DESC NULLS FIRST, int8, timestamptz)
CREATE TABLE bg_t (a int2, b int8, c timestamptz);
INSERT INTO bg_t SELECT g % 300, g, '2020-01-01'::timestamptz + g * interval '1 min'
  FROM generate_series(1, 20000) g;
CREATE INDEX bg_t_idx ON bg_t (a DESC NULLS FIRST, b, c);
ANALYZE bg_t;

SET btree_jit.compile_threshold = 0;
SELECT count(*) FROM bg_t WHERE a = 7 AND b > 100;
SELECT state, reason, signature IS NOT NULL AS has_signature
  FROM btree_jit_index_stats() WHERE indexrelid = 'bg_t_idx'::regclass;

-- wait (at most 60 s) for the worker; every search meanwhile is the stock
-- path and correct
SELECT wait_while_queued('bg_t_idx', 'SELECT count(*) FROM bg_t WHERE a = 7 AND b > 100');
SELECT state, code_source FROM btree_jit_index_stats()
 WHERE indexrelid = 'bg_t_idx'::regclass;
SELECT count(*) FROM bg_t WHERE a = 7 AND b > 100;
SELECT count(*) FROM bg_t WHERE a = 299 AND b BETWEEN 1000 AND 5000;
SELECT jit_searches > 0 AS compiled_searches
  FROM btree_jit_index_stats() WHERE indexrelid = 'bg_t_idx'::regclass;

-- the worker's counters
SELECT worker_compiles > 0 AS worker_compiled, worker_failures,
       last_compile_ms > 0 AS timed, last_compile_at IS NOT NULL AS when_known
  FROM btree_jit_status();

-- the cluster-wide view saw the index queued or compiled, never failed
SELECT state IN ('queued', 'jit') AS state_ok
  FROM btree_jit_indexes WHERE indexname = 'bg_t_idx';

-- btree_jit_compile() compiles at once whatever the mode says
CREATE INDEX bg_t_idx2 ON bg_t (c DESC, a NULLS FIRST);
SELECT state FROM btree_jit_compile('bg_t_idx2');

-- inline mode compiles in the backend, at once
SET btree_jit.compile_mode = inline;
CREATE INDEX bg_t_idx3 ON bg_t (b DESC, c DESC, a DESC);
SELECT count(*) FROM bg_t WHERE b = 42 AND c > '2019-01-01' AND a = 42;
SELECT state FROM btree_jit_index_stats() WHERE indexrelid = 'bg_t_idx3'::regclass;

-- With verify off, an index without compiled code is searched through
-- btjit_stock_entry, from the dispatcher's fast path: every page search is
-- counted, the search that reaches the threshold examines the index, and
-- the first search after the worker has finished links the object.
SET btree_jit.compile_mode = background;
SET btree_jit.verify = off;
SET btree_jit.compile_threshold = 6;
-- another shape no other test uses: (int2 DESC, int4 NULLS FIRST, int8 DESC
-- NULLS LAST)
CREATE TABLE bg_s (a int4, b int2, c int8);
INSERT INTO bg_s SELECT g % 500, g % 7, g FROM generate_series(1, 20000) g;
CREATE INDEX bg_s_idx ON bg_s (b DESC, a NULLS FIRST, c DESC NULLS LAST);
ANALYZE bg_s;
CREATE TEMP TABLE bg_n (n bigint);
-- below the threshold: pending, every search on the stock path and counted
SELECT count(*) FROM bg_s WHERE b = 3 AND a = 10;
SELECT state, jit_searches, stock_searches > 0 AS counted
  FROM btree_jit_index_stats() WHERE indexrelid = 'bg_s_idx'::regclass;
INSERT INTO bg_n SELECT stock_searches
  FROM btree_jit_index_stats() WHERE indexrelid = 'bg_s_idx'::regclass;
SELECT count(*) FROM bg_s WHERE b = 3 AND a = 10;
-- the same query, the same number of page searches
SELECT s.stock_searches = 2 * n.n AS same_count
  FROM btree_jit_index_stats() s, bg_n n WHERE s.indexrelid = 'bg_s_idx'::regclass;
-- over the threshold: queued, and still counted
SELECT count(*) FROM bg_s WHERE b = 3 AND a = 10;
SELECT count(*) FROM bg_s WHERE b = 3 AND a = 10;
SELECT state, reason, jit_searches
  FROM btree_jit_index_stats() WHERE indexrelid = 'bg_s_idx'::regclass;
UPDATE bg_n SET n = (SELECT stock_searches FROM btree_jit_index_stats()
                      WHERE indexrelid = 'bg_s_idx'::regclass);
SELECT count(*) FROM bg_s WHERE b = 3 AND a = 10;
SELECT s.state = 'jit' OR s.stock_searches > n.n AS counted_while_queued
  FROM btree_jit_index_stats() s, bg_n n WHERE s.indexrelid = 'bg_s_idx'::regclass;
-- the worker's compile is noticed by a search on the stock path
SELECT wait_while_queued('bg_s_idx', 'SELECT count(*) FROM bg_s WHERE b = 3 AND a = 10');
SELECT state, code_source FROM btree_jit_index_stats()
 WHERE indexrelid = 'bg_s_idx'::regclass;
SELECT * FROM check_queries(ARRAY[
  'SELECT a, b, c FROM bg_s WHERE b = 3 AND a = 10 ORDER BY b DESC, a, c DESC',
  'SELECT count(*) FROM bg_s WHERE b = 6 AND a BETWEEN 100 AND 200',
  'SELECT c FROM bg_s WHERE b = 0 AND a = 499 AND c < 10000 ORDER BY b DESC, a, c DESC']);
SELECT jit_searches > 0 AS compiled_searches
  FROM btree_jit_index_stats() WHERE indexrelid = 'bg_s_idx'::regclass;
-- a refused index (nine key columns) stays on the stock path, counted
CREATE TABLE bg_r (a int4, b int4, c int4, d int4, e int4, f int4, g int4,
                   h int4, i int4);
INSERT INTO bg_r SELECT g, g, g, g, g, g, g, g, g FROM generate_series(1, 2000) g;
CREATE INDEX bg_r_idx ON bg_r (a, b, c, d, e, f, g, h, i);
ANALYZE bg_r;
SELECT count(*) FROM bg_r WHERE a = 5;
SELECT count(*) FROM bg_r WHERE a = 5;
SELECT count(*) FROM bg_r WHERE a = 5;
SELECT count(*) FROM bg_r WHERE a = 5;
SELECT state, reason, jit_searches FROM btree_jit_index_stats()
 WHERE indexrelid = 'bg_r_idx'::regclass;
UPDATE bg_n SET n = (SELECT stock_searches FROM btree_jit_index_stats()
                      WHERE indexrelid = 'bg_r_idx'::regclass);
SELECT count(*) FROM bg_r WHERE a BETWEEN 5 AND 7;
SELECT s.stock_searches > n.n AS counted_when_refused
  FROM btree_jit_index_stats() s, bg_n n WHERE s.indexrelid = 'bg_r_idx'::regclass;
SELECT * FROM check_queries(ARRAY[
  'SELECT a FROM bg_r WHERE a BETWEEN 5 AND 7 AND b = 6']);

RESET btree_jit.compile_mode;
RESET btree_jit.compile_threshold;
RESET btree_jit.verify;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE bg_t, bg_s, bg_r;
DROP FUNCTION wait_while_queued(regclass, text);
