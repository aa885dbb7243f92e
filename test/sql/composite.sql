--
-- Multi-column keys: prefix and full-key probes, mixed directions and
-- NULL placement, INCLUDE columns, row comparisons, suffix-truncated pivots
-- (low-cardinality leading columns) and deduplicated posting lists.
--
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;

CREATE TABLE comp (a int4, b int8, c date, d int2, pad text);
INSERT INTO comp
SELECT g % 7,
       CASE WHEN g % 101 = 0 THEN NULL ELSE (g * 31) % 53 END,
       CASE WHEN g % 89 = 0 THEN NULL ELSE date '2020-01-01' + (g * 17) % 400 END,
       (g % 3)::int2,
       repeat('x', g % 20)
  FROM generate_series(1, 120000) g;
CREATE INDEX comp_abc ON comp (a, b DESC, c NULLS FIRST) INCLUDE (pad);
ANALYZE comp;

SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT count(*) FROM comp WHERE a = 3',
    'SELECT count(*) FROM comp WHERE a = 3 AND b = 7',
    'SELECT count(*) FROM comp WHERE a = 3 AND b = 7 AND c = ''2020-03-01''',
    'SELECT count(*) FROM comp WHERE a = 3 AND b IS NULL',
    'SELECT count(*) FROM comp WHERE a = 3 AND b = 7 AND c IS NULL',
    'SELECT a, b, c FROM comp WHERE a = 5 AND b < 10 ORDER BY a, b DESC, c NULLS FIRST LIMIT 9',
    'SELECT a, b, c FROM comp WHERE a = 5 AND b > 40 ORDER BY a DESC, b, c DESC NULLS LAST LIMIT 9',
    'SELECT a, b, c FROM comp WHERE a >= 6 ORDER BY a, b DESC, c NULLS FIRST LIMIT 9',
    'SELECT a, b, c FROM comp WHERE a < 1 ORDER BY a DESC, b, c DESC NULLS LAST LIMIT 9',
    'SELECT count(*) FROM comp WHERE a = 2 AND b = 0::int4 AND c > ''2020-06-01''',
    'SELECT count(*) FROM comp WHERE a = 2::int8 AND b = 0::int2',
    'SELECT a, b, c FROM comp WHERE (a, b) > (4, 20) ORDER BY a, b DESC LIMIT 9',
    'SELECT a, b, c FROM comp WHERE (a, b) < (4, 20) ORDER BY a DESC, b LIMIT 9',
    'SELECT count(*) FROM comp WHERE a IN (1, 4, 6) AND b IN (3, 9)',
    'SELECT count(*) FROM comp WHERE a = 9',
    'SELECT count(*) FROM comp WHERE a IS NULL']);
SELECT state, signature, searched_jit, verified FROM index_state('comp_abc');

-- Low-cardinality leading columns leave truncated pivots in internal pages.
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE INDEX comp_ad ON comp (a, d);
SELECT count(*) > 0 AS has_posting_lists
  FROM bt_page_items('comp_ad', 1) WHERE tids IS NOT NULL;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT count(*) FROM comp WHERE a = 3 AND d = 1',
    'SELECT count(*) FROM comp WHERE a = 3 AND d > 0',
    'SELECT count(*) FROM comp WHERE a > 3 AND d = 2',
    'SELECT a, d FROM comp WHERE a = 6 AND d = 2 LIMIT 3',
    'SELECT a, d FROM comp WHERE a <= 0 ORDER BY a DESC, d DESC LIMIT 3']);
SELECT state, signature, searched_jit, verified FROM index_state('comp_ad');

-- Dynamic prefix truncation: multi-column keys whose leading columns cost
-- more than an integer to compare skip the columns known equal at both
-- bounds of the page search.  Low-cardinality leading text columns (equal
-- across many items and pivots), an uncompressed long common prefix, a
-- DESC column, a case-insensitive collation, prefix scankeys and NULLs.
CREATE COLLATION IF NOT EXISTS ci_icu (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE ptx (a text COLLATE "C", b varchar COLLATE "C", c int4, d text COLLATE ci_icu);
INSERT INTO ptx
SELECT CASE WHEN g % 997 = 0 THEN NULL ELSE repeat('k', 40) || (g % 5) END,
       'b' || (g / 7) % 40,
       g,
       CASE WHEN g % 2 = 0 THEN 'Dee' || g % 30 ELSE 'dEE' || g % 30 END
  FROM generate_series(1, 60000) g;
CREATE INDEX ptx_abc ON ptx (a, b DESC, c);
CREATE INDEX ptx_dc ON ptx (d, c);
ANALYZE ptx;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT c FROM ptx WHERE a = repeat(''k'', 40) || ''3'' AND b = ''b17'' AND c = 3 + 17 * 7',
    'SELECT count(*) FROM ptx WHERE a = repeat(''k'', 40) || ''3'' AND b = ''b17''',
    'SELECT count(*) FROM ptx WHERE a = repeat(''k'', 40) || ''2'' AND b > ''b3'' AND c < 30000',
    'SELECT a, b, c FROM ptx WHERE a >= repeat(''k'', 40) || ''4'' ORDER BY a, b DESC, c LIMIT 7',
    'SELECT a, b, c FROM ptx WHERE a < repeat(''k'', 40) || ''1'' ORDER BY a DESC, b, c DESC LIMIT 7',
    'SELECT count(*) FROM ptx WHERE a IS NULL AND b = ''b3''',
    'SELECT count(*) FROM ptx WHERE a = repeat(''k'', 40) || ''0'' AND b = ''b0'' AND c BETWEEN 100 AND 20000',
    'SELECT count(*) FROM ptx WHERE d = ''dee7'' AND c > 30000',
    'SELECT c FROM ptx WHERE d = ''DEE12'' AND c = 31212',
    'SELECT d, c FROM ptx WHERE d > ''dee28'' ORDER BY d, c LIMIT 5']);
SELECT state, signature, searched_jit, verified FROM index_state('ptx_abc');
SELECT state, searched_jit, verified FROM index_state('ptx_dc');
DROP TABLE ptx;

-- Unique and non-unique inserts: internal-page descents with a scantid.
CREATE TABLE ins (a int4, b int8, UNIQUE (a, b));
CREATE INDEX ins_b ON ins (b);
INSERT INTO ins SELECT g % 50, g FROM generate_series(1, 60000) g;
INSERT INTO ins SELECT g % 50, g + 60000 FROM generate_series(1, 60000) g;
INSERT INTO ins VALUES (1, 1);
INSERT INTO ins VALUES (1, 51) ON CONFLICT DO NOTHING;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT count(*) FROM ins WHERE a = 7',
    'SELECT count(*) FROM ins WHERE b BETWEEN 1000 AND 70000',
    'SELECT a, b FROM ins WHERE a = 49 ORDER BY a DESC, b DESC LIMIT 4']);
SELECT state, signature, verified FROM index_state('ins_a_b_key');
SELECT state, signature, verified FROM index_state('ins_b');
CREATE EXTENSION IF NOT EXISTS amcheck;
SELECT bt_index_parent_check('ins_a_b_key', true);
SELECT bt_index_parent_check('ins_b', true);
SELECT bt_index_parent_check('comp_abc', true);

DROP TABLE comp, ins;
