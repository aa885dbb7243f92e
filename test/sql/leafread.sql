--
-- The leaf read (_bt_readpage; the module's own on 15, the server's on
-- 17, 18 and 19).  What its walk must get right beyond the keys: posting
-- lists (a deduplicated index), index-only scans (the tuples copied, a
-- posting list's key part only), both directions, LIMIT 1 and "as of"
-- lookups, and dead items, which an earlier scan marks and a later one
-- skips (a backward scan still tests a dead first item).  First with
-- verify on: every leaf read is also run by the server, from the same scan
-- position, and every byte of the position and of the copied tuples must
-- agree.  Then with verify off, so that the rows come from the module's
-- walk alone, compared with the module off.
--
SET btree_jit.compile_threshold = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE lr (k int4 NOT NULL, v int4 NOT NULL, pad text);
INSERT INTO lr
SELECT g % 50, g, repeat('x', g % 9) FROM generate_series(1, 30000) g;
CREATE INDEX lr_k ON lr (k);
CREATE INDEX lr_kv ON lr (k, v DESC) INCLUDE (pad);
VACUUM ANALYZE lr;

CREATE TABLE lr_queries (q text);
INSERT INTO lr_queries VALUES
  ('SELECT k, count(*) FROM lr WHERE k BETWEEN 10 AND 20 GROUP BY k'),
  ('SELECT k FROM lr WHERE k >= 47'),
  ('SELECT k FROM lr WHERE k < 3 ORDER BY k DESC'),
  ('SELECT k FROM lr WHERE k <= 30 ORDER BY k DESC LIMIT 5'),
  ('SELECT k, v, pad FROM lr WHERE k = 7 AND v > 20000'),
  ('SELECT k, v, pad FROM lr WHERE k = 7 ORDER BY k DESC, v LIMIT 40'),
  ('SELECT v FROM lr WHERE k = 9 AND v <= 15000 ORDER BY k, v DESC LIMIT 1'),
  ('SELECT v FROM lr WHERE k = 9 AND v >= 15000 ORDER BY k DESC, v LIMIT 1'),
  ('SELECT v FROM lr WHERE k = 49 AND v <= 100 ORDER BY k, v DESC LIMIT 1'),
  ('SELECT v, k FROM lr WHERE k IN (3, 4) AND v < 500'),
  ('SELECT count(*) FROM lr WHERE k = 12'),
  ('SELECT v FROM lr WHERE k = 12 ORDER BY k DESC, v LIMIT 20'),
  ('SELECT count(*), sum(v), min(pad) FROM (SELECT v, pad FROM lr WHERE k BETWEEN 5 AND 45 ORDER BY k DESC, v) s'),
  ('SELECT count(*), sum(v) FROM (SELECT v FROM lr WHERE k BETWEEN 5 AND 45 ORDER BY k, v DESC) s');

-- check_queries without the module's verify, and with it
CREATE FUNCTION lr_check(verify boolean, OUT checked int, OUT failures text[])
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('btree_jit.verify', verify::text, true);
    SELECT c.checked, c.failures INTO checked, failures
      FROM check_queries(ARRAY(SELECT q FROM lr_queries)) c;
END $$;

SELECT * FROM lr_check(true);
SELECT * FROM lr_check(false);

-- dead items: delete every third row, let one scan of each index mark
-- them dead (no older snapshot can see them), then read again
DELETE FROM lr WHERE v % 3 = 0;
SET enable_indexonlyscan = off;
SELECT count(*) FROM lr WHERE k BETWEEN 0 AND 49;
SELECT count(*) FROM (SELECT pad FROM lr WHERE k >= 0 ORDER BY k DESC, v) s;
RESET enable_indexonlyscan;
SELECT * FROM lr_check(true);
SELECT * FROM lr_check(false);

-- the leaf read ran compiled checks (15, 17, 18) or the server's (19)
SELECT (s.jit_checks > 0) = (current_setting('server_version_num')::int < 190000)
       AS checks_as_expected
  FROM btree_jit_index_stats() s WHERE s.indexrelid = 'lr_kv'::regclass;

DROP TABLE lr, lr_queries;
DROP FUNCTION lr_check(boolean);
