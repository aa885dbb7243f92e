--
-- The leaf search of insertions (_bt_binsrch_insert) on compiled code:
-- unique and non-unique indexes, duplicates that go into posting lists and
-- split them, NULLs, DESC and NULLS FIRST columns, text keys, INCLUDE
-- columns.  verify is on: every compiled insertion search is compared with
-- the server's (offset, cached bounds, posting offset), and amcheck checks
-- every index afterwards against its table.
--
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
CREATE EXTENSION IF NOT EXISTS amcheck;

-- The compiled insertion searches of one index in this backend, as
-- booleans a test can assert.
CREATE FUNCTION insert_state(idx regclass, OUT state text,
                             OUT inserted_jit boolean, OUT verified boolean)
LANGUAGE sql AS $$
    SELECT s.state, s.jit_inserts > 0, s.verified_inserts > 0
      FROM btree_jit_index_stats() s WHERE s.indexrelid = idx
$$;

CREATE TABLE ins (id int4 PRIMARY KEY, grp int8, name text COLLATE "C",
                  d date, pad text);
CREATE INDEX ins_grp ON ins (grp);                       -- duplicates
CREATE INDEX ins_name_d ON ins (name DESC, d NULLS FIRST) INCLUDE (pad);
CREATE INDEX ins_d ON ins (d DESC NULLS LAST);

-- Keys in random order, so that every leaf gets insertions at every
-- position; a search of each index first, so each has compiled code.
SELECT count(*) FROM ins WHERE id = 1;
SELECT count(*) FROM ins WHERE grp = 1;
SELECT count(*) FROM ins WHERE name = 'x';
SELECT count(*) FROM ins WHERE d = '2020-01-01';
INSERT INTO ins
SELECT g, g % 50,
       CASE WHEN g % 97 = 0 THEN NULL ELSE md5((g % 3000)::text) END,
       CASE WHEN g % 31 = 0 THEN NULL ELSE date '2020-01-01' + g % 700 END,
       repeat('p', g % 30)
  FROM (SELECT g FROM generate_series(1, 30000) g ORDER BY md5(g::text)) s;

SELECT i.state, i.inserted_jit, i.verified
  FROM unnest(ARRAY['ins_pkey', 'ins_grp', 'ins_name_d', 'ins_d']::regclass[]) x,
       insert_state(x) i;

-- A unique violation is the server's own error, and nothing is inserted.
INSERT INTO ins VALUES (17, 1, 'a', NULL, NULL);
SELECT count(*) FROM ins WHERE id = 17;

-- Posting lists: ins_grp has 50 keys of 600 rows each, deduplicated.
CREATE EXTENSION IF NOT EXISTS pageinspect;
SELECT count(*) > 0 AS has_posting_lists
  FROM bt_page_items('ins_grp', 1) WHERE tids IS NOT NULL;

-- Free heap space in the middle of the table, then insert duplicates: the
-- new rows reuse low heap TIDs, which fall inside existing posting lists
-- and make the insertion split them (the compiled search hands those to
-- the server's own code, which finds the position in the list).
DELETE FROM ins WHERE id % 3 = 0 AND id < 20000;
VACUUM ins;
INSERT INTO ins
SELECT 100000 + g, g % 50, md5(g::text), date '2021-01-01' + g % 10, 'q'
  FROM generate_series(1, 6000) g;
SELECT count(*) FROM ins;

-- Each index holds exactly the table's rows, in order, with sound pages.
SELECT bt_index_parent_check(x, heapallindexed => true)
  FROM unnest(ARRAY['ins_pkey', 'ins_grp', 'ins_name_d', 'ins_d']::regclass[]) x;

-- The same rows with the module on and off.
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT id FROM ins WHERE id BETWEEN 100 AND 160 ORDER BY id',
    'SELECT count(*) FROM ins WHERE grp = 7',
    'SELECT name, d FROM ins WHERE name > ''f'' ORDER BY name DESC, d NULLS FIRST LIMIT 20',
    'SELECT count(*) FROM ins WHERE d IS NULL',
    'SELECT count(*) FROM ins WHERE d = ''2021-01-05''']);

-- A unique index checked on every insertion (_bt_check_unique searches
-- the leaf with the bounds cache, then the insertion reuses them), with
-- deleted-but-not-vacuumed duplicates in the way.
CREATE TABLE uq (k int8, v text);
CREATE UNIQUE INDEX uq_k ON uq (k DESC);
SELECT count(*) FROM uq WHERE k = 1;
INSERT INTO uq SELECT g, 'v' FROM generate_series(1, 5000) g;
DELETE FROM uq WHERE k % 2 = 0;
INSERT INTO uq SELECT g, 'w' FROM generate_series(2, 5000, 2) g;
INSERT INTO uq VALUES (10, 'dup');
UPDATE uq SET v = 'u' WHERE k % 5 = 0;
SELECT count(*), count(DISTINCT k) FROM uq;
SELECT bt_index_parent_check('uq_k', heapallindexed => true);
SELECT i.state, i.inserted_jit, i.verified FROM insert_state('uq_k') i;

-- With the module off, insertions use the server's code and count nothing.
SET btree_jit.enabled = off;
CREATE TEMP TABLE before AS
  SELECT jit_inserts FROM btree_jit_index_stats()
   WHERE indexrelid = 'ins_pkey'::regclass;
INSERT INTO ins VALUES (200000, 1, 'z', NULL, NULL);
RESET btree_jit.enabled;
SELECT s.jit_inserts = b.jit_inserts AS off_counts_nothing
  FROM btree_jit_index_stats() s, before b
 WHERE s.indexrelid = 'ins_pkey'::regclass;

DROP TABLE ins, uq;
DROP FUNCTION insert_state(regclass);
RESET btree_jit.compile_threshold;
RESET btree_jit.verify;
