--
-- Compiled objects are shared through the object cache, and only a backend
-- that compiles loads LLVM: a backend whose shapes are all in the cache
-- links them with the module's own loader (objload.c), and a backend that
-- compiles nothing never maps LLVM at all.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btree_jit;
RESET client_min_messages;
CREATE FUNCTION btjit_llvm_mapped() RETURNS bool LANGUAGE sql AS
$$ SELECT pg_read_file('/proc/' || pg_backend_pid() || '/maps') ~ 'libLLVM' $$;

-- a shape no other test uses: (int2, int8 DESC, date)
CREATE TABLE oc (a int2, b int8, c date, v int);
INSERT INTO oc
  SELECT g % 7, g * 31 % 1000, date '2020-01-01' + g % 400, g
    FROM generate_series(1, 20000) g;
CREATE INDEX oc_abc ON oc (a, b DESC, c);
ANALYZE oc;

\c
SELECT btjit_llvm_mapped() AS llvm_at_start;
SELECT state, signature FROM btree_jit_compile('oc_abc');
SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'oc_abc'::regclass;
SELECT btjit_llvm_mapped() AS llvm_after_compiling;

-- a new backend finds the shape in the cache and links it without LLVM
\c
SELECT state, signature FROM btree_jit_compile('oc_abc');
SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'oc_abc'::regclass;
SELECT btjit_llvm_mapped() AS llvm_after_cached_load;

-- the code linked from the cache searches correctly: verify runs the
-- server's search beside every compiled one and raises an error on any
-- difference
SET btree_jit.verify = on;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(v) FROM oc WHERE a = 3 AND b BETWEEN 100 AND 300;
SELECT count(*), sum(v) FROM oc WHERE a = 5 AND b = 217 AND c > date '2020-06-01';
SELECT count(*), sum(v) FROM oc WHERE a >= 6 ORDER BY 1;
SET btree_jit.verify = off;
SET enable_seqscan = on;
SELECT count(*), sum(v) FROM oc WHERE a = 3 AND b BETWEEN 100 AND 300;
SELECT jit_searches > 0 AS searched_by_jit, verified_searches > 0 AS verified
  FROM btree_jit_index_stats() WHERE indexrelid = 'oc_abc'::regclass;
SELECT btjit_llvm_mapped() AS llvm_still_unmapped;

-- without the cache, compiling in a fresh backend loads LLVM
\c
SET btree_jit.object_cache = off;
SELECT state FROM btree_jit_compile('oc_abc');
SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'oc_abc'::regclass;
SELECT btjit_llvm_mapped() AS llvm_after_uncached_compile;

-- btree_jit.object_cache_max_files bounds the directory: at the bound a
-- newly compiled shape is stored in place of the least recently used
-- object, so the count stays at the bound and the next backend links it.
-- (Counts are taken once the bound is in force: then no backend, autovacuum
-- included, can add a file.)
CREATE TABLE oc2 (a oid, b bool);
INSERT INTO oc2 SELECT g, g % 3 = 0 FROM generate_series(1, 5000) g;
CREATE INDEX oc2_ab ON oc2 (a DESC, b);
SELECT count(*) AS n_objects FROM pg_ls_dir('btree_jit_cache') f WHERE f LIKE '%.o' \gset
SELECT :n_objects > 0 AS cache_has_objects;
ALTER SYSTEM SET btree_jit.object_cache_max_files = :n_objects;
SELECT pg_reload_conf();
\c
SELECT current_setting('btree_jit.object_cache_max_files')::int = :n_objects AS bound_in_force;
SELECT count(*) AS n_at_bound FROM pg_ls_dir('btree_jit_cache') f WHERE f LIKE '%.o' \gset
SELECT state, signature FROM btree_jit_compile('oc2_ab');
SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'oc2_ab'::regclass;
SELECT count(*) = :n_at_bound AS nothing_stored
  FROM pg_ls_dir('btree_jit_cache') f WHERE f LIKE '%.o';
ALTER SYSTEM RESET btree_jit.object_cache_max_files;
SELECT pg_reload_conf();
\c
SELECT current_setting('btree_jit.object_cache_max_files') AS bound_reset;
-- stored above, in place of the least recently used object: linked here
SELECT state FROM btree_jit_compile('oc2_ab');
SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'oc2_ab'::regclass;
\c
SELECT state FROM btree_jit_compile('oc2_ab');
SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'oc2_ab'::regclass;

DROP TABLE oc, oc2;
DROP FUNCTION btjit_llvm_mapped();
