--
-- test/zoo/probe.sql - the zoo's probe of a build: the module off, on, and
-- on with verify must return the same rows, and the compiled code must
-- have answered.  Each check prints "ok NAME" or "FAIL NAME: detail"
-- (check-build.sh fails on any FAIL, or on no ok at all).
-- psql variable expect_compiled: on (a build the module is active on), off
-- (one it refused at start-up, which must still run every query right).
--
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btree_jit;
CREATE EXTENSION IF NOT EXISTS amcheck;
SET btree_jit.compile_mode = inline;
SET btree_jit.compile_threshold = 0;

CREATE TABLE zoo_pk (id int4 PRIMARY KEY, v int8);
INSERT INTO zoo_pk SELECT g * 3, g FROM generate_series(1, 200000) g;
CREATE TABLE zoo_probe (k4 int4, k8 int8);
INSERT INTO zoo_probe SELECT k, k FROM (SELECT (hashint4(g) & 1048575) AS k FROM generate_series(1, 20000) g) s;
CREATE TABLE zoo_asof (dev int4, at timestamptz, val float8);
INSERT INTO zoo_asof SELECT g % 100, '2026-01-01'::timestamptz + g * interval '1 s', g
  FROM generate_series(1, 100000) g;
CREATE INDEX zoo_asof_idx ON zoo_asof (dev, at);
ANALYZE zoo_pk, zoo_probe, zoo_asof;

SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- the queries, each reduced to one digest of its rows in a fixed order
CREATE TEMP TABLE zoo_queries (name text, q text);
INSERT INTO zoo_queries VALUES
  ('join int4 = int4', $$SELECT md5(string_agg(p.k4 || ':' || coalesce(t.v::text, '-'), ',' ORDER BY p.k4))
      FROM zoo_probe p LEFT JOIN LATERAL (SELECT v FROM zoo_pk WHERE id = p.k4) t ON true$$),
  ('join int4 = int8', $$SELECT md5(string_agg(p.k8 || ':' || coalesce(t.v::text, '-'), ',' ORDER BY p.k8))
      FROM zoo_probe p LEFT JOIN LATERAL (SELECT v FROM zoo_pk WHERE id = p.k8) t ON true$$),
  ('as of', $$SELECT md5(string_agg(d || ':' || coalesce(t.val::text, '-'), ',' ORDER BY d))
      FROM generate_series(0, 99) d LEFT JOIN LATERAL
        (SELECT val FROM zoo_asof WHERE dev = d AND at <= '2026-01-01 12:00'::timestamptz
          ORDER BY at DESC LIMIT 1) t ON true$$),
  ('backward range', $$SELECT md5(string_agg(id || ':' || v, ',' ORDER BY id DESC))
      FROM (SELECT id, v FROM zoo_pk WHERE id BETWEEN 1000 AND 90000 ORDER BY id DESC) s$$);

CREATE TEMP TABLE zoo_digest (name text, arm text, digest text);
CREATE FUNCTION zoo_run(arm text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  r record;
  d text;
BEGIN
  FOR r IN SELECT * FROM zoo_queries LOOP
    EXECUTE r.q INTO d;
    INSERT INTO zoo_digest VALUES (r.name, arm, d);
  END LOOP;
END $$;

SET btree_jit.enabled = off;
SELECT zoo_run('off');
SET btree_jit.enabled = on;
SELECT zoo_run('on');
SET btree_jit.verify = on;
SELECT zoo_run('verify');

-- inserts through the compiled insertion search, with verify still on
INSERT INTO zoo_pk SELECT g * 3 + 1, g FROM generate_series(1, 50000) g;
SELECT zoo_run('after insert, verify');
SET btree_jit.enabled = off;
SELECT zoo_run('after insert, off');
SET btree_jit.enabled = on;

SELECT CASE WHEN count(DISTINCT digest) = 1 AND count(*) = 3 AND bool_and(digest IS NOT NULL)
            THEN 'ok equal: ' || name
            ELSE 'FAIL equal: ' || name || ': ' || string_agg(arm || '=' || coalesce(digest, 'NULL'), ' ' ORDER BY arm) END
  FROM zoo_digest WHERE arm IN ('off', 'on', 'verify') GROUP BY name ORDER BY name;
SELECT CASE WHEN count(DISTINCT digest) = 1 AND count(*) = 2
            THEN 'ok equal after insert: ' || name
            ELSE 'FAIL equal after insert: ' || name END
  FROM zoo_digest WHERE arm LIKE 'after insert%' GROUP BY name ORDER BY name;

-- the compiled code answered, and verify compared it with the server's
-- (one line per index whether or not the module lists it: an index it
-- does not know is a FAIL, not a missing line)
\if :expect_compiled
CREATE TEMP TABLE zoo_stats AS
  SELECT i.idx, s.* FROM (VALUES ('zoo_pk_pkey'::regclass), ('zoo_asof_idx'::regclass)) i (idx)
    LEFT JOIN btree_jit_index_stats() s ON s.indexrelid = i.idx;
SELECT CASE WHEN state = 'jit' AND jit_searches > 0 AND verified_searches > 0
            THEN 'ok compiled search: ' || idx::text
            ELSE 'FAIL compiled search: ' || idx::text || ': state ' || coalesce(state, 'none') ||
                 coalesce(' (' || reason || ')', '') || ', ' || coalesce(jit_searches, 0) || ' searches, ' ||
                 coalesce(verified_searches, 0) || ' verified' END
  FROM zoo_stats ORDER BY 1;
SELECT CASE WHEN jit_inserts > 0 AND verified_inserts > 0
            THEN 'ok compiled insertion search'
            ELSE 'FAIL compiled insertion search: ' || coalesce(jit_inserts, 0) || ' inserts, ' ||
                 coalesce(verified_inserts, 0) || ' verified' END
  FROM zoo_stats WHERE idx = 'zoo_pk_pkey'::regclass;
SELECT CASE WHEN jit_leafreads > 0 AND verified_leafreads > 0
            THEN 'ok compiled leaf read: ' || idx::text
            ELSE 'FAIL compiled leaf read: ' || idx::text || ': ' || coalesce(jit_leafreads, 0) || ' reads, ' ||
                 coalesce(verified_leafreads, 0) || ' verified' END
  FROM zoo_stats ORDER BY 1;
\else
-- a build the module refused at start-up: the server's code answered all
SELECT CASE WHEN NOT active THEN 'ok stock code only: the module is inactive'
            ELSE 'FAIL stock code only: the module is active' END
  FROM btree_jit_status();
\endif

-- the index the compiled insertion search wrote is sound
SELECT bt_index_parent_check('zoo_pk_pkey', true);
SELECT 'ok amcheck: zoo_pk_pkey';
