--
-- Index builds on compiled code: the sort of CREATE INDEX and REINDEX
-- compares with the compiled build comparator of the index's key shape.
-- verify is on: every comparison of every build is made by the compiled
-- comparator and by the server's, and must order the pair the same way;
-- amcheck then checks each index against its table (order, and every heap
-- tuple present).  Shapes: integer keys with duplicates, NULLs in any
-- column, DESC and NULLS FIRST, text in the C collation (abbreviated
-- leading keys) and in an ICU collation (called through the sort's own
-- comparator), numeric, float8 with NaN and -0, uuid, bpchar, INCLUDE
-- columns, expressions; unique indexes, their duplicate error, NULLS NOT
-- DISTINCT; REINDEX; a parallel build; a build too small to compile.
--
SET btree_jit.verify = on;
SET btree_jit.build_compile_rows = 0;
SET max_parallel_maintenance_workers = 0;
SET client_min_messages = warning;	-- insert may have created it
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;

-- What the builds of one index did in this backend, as booleans.
CREATE FUNCTION build_state(idx regclass, OUT built_jit boolean,
                            OUT compared_jit boolean, OUT verified boolean)
LANGUAGE sql AS $$
    SELECT s.jit_builds > 0, s.jit_build_compares > 0,
           s.verified_build_compares = s.jit_build_compares
           AND s.verified_builds = s.jit_builds
      FROM btree_jit_index_stats() s WHERE s.indexrelid = idx
$$;

CREATE TABLE bld (id int4, a int4, b int8, c int4, t text COLLATE "C",
                  u text COLLATE "und-x-icu", n numeric, f float8,
                  q uuid, ch char(6), pad text);
INSERT INTO bld
SELECT g, g % 97, (g::int8 * 7919) % 1000,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g::int8 * 104729 % 100003)::int4 END,
       CASE WHEN g % 17 = 0 THEN NULL
            ELSE repeat(chr(97 + g % 5), g % 3) || md5((g % 4000)::text) END,
       md5((g % 3000)::text) || 'É',
       CASE WHEN g % 11 = 0 THEN NULL ELSE ((g % 500) - 250)::numeric / 7 END,
       CASE WHEN g % 101 = 0 THEN 'NaN'::float8
            WHEN g % 103 = 0 THEN '-0'::float8
            ELSE ((g * 31) % 1000) / 8.0 END,
       md5((g % 9000)::text)::uuid,
       substr(md5(g::text), 1, g % 7),
       repeat('p', g % 20)
  FROM (SELECT g FROM generate_series(1, 30000) g ORDER BY md5(g::text)) s;

CREATE INDEX bld_int3 ON bld (a, b, c);
CREATE INDEX bld_desc ON bld (c DESC NULLS FIRST, a NULLS FIRST);
CREATE INDEX bld_text_c ON bld (t, a);
CREATE INDEX bld_text_icu ON bld (u, id);
CREATE INDEX bld_numeric ON bld (n DESC, f);
CREATE INDEX bld_float_uuid ON bld (f, q);
CREATE INDEX bld_bpchar ON bld (ch) INCLUDE (pad);
CREATE INDEX bld_expr ON bld ((a * 2), lower(t));

SELECT x AS index, s.*
  FROM unnest(ARRAY['bld_int3', 'bld_desc', 'bld_text_c', 'bld_text_icu',
                    'bld_numeric', 'bld_float_uuid', 'bld_bpchar',
                    'bld_expr']::regclass[]) x,
       build_state(x) s;
-- Up to 18 the module also orders a build's tuples before the server's
-- sort (which then finds them sorted) where the leading key is an integer
-- and there is more than one key column; verify checks every pair of
-- neighbours with the server's comparator.  19's sort state is not
-- mirrored.
SELECT x.idx AS index,
       (s.jit_build_presorts > 0) =
       (x.int_leading AND current_setting('server_version_num')::int < 190000)
       AS presorted_as_expected,
       s.verified_build_presorts = s.jit_build_presorts AS verified
  FROM (VALUES ('bld_int3'::regclass, true), ('bld_desc', true),
               ('bld_expr', true), ('bld_text_c', false),
               ('bld_numeric', false)) x(idx, int_leading),
       btree_jit_index_stats() s
 WHERE s.indexrelid = x.idx;
-- Up to 18 the load's deduplication compares each tuple's key with the
-- pending posting list's as images (_bt_keep_natts_fast) on compiled code;
-- verify compares each answer with the server's.  float8 and numeric keys
-- are not deduplicated (equal values may differ as images): no such
-- comparisons.  A tuple with NULLs goes to the server's function.
SELECT x.idx AS index,
       (s.jit_image_compares > 0) =
       (x.dedup AND current_setting('server_version_num')::int < 190000)
       AS compared_as_expected,
       s.verified_image_compares = s.jit_image_compares AS verified
  FROM (VALUES ('bld_int3'::regclass, true), ('bld_desc', true),
               ('bld_text_c', true), ('bld_float_uuid', false),
               ('bld_numeric', false)) x(idx, dedup),
       btree_jit_index_stats() s
 WHERE s.indexrelid = x.idx;
SELECT x AS index, bt_index_parent_check(x, true)
  FROM unnest(ARRAY['bld_int3', 'bld_desc', 'bld_text_c', 'bld_text_icu',
                    'bld_numeric', 'bld_float_uuid', 'bld_bpchar',
                    'bld_expr']::regclass[]) x;

-- Unique indexes: a build over distinct keys succeeds; one over a
-- duplicate key fails with the server's own error, naming the key.
-- (A single integer key without duplicates may be sorted on its leading
-- keys alone, without a call of the comparator: up to 18 it is.)
CREATE UNIQUE INDEX bld_id ON bld (id);
CREATE UNIQUE INDEX bld_id_a ON bld (a, id DESC);
SELECT x AS index, s.built_jit, s.verified
  FROM unnest(ARRAY['bld_id', 'bld_id_a']::regclass[]) x, build_state(x) s;
SELECT compared_jit FROM build_state('bld_id_a');
SELECT bt_index_parent_check('bld_id', true), bt_index_parent_check('bld_id_a', true);
CREATE UNIQUE INDEX bld_dup ON bld ((CASE WHEN id = 7001 THEN 7 ELSE id END) DESC, (id % 1));
SELECT count(*) FROM pg_class WHERE relname = 'bld_dup';

-- NULLs are distinct in a unique index by default; not with NULLS NOT
-- DISTINCT, whose build then fails on them.
CREATE TABLE bld_nulls (k int4, v int4);
INSERT INTO bld_nulls SELECT g, CASE WHEN g % 10 = 0 THEN NULL ELSE g END
  FROM generate_series(1, 5000) g;
CREATE UNIQUE INDEX bld_nulls_distinct ON bld_nulls (v);
SELECT * FROM build_state('bld_nulls_distinct');
CREATE UNIQUE INDEX bld_nulls_not_distinct ON bld_nulls (v) NULLS NOT DISTINCT;

-- REINDEX builds again, with the same comparator.
REINDEX INDEX bld_text_c;
SELECT * FROM build_state('bld_text_c');
SELECT bt_index_parent_check('bld_text_c', true);

-- A parallel build: each participant sorts its part with compiled code
-- (the workers link what the leader compiled before they started), and the
-- leader merges their runs with it.  Whatever the cluster's view counts
-- beyond this backend's own counts was compared by the workers.  (A build's
-- leader always scans too: the table is large enough for the workers to
-- get a share of it.)
CREATE TABLE bld_big AS
SELECT (g::int8 * 7919 % 1000)::int4 AS b, g % 97 AS a, g AS id
  FROM generate_series(1, 400000) g;
ALTER TABLE bld_big SET (parallel_workers = 2);
SET max_parallel_maintenance_workers = 2;
SET maintenance_work_mem = '128MB';
CREATE INDEX bld_par ON bld_big (b, a, id);
RESET maintenance_work_mem;
SET max_parallel_maintenance_workers = 0;
SELECT * FROM build_state('bld_par');
SELECT bt_index_parent_check('bld_par', true);
DO $$
BEGIN
    FOR i IN 1..100 LOOP
        EXIT WHEN (SELECT v.jit_build_compares > s.jit_build_compares
                     FROM btree_jit_indexes v, btree_jit_index_stats() s
                    WHERE v.indexname = 'bld_par'
                      AND s.indexrelid = v.indexrelid);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
SELECT v.jit_build_compares > s.jit_build_compares AS workers_compared_jit,
       v.verified_build_compares = v.jit_build_compares AS all_verified
  FROM btree_jit_indexes v, btree_jit_index_stats() s
 WHERE v.indexname = 'bld_par' AND s.indexrelid = v.indexrelid;

-- A build smaller than btree_jit.build_compile_rows compiles nothing and
-- sorts with the server's comparator; so does every build with the module
-- off.
CREATE TABLE bld_small (k int2, v float4);
INSERT INTO bld_small SELECT g % 300, g / 7.0 FROM generate_series(1, 2000) g;
RESET btree_jit.build_compile_rows;
CREATE INDEX bld_small_kv ON bld_small (k, v);
SELECT jit_builds, jit_build_compares
  FROM btree_jit_index_stats() WHERE indexrelid = 'bld_small_kv'::regclass;
SET btree_jit.build_compile_rows = 0;
SET btree_jit.enabled = off;
CREATE INDEX bld_small_vk ON bld_small (v, k);
SELECT count(*) FROM btree_jit_index_stats()
 WHERE indexrelid = 'bld_small_vk'::regclass AND jit_build_compares > 0;
RESET btree_jit.enabled;
SELECT bt_index_parent_check('bld_small_kv', true), bt_index_parent_check('bld_small_vk', true);

DROP TABLE bld, bld_nulls, bld_small, bld_big;
DROP FUNCTION build_state;
RESET btree_jit.build_compile_rows;
RESET max_parallel_maintenance_workers;
RESET btree_jit.verify;
