--
-- Every operator class but the integer-like ones of types_integer: inline
-- fast paths (float4/8, uuid, byte-order strings in the C collation, bytea,
-- name, bpchar) and the "call" kind (the
-- compiled loop calls the scankey's own comparison proc: numeric, interval,
-- inet, enum, arrays, records, collated text, user-defined operator
-- classes).  verify is on, so every compiled page search and comparison is
-- also checked against the server's own; check_queries() compares results
-- with the module on and off; index_state() shows that the compiled code
-- really ran.
--
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
SET btree_jit.max_signatures = 1000;
SET client_min_messages = warning;

-- Build table ot of one type from expr (over i), with duplicates, NULLs and
-- the given extreme values; then for each ordering variant of an index with
-- the given operator class / collation run equality, range, backward,
-- IS NULL and cross-type probes, module on vs off.
CREATE FUNCTION other_checks(typ text, expr text, extremes text[],
                             crosstypes text[] DEFAULT '{}',
                             opclass text DEFAULT '',
                             nrows int DEFAULT 8000)
RETURNS TABLE (variant text, checked int, failures text[], state text,
               signature text, searched_jit boolean, verified boolean)
LANGUAGE plpgsql AS $$
DECLARE
    variants text[] := ARRAY['ASC', 'DESC', 'ASC NULLS FIRST', 'DESC NULLS LAST'];
    v text;
    s text;
    ct text;
    samples text[];
    qs text[];
BEGIN
    DROP TABLE IF EXISTS ot;
    EXECUTE format('CREATE TABLE ot (k %s, id int4)', typ);
    EXECUTE format('INSERT INTO ot SELECT CASE WHEN i %% 37 = 0 THEN NULL ELSE (%s) END, i
                      FROM generate_series(1, %s) i', expr, nrows);
    FOREACH s IN ARRAY extremes LOOP
        EXECUTE format('INSERT INTO ot SELECT (%L::%s), -g FROM generate_series(1, 3) g', s, typ);
    END LOOP;
    EXECUTE 'SELECT array_agg(DISTINCT k::text) FROM ot WHERE id % 1999 = 7 AND k IS NOT NULL'
        INTO samples;
    samples := samples || extremes;
    ANALYZE ot;

    FOREACH v IN ARRAY variants LOOP
        EXECUTE format('CREATE INDEX ot_idx ON ot (k %s %s)', opclass, v);
        qs := ARRAY['SELECT count(*) FROM ot WHERE k IS NULL',
                    'SELECT k, id FROM ot WHERE k IS NOT NULL ORDER BY k LIMIT 7',
                    'SELECT k, id FROM ot ORDER BY k DESC LIMIT 7',
                    'SELECT k, id FROM ot ORDER BY k NULLS FIRST LIMIT 7',
                    'SELECT k, id FROM ot ORDER BY k DESC NULLS LAST LIMIT 7'];
        FOREACH s IN ARRAY samples LOOP
            qs := qs || ARRAY[
                format('SELECT id FROM ot WHERE k = (%L::%s) ORDER BY id', s, typ),
                format('SELECT k, id FROM ot WHERE k < (%L::%s) ORDER BY k DESC, id LIMIT 5', s, typ),
                format('SELECT k, id FROM ot WHERE k <= (%L::%s) ORDER BY k DESC LIMIT 5', s, typ),
                format('SELECT k, id FROM ot WHERE k > (%L::%s) ORDER BY k LIMIT 5', s, typ),
                format('SELECT k, id FROM ot WHERE k >= (%L::%s) ORDER BY k, id LIMIT 5', s, typ),
                format('SELECT count(*) FROM ot WHERE k BETWEEN (%L::%s) AND (%L::%s)', s, typ, s, typ)];
            FOREACH ct IN ARRAY crosstypes LOOP
                qs := qs || ARRAY[
                    format('SELECT id FROM ot WHERE k = (%L::%s) ORDER BY id', s, ct),
                    format('SELECT k, id FROM ot WHERE k < (%L::%s) ORDER BY k DESC LIMIT 5', s, ct),
                    format('SELECT k, id FROM ot WHERE k >= (%L::%s) ORDER BY k LIMIT 5', s, ct)];
            END LOOP;
        END LOOP;
        -- inserts go through the compiled _bt_compare (_bt_binsrch_insert)
        EXECUTE 'INSERT INTO ot SELECT k, id + 1000000 FROM ot WHERE id % 101 = 3';
        variant := v;
        SELECT c.checked, c.failures INTO checked, failures FROM check_queries(qs) c;
        SELECT i.state, i.signature, i.searched_jit, i.verified
          INTO state, signature, searched_jit, verified
          FROM index_state('ot_idx') i;
        RETURN NEXT;
        DROP INDEX ot_idx;
        EXECUTE 'DELETE FROM ot WHERE id > 1000000';
    END LOOP;
    DROP TABLE ot;
END $$;

-- ---- inline: float4/float8 (NaN above everything and equal to NaN,
-- -0 = 0, infinities, denormals), and the cross-type procs
SELECT * FROM other_checks('float8', '((i * 7919) % 20011 - 10000) / 7.0',
                           '{NaN, -0, 0, Infinity, -Infinity, 5e-324, -1.7976931348623157e308}');
SELECT * FROM other_checks('float8', '((i * 7919) % 20011 - 10000) / 8.0',
                           '{NaN, -0, Infinity, -Infinity, 1e-45}', '{float4}', '', 5000);
SELECT * FROM other_checks('float4', '(((i * 7919) % 20011 - 10000) / 7.0)::float4',
                           '{NaN, -0, 0, Infinity, -Infinity, 1e-45, 3.4028235e38}',
                           '{float8}');

-- ---- inline: uuid (byte order: big-endian words, top bit set or not)
SELECT * FROM other_checks('uuid', 'md5(i::text)::uuid',
                           '{00000000-0000-0000-0000-000000000000,
                             ffffffff-ffff-ffff-ffff-ffffffffffff,
                             80000000-0000-0000-0000-000000000000,
                             7fffffff-ffff-ffff-8000-000000000000,
                             00000000-0000-0000-ffff-ffffffffffff}');

-- ---- inline: text and varchar in the database's C collation, with empty
-- strings, multibyte UTF-8, strings equal up to 8, 16, 64 bytes, bytes
-- above 0x7f, and name constants (the text_ops cross-type procs)
SELECT * FROM other_checks('text',
    'CASE i % 5 WHEN 0 THEN md5(i::text)
                WHEN 1 THEN repeat(''a'', (i % 9) * 8) || (i % 50)::text
                WHEN 2 THEN left(md5(i::text), i % 4)
                WHEN 3 THEN ''ä€𝄞'' || (i % 300)::text
                ELSE repeat(''x'', 64) || chr(32 + i % 90) END',
    '{"", " ", "a", "aaaaaaaa", "aaaaaaaaa", "aaaaaaaaaaaaaaaa", "ä", "€", "𝄞", "ÿ"}',
    '{name}');
SELECT * FROM other_checks('varchar(80)',
    'CASE WHEN i % 2 = 0 THEN md5(i::text) ELSE ''user'' || i || ''@example'' || (i % 50) || ''.com'' END',
    '{"", "user1@example1.com", "zzzz"}', '{text, name}');

-- ---- inline: the pattern operator classes (byte order whatever the
-- collation) and bytea
SELECT * FROM other_checks('text', 'md5(i::text) || repeat(''b'', i % 3)',
                           '{"", "0", "ffff"}', '{}', 'text_pattern_ops');
SELECT * FROM other_checks('varchar', 'left(md5(i::text), 1 + i % 20)',
                           '{"", "0", "ffff"}', '{}', 'varchar_pattern_ops');
SELECT * FROM other_checks('bytea', 'decode(left(md5(i::text), 2 * (i % 17)), ''hex'')',
                           '{"", "\\x00", "\\xff", "\\x0000", "\\xffffffffffffffffff"}');

-- ---- inline: bpchar ignores trailing blanks (a tab sorts below a blank,
-- so "a\t" > "a" although "a\t" < "a ")
SELECT * FROM other_checks('char(12)',
    'CASE i % 3 WHEN 0 THEN left(md5(i::text), i % 12)
                WHEN 1 THEN ''a'' || repeat(chr(9), i % 3)
                ELSE ''ab'' || repeat('' '', i % 4) || chr(65 + i % 3) END',
    '{"", "a", "a ", "ab", "ab  c", "zzzzzzzzzzzz"}', '{}');
SELECT * FROM other_checks('char(12)', 'left(md5(i::text), i % 12) || chr(9 + i % 2)',
                           '{"", "a", "0"}', '{}', 'bpchar_pattern_ops');

-- ---- inline: name (stored as cstring), with text constants
SELECT * FROM other_checks('name', '''rel_'' || md5(i::text)',
                           '{"", "rel_", "pg_class", "zzzz"}', '{text}');

-- ---- an inline column searched with a cross-type proc the shape does not
-- know (date against timestamp and timestamptz, timestamp against date):
-- that column's proc is called
SELECT * FROM other_checks('date', '''2000-01-01''::date + (i * 37 % 5000 - 2500)',
                           '{infinity, -infinity, 2000-01-01}', '{timestamp, timestamptz}', '', 4000);
SELECT * FROM other_checks('timestamp',
                           '''2000-01-01''::timestamp + (i * 7919 % 100000) * interval ''1 hour''',
                           '{infinity, -infinity, 2000-01-01}', '{date}', '', 4000);

-- ---- inline: numeric, read in place (short and long headers, NaN and the
-- infinities, zero of every scale and sign, equal values of different
-- scales, weights beyond the short format's, digits after 8 or more equal
-- ones, and values long enough to be compressed in the index, which the
-- compiled code hands to numeric_cmp)
SELECT * FROM other_checks('numeric', '((i * 7919) % 20011 - 10000) / 7.0',
                           '{NaN, Infinity, -Infinity, 0, -0.0000001}');
SELECT * FROM other_checks('numeric',
                           'CASE i % 5 WHEN 0 THEN (i % 50)::numeric WHEN 1 THEN round((i % 50)::numeric, 3)
                                       WHEN 2 THEN (i % 50) * 1e70 WHEN 3 THEN -(i % 50) * 1e-70
                                       ELSE 123456789.123456789 + (i % 50) * 1e-9 END',
                           '{1e300, -1e300, 1e-300, 0.000, -0.0, 1.0000000000000000001, 10000, 9999.9999, NaN, -Infinity}');
SELECT * FROM other_checks('numeric', 'repeat(((i % 9) + 1)::text, 1500 + i % 7)::numeric',
                           '{0, NaN, 1e1499}', '{}', '', 400);

-- ---- called: interval, inet, enum, arrays, records, jsonb, money,
-- macaddr, ranges
SELECT * FROM other_checks('interval', '(i % 5000) * interval ''1 hour 3 sec''',
                           '{"-178000000 years", "178000000 years", "0", "1 mon", "30 days"}');
SELECT * FROM other_checks('inet',
                           '(''10.'' || (i % 250) || ''.'' || (i % 7) || ''.'' || (i % 199))::inet',
                           '{0.0.0.0/0, ::1, 255.255.255.255, 10.0.0.0/8}');
CREATE TYPE ot_mood AS ENUM ('sad', 'ok', 'happy');
ALTER TYPE ot_mood ADD VALUE 'meh' BEFORE 'ok';
SELECT * FROM other_checks('ot_mood', '(ARRAY[''sad'', ''ok'', ''happy'', ''meh''])[1 + i % 4]::ot_mood',
                           '{sad, happy, meh}');
SELECT * FROM other_checks('int4[]', 'ARRAY[i % 13, i % 7, NULLIF(i % 5, 0)]',
                           '{"{}", "{NULL}", "{1,NULL}", "{0,0,0}"}');
CREATE TYPE ot_pair AS (a int4, b text);
SELECT * FROM other_checks('ot_pair', 'ROW(i % 97, md5(i::text))::ot_pair',
                           '{"(,)", "(1,)", "(,a)", "(0,\"\")"}');
SELECT * FROM other_checks('jsonb', 'jsonb_build_object(''k'', i % 300, ''s'', md5(i::text))',
                           '{"{}", "[]", "null", "\"a\"", "1"}');
SELECT * FROM other_checks('money', '((i * 7919) % 20011 - 10000)::money',
                           '{0, -92233720368547758.08, 92233720368547758.07}');
SELECT * FROM other_checks('macaddr', '(''08:00:2b:01:'' || lpad(to_hex(i % 256), 2, ''0'') || '':'' || lpad(to_hex(i % 251), 2, ''0''))::macaddr',
                           '{00:00:00:00:00:00, ff:ff:ff:ff:ff:ff}');
SELECT * FROM other_checks('int4range', 'int4range(i % 300, i % 300 + i % 7)',
                           '{empty, "(,)", "[5,)", "(,5]"}');

-- ---- called: text in a libc collation that is not C, and ICU
SELECT * FROM other_checks('text COLLATE "C.utf8"',
    'CASE WHEN i % 2 = 0 THEN md5(i::text) ELSE upper(md5(i::text)) END',
    '{"", "a", "A", "ä"}');
SELECT * FROM other_checks('name COLLATE "C.utf8"', '''n'' || md5(i::text)',
                           '{"", "a", "N"}', '{text}', '', 4000);
SELECT * FROM other_checks('char(10) COLLATE "C.utf8"', 'left(md5(i::text), i % 10)',
                           '{"", "a", "a "}', '{}', '', 4000);
SELECT * FROM other_checks('text COLLATE "en-US-x-icu"',
    'CASE WHEN i % 2 = 0 THEN md5(i::text) ELSE upper(md5(i::text)) END',
    '{"", "a", "A", "ä", "Ä"}', '{}', '', 4000);
-- a nondeterministic (case-insensitive) ICU collation: equal strings that
-- differ in bytes
CREATE COLLATION ot_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT * FROM other_checks('text COLLATE ot_ci',
    'CASE WHEN i % 2 = 0 THEN left(md5(i::text), 3) ELSE upper(left(md5(i::text), 3)) END',
    '{"", "abc", "ABC", "aBc"}', '{}', '', 4000);

-- ---- long values: compressed in the index (inline code hands them to the
-- proc), and toasted or compressed scankey arguments
CREATE TABLE ot_long (k text, id int4);
INSERT INTO ot_long SELECT repeat(md5((i % 40)::text), 80 + i % 5) || i, i FROM generate_series(1, 2000) i;
INSERT INTO ot_long VALUES ('', 0), ('short', -1);
CREATE INDEX ot_long_k ON ot_long (k);
CREATE INDEX ot_long_kd ON ot_long (k DESC, id);
CREATE TABLE ot_args (v text, big bool);
ALTER TABLE ot_args ALTER COLUMN v SET STORAGE external;
INSERT INTO ot_args SELECT k, false FROM ot_long WHERE id % 97 = 1;
INSERT INTO ot_args SELECT string_agg(md5(g::text), '') , true FROM generate_series(1, 400) g;
CREATE TABLE ot_cargs (v text);
INSERT INTO ot_cargs SELECT k FROM ot_long WHERE id % 89 = 2;
SELECT count(*) AS compressed FROM ot_long WHERE pg_column_compression(k) IS NOT NULL;
SELECT count(*) AS compressed_args FROM ot_cargs WHERE pg_column_compression(v) IS NOT NULL;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT a.v = l.k, l.id FROM ot_args a JOIN ot_long l ON l.k = a.v ORDER BY 2',
    'SELECT l.id FROM ot_args a, LATERAL (SELECT id FROM ot_long WHERE k < a.v ORDER BY k DESC LIMIT 2) l ORDER BY 1',
    'SELECT l.id FROM ot_args a, LATERAL (SELECT id FROM ot_long WHERE k >= a.v ORDER BY k LIMIT 2) l ORDER BY 1',
    'SELECT l.id FROM ot_cargs a JOIN ot_long l ON l.k = a.v ORDER BY 1',
    'SELECT l.id FROM ot_cargs a, LATERAL (SELECT id FROM ot_long WHERE k > a.v ORDER BY k LIMIT 3) l ORDER BY 1',
    'SELECT id FROM ot_long WHERE k = (SELECT v FROM ot_cargs LIMIT 1)',
    'SELECT id FROM ot_long WHERE k > '''' ORDER BY k LIMIT 5',
    'SELECT id FROM ot_long WHERE k < ''short'' ORDER BY k DESC LIMIT 5',
    'SELECT id FROM ot_long WHERE k = ''short''',
    'SELECT id FROM ot_long ORDER BY k DESC, id LIMIT 5']);
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT state, signature, searched_jit, verified FROM index_state('ot_long_k');
SELECT state, signature, searched_jit, verified FROM index_state('ot_long_kd');

-- ---- NULLs in every column position of a mixed key, inline and called
-- columns after variable-length ones (offsets found by walking the tuple)
CREATE TABLE ot_mixed (a text, b float8, c uuid, d numeric, e int2, f name, id int4);
INSERT INTO ot_mixed
SELECT CASE WHEN i % 11 = 1 THEN NULL ELSE left(md5((i % 50)::text), i % 7) END,
       CASE WHEN i % 13 = 2 THEN NULL WHEN i % 17 = 0 THEN 'NaN' ELSE (i % 5) / 3.0 END,
       CASE WHEN i % 7 = 3 THEN NULL ELSE md5((i % 3)::text)::uuid END,
       CASE WHEN i % 5 = 4 THEN NULL ELSE i % 4 END,
       CASE WHEN i % 3 = 0 THEN NULL ELSE (i % 6)::int2 END,
       CASE WHEN i % 19 = 5 THEN NULL ELSE 'n' || (i % 9) END,
       i
  FROM generate_series(1, 30000) i;
CREATE INDEX ot_mixed_asc ON ot_mixed (a, b, c, d, e, f);
CREATE INDEX ot_mixed_mix ON ot_mixed (d DESC NULLS LAST, a NULLS FIRST, f DESC, e, c DESC, b NULLS FIRST);
CREATE INDEX ot_mixed_incl ON ot_mixed (e, a) INCLUDE (d, f);
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT id FROM ot_mixed WHERE a IS NULL AND b IS NULL ORDER BY id LIMIT 10',
    'SELECT id FROM ot_mixed WHERE a = ''c4ca'' AND b IS NULL AND c IS NULL ORDER BY id',
    'SELECT id FROM ot_mixed WHERE a = '''' AND b = ''NaN'' AND c IS NOT NULL ORDER BY id LIMIT 10',
    'SELECT id FROM ot_mixed WHERE a = ''c'' AND b = 1 / 3.0 AND c = md5(''1'')::uuid AND d IS NULL ORDER BY id',
    'SELECT id FROM ot_mixed WHERE a = ''c'' AND b > 0 AND b < ''Infinity'' ORDER BY id LIMIT 10',
    'SELECT id FROM ot_mixed WHERE d IS NULL AND a IS NULL ORDER BY id LIMIT 10',
    'SELECT id FROM ot_mixed WHERE d = 2 AND a = ''e4da3'' AND f = ''n4'' AND e IS NULL ORDER BY id',
    'SELECT id FROM ot_mixed WHERE d = 1 AND a IS NULL AND f = ''n3''::text ORDER BY id',
    'SELECT id FROM ot_mixed WHERE d IS NULL AND a = ''8f'' AND f IS NULL ORDER BY id',
    'SELECT id FROM ot_mixed WHERE d = 3 AND a = ''a87ff6'' AND f = ''n2'' AND e = 3 AND c IS NULL ORDER BY id',
    'SELECT id FROM ot_mixed WHERE e = 2 AND a = ''c81e7'' ORDER BY id',
    'SELECT id FROM ot_mixed WHERE e IS NULL AND a IS NULL ORDER BY id LIMIT 10',
    'SELECT id FROM ot_mixed WHERE e = 5 AND a > ''c'' ORDER BY a, id LIMIT 10',
    'SELECT a, b, c, d, e, f FROM ot_mixed WHERE (a, b) > (''c'', 0.5) ORDER BY a, b, c, d, e, f LIMIT 10',
    'SELECT a, b, c, d, e, f FROM ot_mixed ORDER BY a DESC, b DESC, c DESC, d DESC, e DESC, f DESC LIMIT 10']);
SELECT state, signature, searched_jit, verified FROM index_state('ot_mixed_asc');
SELECT state, signature, searched_jit, verified FROM index_state('ot_mixed_mix');
SELECT state, signature, searched_jit, verified FROM index_state('ot_mixed_incl');

-- ---- user-defined operator classes with their own SQL comparison
-- functions: reverse order returning INT_MIN / INT_MAX (INVERT_COMPARE_RESULT
-- must map INT_MIN to 1, not negate it), and one in plpgsql
CREATE FUNCTION ot_rev_cmp(int4, int4) RETURNS int4 LANGUAGE sql IMMUTABLE STRICT AS
$$ SELECT CASE WHEN $1 < $2 THEN 2147483647 WHEN $1 > $2 THEN -2147483648 ELSE 0 END $$;
CREATE OPERATOR CLASS ot_rev_ops FOR TYPE int4 USING btree AS
    OPERATOR 1 > , OPERATOR 2 >= , OPERATOR 3 = , OPERATOR 4 <= , OPERATOR 5 < ,
    FUNCTION 1 ot_rev_cmp(int4, int4);
CREATE FUNCTION ot_pl_cmp(text, text) RETURNS int4 LANGUAGE plpgsql IMMUTABLE STRICT AS
$$ BEGIN RETURN CASE WHEN lower($1) < lower($2) THEN -7 WHEN lower($1) > lower($2) THEN 7
                     WHEN $1 < $2 THEN -1 WHEN $1 > $2 THEN 1 ELSE 0 END; END $$;
CREATE FUNCTION ot_pl_lt(text, text) RETURNS bool LANGUAGE plpgsql IMMUTABLE STRICT AS 'BEGIN RETURN ot_pl_cmp($1, $2) < 0; END';
CREATE FUNCTION ot_pl_le(text, text) RETURNS bool LANGUAGE plpgsql IMMUTABLE STRICT AS 'BEGIN RETURN ot_pl_cmp($1, $2) <= 0; END';
CREATE FUNCTION ot_pl_eq(text, text) RETURNS bool LANGUAGE plpgsql IMMUTABLE STRICT AS 'BEGIN RETURN ot_pl_cmp($1, $2) = 0; END';
CREATE FUNCTION ot_pl_ge(text, text) RETURNS bool LANGUAGE plpgsql IMMUTABLE STRICT AS 'BEGIN RETURN ot_pl_cmp($1, $2) >= 0; END';
CREATE FUNCTION ot_pl_gt(text, text) RETURNS bool LANGUAGE plpgsql IMMUTABLE STRICT AS 'BEGIN RETURN ot_pl_cmp($1, $2) > 0; END';
CREATE OPERATOR <<~ (LEFTARG = text, RIGHTARG = text, FUNCTION = ot_pl_lt);
CREATE OPERATOR <<=~ (LEFTARG = text, RIGHTARG = text, FUNCTION = ot_pl_le);
CREATE OPERATOR ==~ (LEFTARG = text, RIGHTARG = text, FUNCTION = ot_pl_eq);
CREATE OPERATOR >>=~ (LEFTARG = text, RIGHTARG = text, FUNCTION = ot_pl_ge);
CREATE OPERATOR >>~ (LEFTARG = text, RIGHTARG = text, FUNCTION = ot_pl_gt);
CREATE OPERATOR CLASS ot_pl_ops FOR TYPE text USING btree AS
    OPERATOR 1 <<~ , OPERATOR 2 <<=~ , OPERATOR 3 ==~ , OPERATOR 4 >>=~ , OPERATOR 5 >>~ ,
    FUNCTION 1 ot_pl_cmp(text, text);
CREATE TABLE ot_udf (k int4, t text, k2 int4);
INSERT INTO ot_udf SELECT (i * 7919) % 3001, CASE WHEN i % 2 = 0 THEN md5(i::text) ELSE upper(md5(i::text)) END,
                          (i * 7919) % 3001
  FROM generate_series(1, 3000) i;
INSERT INTO ot_udf VALUES (NULL, NULL, NULL), (-2147483648, '', -2147483648), (2147483647, 'zzz', 2147483647);
CREATE INDEX ot_udf_rev ON ot_udf (k ot_rev_ops);
CREATE INDEX ot_udf_revd ON ot_udf (k2 ot_rev_ops DESC NULLS LAST);
CREATE INDEX ot_udf_pl ON ot_udf (t ot_pl_ops);
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT k FROM ot_udf WHERE k > 2990 ORDER BY k',
    'SELECT k FROM ot_udf WHERE k < 10 ORDER BY k',
    'SELECT k FROM ot_udf WHERE k = 1500',
    'SELECT k FROM ot_udf WHERE k >= 2147483647',
    'SELECT k FROM ot_udf WHERE k <= -2147483648',
    'SELECT k2 FROM ot_udf WHERE k2 > 2990 ORDER BY k2',
    'SELECT k2 FROM ot_udf WHERE k2 < 10 ORDER BY k2 DESC',
    'SELECT k2 FROM ot_udf WHERE k2 = 1500',
    'SELECT k2 FROM ot_udf WHERE k2 >= 2147483647',
    'SELECT k2 FROM ot_udf WHERE k2 IS NULL',
    'SELECT t FROM ot_udf WHERE t ==~ ''C4CA4238A0B923820DCC509A6F75849B''',
    'SELECT t FROM ot_udf WHERE t <<~ ''0'' ORDER BY t',
    'SELECT t FROM ot_udf WHERE t >>=~ ''fff'' ORDER BY t',
    'SELECT t FROM ot_udf WHERE t ==~ ''''']);
SELECT state, signature, searched_jit, verified FROM index_state('ot_udf_rev');
SELECT state, signature, searched_jit, verified FROM index_state('ot_udf_revd');
SELECT state, signature, searched_jit, verified FROM index_state('ot_udf_pl');

-- a comparison proc that returns NULL: the compiled code declines, and the
-- server raises its own error
CREATE FUNCTION ot_null_cmp(int4, int4) RETURNS int4 LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE WHEN $2 = 13 OR $1 = 13 THEN NULL ELSE btint4cmp($1, $2) END $$;
CREATE OPERATOR CLASS ot_null_ops FOR TYPE int4 USING btree AS
    OPERATOR 1 < , OPERATOR 2 <= , OPERATOR 3 = , OPERATOR 4 >= , OPERATOR 5 > ,
    FUNCTION 1 ot_null_cmp(int4, int4);
CREATE TABLE ot_null (k int4);
INSERT INTO ot_null SELECT i FROM generate_series(14, 5000) i;
CREATE INDEX ot_null_k ON ot_null (k ot_null_ops);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM ot_null WHERE k = 100;
DO $$
BEGIN
    PERFORM count(*) FROM ot_null WHERE k = 13;
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'error: %', regexp_replace(SQLERRM, '[0-9]+', 'N');
END $$;
SELECT i.state, i.signature, i.searched_jit, s.declined_searches > 0 AS declined
  FROM index_state('ot_null_k') i
  JOIN btree_jit_index_stats() s ON s.indexrelid = 'ot_null_k'::regclass;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- ---- the operator family's proc replaced between compiles: from an SQL
-- function (called) to btint4cmp (inline), and the other way round; the
-- shapes change once the index is opened again, and stale code never runs
CREATE FUNCTION ot_sql_cmp(int4, int4) RETURNS int4 LANGUAGE sql IMMUTABLE STRICT AS
$$ SELECT CASE WHEN $1 < $2 THEN -1 WHEN $1 > $2 THEN 1 ELSE 0 END $$;
CREATE OPERATOR FAMILY ot_fam USING btree;
ALTER OPERATOR FAMILY ot_fam USING btree ADD FUNCTION 1 (int4, int4) ot_sql_cmp(int4, int4);
CREATE OPERATOR CLASS ot_fam_ops FOR TYPE int4 USING btree FAMILY ot_fam AS
    OPERATOR 1 < , OPERATOR 2 <= , OPERATOR 3 = , OPERATOR 4 >= , OPERATOR 5 > ;
CREATE OPERATOR FAMILY ot_fam2 USING btree;
ALTER OPERATOR FAMILY ot_fam2 USING btree ADD FUNCTION 1 (int4, int4) btint4cmp(int4, int4);
CREATE OPERATOR CLASS ot_fam2_ops FOR TYPE int4 USING btree FAMILY ot_fam2 AS
    OPERATOR 1 < , OPERATOR 2 <= , OPERATOR 3 = , OPERATOR 4 >= , OPERATOR 5 > ;
CREATE TABLE ot_fam_t (k int4, k2 int4);
INSERT INTO ot_fam_t SELECT (i * 7919) % 10007, (i * 7919) % 10007 FROM generate_series(1, 10000) i;
CREATE INDEX ot_fam_k ON ot_fam_t (k ot_fam_ops);
CREATE INDEX ot_fam2_k ON ot_fam_t (k2 ot_fam2_ops DESC);
CREATE FUNCTION ot_fam_check() RETURNS TABLE (checked int, failures text[])
LANGUAGE sql AS $$
    SELECT * FROM check_queries(ARRAY[
        'SELECT k FROM ot_fam_t WHERE k = 77',
        'SELECT k FROM ot_fam_t WHERE k > 10000 ORDER BY k',
        'SELECT k FROM ot_fam_t WHERE k < 100 ORDER BY k DESC LIMIT 3',
        'SELECT k2 FROM ot_fam_t WHERE k2 = 77',
        'SELECT k2 FROM ot_fam_t WHERE k2 > 10000 ORDER BY k2',
        'SELECT k2 FROM ot_fam_t WHERE k2 < 100 ORDER BY k2 DESC LIMIT 3'])
$$;
SELECT * FROM ot_fam_check();
SELECT state, signature, searched_jit, verified FROM index_state('ot_fam_k');
SELECT state, signature, searched_jit, verified FROM index_state('ot_fam2_k');
ALTER OPERATOR FAMILY ot_fam USING btree DROP FUNCTION 1 (int4, int4);
ALTER OPERATOR FAMILY ot_fam USING btree ADD FUNCTION 1 (int4, int4) btint4cmp(int4, int4);
ALTER OPERATOR FAMILY ot_fam2 USING btree DROP FUNCTION 1 (int4, int4);
ALTER OPERATOR FAMILY ot_fam2 USING btree ADD FUNCTION 1 (int4, int4) ot_sql_cmp(int4, int4);
SELECT * FROM ot_fam_check();
\c
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
SET btree_jit.max_signatures = 1000;
SET client_min_messages = warning;
SELECT * FROM ot_fam_check();
SELECT state, signature, searched_jit, verified FROM index_state('ot_fam_k');
SELECT state, signature, searched_jit, verified FROM index_state('ot_fam2_k');

-- ---- catalog indexes: name_ops (cstring keys), oid, int2
SELECT count(*) > 0 AS found FROM pg_class WHERE relname = 'pg_class';
SELECT count(*) AS found FROM pg_type WHERE typname = 'ot_mood' AND typnamespace = 'public'::regnamespace;
SELECT indexrelid, state, signature, jit_searches > 0 AS searched_jit
  FROM btree_jit_index_stats()
 WHERE indexrelid IN ('pg_class_relname_nsp_index'::regclass, 'pg_type_typname_nsp_index'::regclass,
                      'pg_attribute_relid_attnum_index'::regclass)
 ORDER BY indexrelid::text;

DROP TABLE ot_long, ot_args, ot_cargs, ot_mixed, ot_udf, ot_null, ot_fam_t;
DROP FUNCTION ot_fam_check();
DROP TYPE ot_mood, ot_pair;
DROP OPERATOR CLASS ot_rev_ops USING btree;
DROP OPERATOR CLASS ot_pl_ops USING btree;
DROP OPERATOR CLASS ot_null_ops USING btree;
DROP OPERATOR FAMILY ot_fam USING btree;
DROP OPERATOR FAMILY ot_fam2 USING btree;
DROP COLLATION ot_ci;
