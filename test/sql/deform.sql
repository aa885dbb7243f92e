--
-- An index-only scan's row taken out of its index tuple
-- (index_deform_tuple_internal, 15 to 18): for an index whose columns all
-- have a fixed width, the module fetches each column of a tuple without
-- NULLs at an offset worked out once per index.  The rows must be the
-- server's for every fixed-width kind of column (by value of each width,
-- negative values among them, and by reference), INCLUDE columns, and
-- columns at padded offsets; a tuple with NULLs and an index with a column
-- of variable width are the server's.
-- verify must compare every tuple the module takes apart; the fast path
-- counts them; the module off counts none.  On a release the module was
-- not checked against, or on 19, the server deforms: the counters stay
-- zero.
--
SET btree_jit.compile_threshold = 0;
SET client_min_messages = warning;	-- earlier tests may have created it
CREATE EXTENSION IF NOT EXISTS btree_jit;
RESET client_min_messages;

SELECT redirected('index_deform_tuple_internal') AS deform_redirected \gset

-- Fixed-width columns of every fetch: "char" (1 byte), int2, int4, int8
-- and float8 (by value), uuid and interval (by reference), with the
-- alignment padding between them that the order below forces.
CREATE TABLE df (id int4 PRIMARY KEY, c "char", s int2, b int8, f float8,
                 u uuid, iv interval, t text, n int4)
  WITH (autovacuum_enabled = off);
INSERT INTO df
SELECT i,
       chr(((i * 37) % 254) + 1)::"char",	-- bytes above 127: negative
       (i * 7919 % 65535 - 32767)::int2,
       (i::int8 * 1000003 - 50000000000)::int8,
       i * 0.37 - 900,
       md5(i::text)::uuid,
       make_interval(days => i % 40, secs => i),
       'text ' || i,
       CASE WHEN i % 5 = 0 THEN NULL ELSE -i END
  FROM generate_series(1, 6000) i;
-- by value of one and two bytes, then eight (padded after the int2)
CREATE INDEX df_csb ON df (c, s, b);
-- int4 then int8 (padded), with a by-reference INCLUDE column
CREATE INDEX df_idb ON df (id, b) INCLUDE (u);
-- by reference first, then by value at an offset past sixteen bytes
CREATE INDEX df_ui ON df (u, id);
-- interval (16 bytes by reference, double-aligned) then int2
CREATE INDEX df_ivs ON df (iv, s);
CREATE INDEX df_f ON df (f DESC);
-- a column with NULLs: tuples with a NULL are the server's
CREATE INDEX df_n ON df (n);
-- a column of variable width: the whole index is the server's
CREATE INDEX df_tid ON df (t, id);
VACUUM ANALYZE df;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- index-only scans, both directions
EXPLAIN (COSTS OFF) SELECT c, s, b FROM df WHERE c > 'a' ORDER BY c, s, b;
CREATE TABLE df_queries (idx regclass, q text);
INSERT INTO df_queries VALUES
    ('df_csb', 'SELECT c, s, b FROM df WHERE c >= ''A'' ORDER BY c, s, b'),
    ('df_csb', 'SELECT c, s, b FROM df WHERE c < ''z'' ORDER BY c DESC, s DESC, b DESC'),
    ('df_idb', 'SELECT id, b, u FROM df WHERE id BETWEEN 100 AND 3000 ORDER BY id'),
    ('df_idb', 'SELECT id, b, u FROM df WHERE id > 10 ORDER BY id DESC, b DESC'),
    ('df_ui', 'SELECT u, id FROM df WHERE u > ''80000000-0000-0000-0000-000000000000'' ORDER BY u'),
    ('df_ivs', 'SELECT iv, s FROM df WHERE iv BETWEEN ''5 days'' AND ''20 days'' ORDER BY iv, s'),
    ('df_f', 'SELECT f FROM df WHERE f < 100 ORDER BY f DESC'),
    ('df_n', 'SELECT n FROM df WHERE n < -10 ORDER BY n'),
    ('df_tid', 'SELECT t, id FROM df WHERE t > ''text 5'' ORDER BY t, id');

CREATE FUNCTION deforms(idx regclass, OUT deforms bigint, OUT verified bigint)
LANGUAGE sql AS $$ SELECT jit, verified FROM jit_counts(idx, 'deforms') $$;

-- verify: every tuple taken apart the server's way too, and compared
SET btree_jit.verify = on;
CREATE TEMP TABLE df_before AS
  SELECT q.idx, d.* FROM (SELECT DISTINCT idx FROM df_queries) q, deforms(q.idx) d;
SELECT checked, failures FROM check_queries(ARRAY(SELECT q FROM df_queries));
SELECT b.idx,
       (d.deforms > b.deforms) =
         (:'deform_redirected' AND b.idx <> 'df_tid'::regclass) AS counted_as_expected,
       d.verified - b.verified = d.deforms - b.deforms AS every_one_verified
  FROM df_before b, deforms(b.idx) d ORDER BY b.idx::text;

-- A tuple with a NULL goes to the server: a scan of NULLs alone counts none.
SELECT deforms AS before_deforms FROM deforms('df_n') \gset
EXPLAIN (COSTS OFF) SELECT count(*) FROM df WHERE n IS NULL;
SELECT count(*) FROM df WHERE n IS NULL;
SELECT deforms = :before_deforms AS nulls_not_counted FROM deforms('df_n');

-- The fast path: counted, one per row of an index-only scan whose tuples
-- have no NULLs (the first row's tuple is the server's unless the last
-- step taken was in the same index: the descriptor is the step's), not
-- verified.
SET btree_jit.verify = off;
SELECT deforms AS before_deforms, verified AS before_verified
  FROM deforms('df_idb') \gset
SELECT checked, failures FROM check_queries(ARRAY(SELECT q FROM df_queries));
SELECT deforms AS mid_deforms FROM deforms('df_idb') \gset
EXPLAIN (COSTS OFF) SELECT count(*), sum(b), count(u) FROM df WHERE id BETWEEN 2001 AND 2900;
SELECT count(*) AS rows_read, sum(b), count(u) FROM df WHERE id BETWEEN 2001 AND 2900 \gset
SELECT :rows_read AS rows_read;
SELECT (deforms > :before_deforms) = :'deform_redirected' AS fast_counted,
       (deforms - :mid_deforms BETWEEN :rows_read - 1 AND :rows_read) =
         :'deform_redirected' AS one_per_row,
       verified = :before_verified AS fast_not_verified
  FROM deforms('df_idb');

-- The module off: the server's function, none counted.
SELECT deforms AS before_deforms FROM deforms('df_idb') \gset
SET btree_jit.enabled = off;
SELECT count(*), sum(b), count(u) FROM df WHERE id > 100;
RESET btree_jit.enabled;
SELECT deforms = :before_deforms AS off_not_counted FROM deforms('df_idb');

RESET enable_seqscan;
RESET enable_bitmapscan;
RESET btree_jit.verify;
DROP TABLE df, df_queries, df_before;
DROP FUNCTION deforms(regclass);
