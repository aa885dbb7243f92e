--
-- Cross-type integer scan keys: an (int2, int8, int4) index
-- probed by values of the other integer types, as applications send them
-- (int2 = int4, int8 = int4, int2 < int8, ...).  Every compiled path sees
-- these keys: the page search and _bt_compare with the family's
-- cross-type comparison procs (btint24cmp, btint84cmp, ...), and on 15 the
-- scan-key checks with the cross-type operators (int24eq, int84lt, ...),
-- which are compared inline with the argument read as its own type.  The
-- boundary values are those a wrong width would get wrong: int4 arguments
-- outside the int2 range (70000 read as int16 would be 4464), int8 values
-- that equal an int4 argument in their low 32 bits (4294967301 = 2^32 + 5),
-- the extremes of each type, negative values.  verify is on, so every
-- compiled search, compare and check is also run by the server and must
-- agree, and check_query compares the rows with the module off.
--
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE cx (a int2 NOT NULL, b int8 NOT NULL, c int4 NOT NULL, v int4);
INSERT INTO cx
SELECT (ARRAY[-32768, -32767, -1, 0, 1, 5, 7, 4464, 32766, 32767])[1 + g % 10]::int2,
       (ARRAY[-9223372036854775808, -4294967291, -2147483649, -2147483648,
              -5, 0, 5, 2147483647, 2147483648, 4294967301,
              9223372036854775807])[1 + (g / 10) % 11]::int8,
       CASE WHEN k < 0 THEN k + g / 770 ELSE k - g / 770 END,
       g
  FROM (SELECT g, (ARRAY[-2147483648, -70000, -100, 0, 50, 70000,
                          2147483647])[1 + (g / 110) % 7] AS k
          FROM generate_series(0, 15399) g ORDER BY md5(g::text)) s;
ALTER TABLE cx ADD PRIMARY KEY (a, b, c);
CREATE INDEX cx_b ON cx (b DESC, a);
ANALYZE cx;

-- Checks of one index in this backend: compiled (where the server's
-- version has them) and verified.
CREATE FUNCTION cx_state(idx regclass, OUT state text, OUT searched boolean,
                         OUT checks_as_expected boolean)
LANGUAGE sql AS $$
    SELECT s.state, s.jit_searches > 0 AND s.verified_searches > 0,
           s.jit_checks > 0 AND s.verified_checks > 0
      FROM btree_jit_index_stats() s WHERE s.indexrelid = idx
$$;

-- The rows the keys must find, independent of any index: a wrong width
-- would find more (70000 as 4464, 5 as 4294967301) or fewer.
SELECT count(*) FILTER (WHERE a = 4464) AS a_4464,
       count(*) FILTER (WHERE b = 5) AS b_5,
       count(*) FILTER (WHERE b = 4294967301) AS b_2p32_5,
       count(*) FILTER (WHERE b > 2147483647) AS b_above_int4
  FROM cx;

-- int2 column, int4 and int8 arguments (btint24cmp, btint28cmp; int24*,
-- int28* operators), equality prefix and ranges, both directions.
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT a, b, c FROM cx WHERE a = 70000',
    'SELECT a, b, c FROM cx WHERE a = -70000',
    'SELECT a, b, c FROM cx WHERE a = 4464 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = 4464::int4 ORDER BY a DESC, b DESC, c DESC',
    'SELECT a, b, c FROM cx WHERE a = 4294967303::int8',
    'SELECT a, b, c FROM cx WHERE a = 7::int8 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a < 70000 AND a > 32766 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a > -32769 AND a <= -32767::int4 ORDER BY a DESC, b, c',
    'SELECT a, b, c FROM cx WHERE a >= 32767::int4 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a <= -32768::int8 ORDER BY a, b DESC, c DESC',
    'SELECT a, b, c FROM cx WHERE a > 65540 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a < -9223372036854775807 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a >= -1::int4 AND a < 2::int8 ORDER BY a, b, c LIMIT 40'
]);

-- The edges of the column's range.  The scan start enters a cross-type
-- integer key whose value the column's type holds as a key of that type
-- (src/README, "The scan start"); one past the range keeps the cross-type
-- key, and narrowed it would wrap (32768 to -32768, 2147483648 to
-- -2147483648) and start the scan at the other end.
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT a, b, c FROM cx WHERE a = 32768',
    'SELECT a, b, c FROM cx WHERE a >= 32768 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a < 32768 ORDER BY a DESC, b DESC, c DESC LIMIT 30',
    'SELECT a, b, c FROM cx WHERE a = -32769::int8',
    'SELECT a, b, c FROM cx WHERE a <= -32769 ORDER BY a DESC, b, c',
    'SELECT a, b, c FROM cx WHERE a > -32769::int8 ORDER BY a, b, c LIMIT 30',
    'SELECT a, b, c FROM cx WHERE a = 32767 AND b = 5 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = -32768::int8 AND b = -5 ORDER BY a DESC, b DESC, c DESC',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c = 2147483648::int8',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c >= 2147483648::int8 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c <= 2147483648::int8 ORDER BY a DESC, b DESC, c DESC LIMIT 30',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c > -2147483649::int8 ORDER BY a, b, c LIMIT 30',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c = 2147483647::int8',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c <= -2147483648::int8 ORDER BY a, b, c'
]);

-- int8 column, int4 and int2 arguments (btint84cmp, btint82cmp): values
-- beyond the int4 range, and equal in their low 32 bits.
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT a, b, c FROM cx WHERE a = 5 AND b = 5 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = 5 AND b = 5::int2 ORDER BY a DESC, b DESC, c DESC',
    'SELECT a, b, c FROM cx WHERE a = 5 AND b = -5 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = 5 AND b > 2147483647 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = 5 AND b < -2147483648 ORDER BY a DESC, b DESC, c',
    'SELECT a, b, c FROM cx WHERE a = 5 AND b >= -2147483648 AND b <= 2147483647 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = 5 AND b >= 32767::int2 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = -1::int4 AND b <= (-32768)::int2 ORDER BY a, b DESC, c',
    'SELECT b, a FROM cx WHERE b = 5 ORDER BY b DESC, a',
    'SELECT b, a FROM cx WHERE b > 2147483647 ORDER BY b, a',
    'SELECT b, a FROM cx WHERE b < -2147483648 ORDER BY b DESC, a DESC',
    'SELECT b, a FROM cx WHERE b = -2147483648 AND a = 32767'
]);

-- Full keys and LIMIT 1 prefixes with all three columns cross-type
-- (int4 column, int2 and int8 arguments: btint42cmp, btint48cmp).
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT v FROM cx WHERE a = 1 AND b = 2147483648 AND c = 69990',
    'SELECT v FROM cx WHERE a = 1::int8 AND b = 2147483648::int8 AND c = 20::int2',
    'SELECT v FROM cx WHERE a = 1 AND b = 0 AND c = 4294967316::int8',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c > 2147483646::int8 ORDER BY a, b, c',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c < -2147483647::int8 ORDER BY a DESC, b DESC, c DESC',
    'SELECT a, b, c FROM cx WHERE a = 0 AND b = 0 AND c < -2147483649::int8',
    'SELECT v FROM cx WHERE a = 7 AND b = 5 LIMIT 1',
    'SELECT v FROM cx WHERE a = 7 AND b = 5 ORDER BY a DESC, b DESC, c DESC LIMIT 1',
    'SELECT v FROM cx WHERE a = 70007 AND b = 5 LIMIT 1'
]);

-- A nested loop of int4 probe values, as the bench's probe_crosstype: the
-- keys are parameters, the scan rescanned with new values.
CREATE TABLE cxp (a4 int4, b4 int4, c4 int4);
INSERT INTO cxp VALUES (7, 5, 20), (70007, 5, 20), (4464, -5, 0), (-32768, 2147483647, 70010),
    (32767, -2147483648, -2147483640), (5, 0, 1), (0, -1, 2), (1, 5, -69990);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET enable_memoize = off;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT p.*, x.v FROM cxp p CROSS JOIN LATERAL (SELECT v FROM cx WHERE cx.a = p.a4 AND cx.b = p.b4 ORDER BY a, b, c LIMIT 1) x ORDER BY 1, 2, 3',
    'SELECT p.*, x.v FROM cxp p CROSS JOIN LATERAL (SELECT v FROM cx WHERE cx.a = p.a4 AND cx.b = p.b4 AND cx.c >= p.c4 ORDER BY a, b, c LIMIT 1) x ORDER BY 1, 2, 3',
    'SELECT p.*, x.v FROM cxp p CROSS JOIN LATERAL (SELECT v FROM cx WHERE cx.a = p.a4 AND cx.b = p.b4 ORDER BY a DESC, b DESC, c DESC LIMIT 1) x ORDER BY 1, 2, 3',
    'SELECT p.*, (SELECT count(*) FROM cx WHERE cx.a = p.a4 AND cx.b > p.b4) FROM cxp p ORDER BY 1, 2, 3'
]);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
RESET enable_memoize;

-- Compiled and verified: page searches, and on 15 the checks.
SELECT * FROM cx_state('cx_pkey');
SELECT * FROM cx_state('cx_b');

-- The scans were started by the module and verified where the server's
-- _bt_first is redirected (15, 17 and 18), by the server on 19.
SELECT redirected('_bt_first') AS first_redirected \gset
SELECT (s.jit_scan_starts > 0 AND s.verified_scan_starts > 0) = :'first_redirected'
       AS starts_as_expected
  FROM btree_jit_index_stats() s WHERE s.indexrelid = 'cx_pkey'::regclass;

DROP TABLE cx, cxp;
DROP FUNCTION cx_state(regclass);
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET btree_jit.compile_threshold;
RESET btree_jit.verify;
