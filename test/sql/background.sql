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
DO $$
DECLARE
  st text;
BEGIN
  FOR i IN 1..600 LOOP
    PERFORM count(*) FROM bg_t WHERE a = 7 AND b > 100;
    SELECT state INTO st FROM btree_jit_index_stats()
     WHERE indexrelid = 'bg_t_idx'::regclass;
    EXIT WHEN st <> 'queued';
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
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

RESET btree_jit.compile_mode;
RESET btree_jit.compile_threshold;
RESET btree_jit.verify;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE bg_t;
