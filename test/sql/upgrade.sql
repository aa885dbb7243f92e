--
-- Extension versions: 1.0 updates to 1.1 (the cluster-wide statistics),
-- 1.2 (the compile worker's columns in btree_jit_status(), the insertion
-- search's counts in the per-index functions and the view), 1.3 (the
-- scan-key checks' counts in the same places), 1.4 (the leaf reads'
-- counts in the same places) and 1.5 (the B-tree builds' counts in the
-- same places), each version's
-- functions work with this module, and the updated extension has exactly
-- the objects of a fresh install.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS btree_jit;
RESET client_min_messages;

CREATE EXTENSION btree_jit VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'btree_jit';
SELECT to_regclass('btree_jit_indexes') IS NULL AS no_view_in_1_0;
-- the 1.0 functions work with the module of 1.1
SELECT active FROM btree_jit_status();

CREATE TEMP TABLE objects_updated AS
  SELECT pg_describe_object(classid, objid, 0) AS object
    FROM pg_depend
   WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'btree_jit')
   LIMIT 0;

ALTER EXTENSION btree_jit UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'btree_jit';
-- 1.1's functions (12-column btree_jit_status() and btree_jit_index_stats(),
-- 16-column btree_jit_index_counters()) work with the module of 1.2
SELECT active, compiles >= 0 AS has_compiles FROM btree_jit_status();
SELECT count(*) >= 0 AS stats_1_1 FROM btree_jit_index_stats();
SELECT count(*) >= 0 AS view_1_1 FROM btree_jit_indexes;

ALTER EXTENSION btree_jit UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'btree_jit';
SELECT active, worker_pid IS NOT NULL AS worker_running,
       queue_length >= 0 AS has_queue, worker_failures
  FROM btree_jit_status();
-- 1.2's 14-column btree_jit_index_stats() and 18-column
-- btree_jit_index_counters() work with the module of 1.3
SELECT count(*) >= 0 AS stats_1_2, bool_and(jit_inserts >= 0) IS NOT FALSE AS inserts_1_2
  FROM btree_jit_index_stats();
SELECT count(*) >= 0 AS view_1_2 FROM btree_jit_indexes;

ALTER EXTENSION btree_jit UPDATE TO '1.3';
SELECT extversion FROM pg_extension WHERE extname = 'btree_jit';
-- 1.3 adds the scan-key checks; its 16-column btree_jit_index_stats() and
-- 20-column btree_jit_index_counters() work with the module of 1.4
SELECT count(*) >= 0 AS stats_1_3, bool_and(jit_checks >= 0 AND verified_checks >= 0) IS NOT FALSE AS checks_1_3
  FROM btree_jit_index_stats();
SELECT count(*) >= 0 AS view_1_3, bool_and(jit_checks >= 0) IS NOT FALSE AS view_checks_1_3
  FROM btree_jit_indexes;

ALTER EXTENSION btree_jit UPDATE TO '1.4';
SELECT extversion FROM pg_extension WHERE extname = 'btree_jit';
-- 1.4 adds the leaf reads; its 20-column btree_jit_index_stats() and
-- 24-column btree_jit_index_counters() work with the module of 1.5
SELECT count(*) >= 0 AS stats_1_4, bool_and(jit_leafreads >= 0 AND verified_leafreads >= 0) IS NOT FALSE AS leafreads_1_4,
       bool_and(stock_checks >= 0 AND stock_leafreads >= 0) IS NOT FALSE AS stock_1_4
  FROM btree_jit_index_stats();
SELECT count(*) >= 0 AS view_1_4, bool_and(jit_leafreads >= verified_leafreads) IS NOT FALSE AS view_leafreads_1_4,
       bool_and(stock_leafreads >= 0) IS NOT FALSE AS view_stock_1_4
  FROM btree_jit_indexes;

ALTER EXTENSION btree_jit UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'btree_jit';
-- 1.5 adds the builds (jit_builds, verified_builds), their sorts'
-- comparisons (jit_build_compares, verified_build_compares) and presorts
-- (jit_build_presorts, verified_build_presorts), and the key image
-- comparisons (jit_image_compares, verified_image_compares), and the
-- descent's page reads through a remembered buffer (jit_recent_roots,
-- jit_recent_reads, jit_recent_steps and their verified_ counts)
SELECT count(*) >= 0 AS stats_1_5,
       bool_and(jit_builds >= 0 AND verified_builds >= 0 AND
                jit_build_compares >= 0 AND verified_build_compares >= 0 AND
                jit_build_presorts >= 0 AND verified_build_presorts >= 0 AND
                jit_image_compares >= 0 AND verified_image_compares >= 0) IS NOT FALSE AS builds_1_5,
       bool_and(jit_recent_roots >= verified_recent_roots AND
                jit_recent_reads >= verified_recent_reads AND
                jit_recent_steps >= verified_recent_steps) IS NOT FALSE AS recent_1_5
  FROM btree_jit_index_stats();
SELECT count(*) >= 0 AS view_1_5,
       bool_and(jit_builds >= 0 AND verified_builds >= 0 AND
                jit_build_compares >= 0 AND verified_build_compares >= 0 AND
                jit_build_presorts >= 0 AND verified_build_presorts >= 0 AND
                jit_image_compares >= 0 AND verified_image_compares >= 0) IS NOT FALSE AS view_builds_1_5,
       bool_and(jit_recent_roots >= verified_recent_roots AND
                jit_recent_reads >= verified_recent_reads AND
                jit_recent_steps >= verified_recent_steps) IS NOT FALSE AS view_recent_1_5
  FROM btree_jit_indexes;

INSERT INTO objects_updated
  SELECT pg_describe_object(classid, objid, 0)
    FROM pg_depend
   WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'btree_jit');

DROP EXTENSION btree_jit;
CREATE EXTENSION btree_jit;
SELECT extversion FROM pg_extension WHERE extname = 'btree_jit';

-- same objects either way
SELECT object FROM objects_updated
EXCEPT
SELECT pg_describe_object(classid, objid, 0)
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'btree_jit');
SELECT pg_describe_object(classid, objid, 0)
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'btree_jit')
EXCEPT
SELECT object FROM objects_updated
ORDER BY 1;

-- (17 and later also list the view's row types as members)
SELECT object FROM objects_updated WHERE object NOT LIKE 'type %' ORDER BY 1;

-- the view's columns
SELECT attname, format_type(atttypid, atttypmod)
  FROM pg_attribute
 WHERE attrelid = 'btree_jit_indexes'::regclass AND attnum > 0
 ORDER BY attnum;

-- the per-index functions' number of columns and their last twenty-five:
-- 1.5's after 1.4's stock_leafreads
SELECT p.proname, array_length(p.proargnames, 1) AS columns, a.n, a.name
  FROM pg_proc p, unnest(p.proargnames) WITH ORDINALITY a(name, n)
 WHERE p.proname IN ('btree_jit_index_stats', 'btree_jit_index_counters')
   AND p.pronamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'btree_jit')
   AND a.n > array_length(p.proargnames, 1) - 25
 ORDER BY p.proname, a.n;

-- this session's searches are in the view once its transaction ended
CREATE TABLE upgrade_t (id int PRIMARY KEY);
INSERT INTO upgrade_t SELECT generate_series(1, 1000);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT btree_jit_reset();
DO $$ BEGIN FOR i IN 1..100 LOOP PERFORM id FROM upgrade_t WHERE id = i; END LOOP; END $$;
SELECT indexname, tablename, schemaname, jit_searches + stock_searches AS searches
  FROM btree_jit_indexes WHERE indexname = 'upgrade_t_pkey';
-- its build counts are filled in, in the view and in this backend's function
SELECT jit_builds >= 0 AND verified_builds >= 0 AND
       jit_build_compares >= 0 AND verified_build_compares >= 0 AND
       jit_build_presorts >= 0 AND verified_build_presorts >= 0 AND
       jit_image_compares >= 0 AND verified_image_compares >= 0 AND
       jit_recent_roots >= verified_recent_roots AND
       jit_recent_steps >= verified_recent_steps AS view_build_counts
  FROM btree_jit_indexes WHERE indexname = 'upgrade_t_pkey';
SELECT jit_builds >= 0 AND verified_builds >= 0 AND
       jit_build_compares >= 0 AND verified_build_compares >= 0 AND
       jit_build_presorts >= 0 AND verified_build_presorts >= 0 AND
       jit_image_compares >= 0 AND verified_image_compares >= 0 AND
       jit_recent_roots >= verified_recent_roots AND
       jit_recent_steps >= verified_recent_steps AS build_counts
  FROM btree_jit_index_stats() WHERE indexrelid = 'upgrade_t_pkey'::regclass;
SELECT max_indexes, entries > 0 AS has_entries, evictions FROM btree_jit_indexes_info();
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE upgrade_t;
