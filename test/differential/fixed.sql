--
-- test/differential/fixed.sql - hand-written differential cases that random
-- generation does not reach, run by test/suite-differential.sh before the
-- generator.  Each case prints one line "@@CHECK <name> ok" or
-- "@@CHECK <name> FAIL <detail>".
--
--   custom opclasses   a btree opclass on int4 whose comparator is NOT
--                      btint4cmp (reversed order): the module must not
--                      inline int4 comparison for it (stock, or correct JIT)
--   cursor toggle      btree_jit.enabled switched between FETCHes of one
--                      scroll cursor, compared with the cursor run stock
--   generic plans      prepared statements with cross-type parameters
--                      (int4 column, int8 parameter beyond int4's range)
--   wide keys          9 key columns (more than the module compiles)
--   domains, enums,    index on a domain over int4, on an enum, expression
--   expressions        and partial indexes
--
SET client_min_messages = warning;
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE FUNCTION fx_rows(q text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    res text[];
BEGIN
    EXECUTE format('SELECT coalesce(array_agg(r::text), ''{}'') FROM (%s) r', q) INTO res;
    RETURN res;
END $$;

-- NULL when q gives the same rows in the same order with the module on
-- (verify on) and off, else a description
CREATE FUNCTION fx_diff(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    a text[];
    b text[];
BEGIN
    PERFORM set_config('btree_jit.enabled', 'on', true);
    a := fx_rows(q);
    PERFORM set_config('btree_jit.enabled', 'off', true);
    b := fx_rows(q);
    PERFORM set_config('btree_jit.enabled', 'on', true);
    IF a IS DISTINCT FROM b THEN
        RETURN format('%s: on %s / off %s', q, left(a::text, 160), left(b::text, 160));
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION fx_check(name text, qs text[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    q text;
    d text;
    n int := 0;
BEGIN
    FOREACH q IN ARRAY qs LOOP
        BEGIN
            d := fx_diff(q);
        EXCEPTION WHEN OTHERS THEN
            d := format('%s: ERROR %s %s', q, SQLSTATE, SQLERRM);
        END;
        IF d IS NOT NULL THEN
            RETURN format('@@CHECK %s FAIL %s', name, d);
        END IF;
        n := n + 1;
    END LOOP;
    RETURN format('@@CHECK %s ok (%s queries)', name, n);
END $$;

-- ---- custom opclasses ----------------------------------------------------
CREATE FUNCTION fx_rev_cmp(int4, int4) RETURNS int4
LANGUAGE sql IMMUTABLE STRICT AS 'SELECT btint4cmp($2, $1)';
CREATE OPERATOR <<< (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4gt);
CREATE OPERATOR <<<= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4ge);
CREATE OPERATOR === (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4eq);
CREATE OPERATOR >>>= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4le);
CREATE OPERATOR >>> (LEFTARG = int4, RIGHTARG = int4, FUNCTION = int4lt);
CREATE OPERATOR CLASS fx_int4_rev_ops FOR TYPE int4 USING btree AS
    OPERATOR 1 <<<, OPERATOR 2 <<<=, OPERATOR 3 ===, OPERATOR 4 >>>=, OPERATOR 5 >>>,
    FUNCTION 1 fx_rev_cmp(int4, int4);
-- same order as int4_ops, but in a family of its own, with a C comparator
CREATE OPERATOR FAMILY fx_int4_alias_fam USING btree;
CREATE OPERATOR CLASS fx_int4_alias_ops FOR TYPE int4 USING btree FAMILY fx_int4_alias_fam AS
    OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
    FUNCTION 1 btint4cmp(int4, int4);

CREATE TABLE fx_rev (a int4, b int4, id int);
INSERT INTO fx_rev SELECT (g * 7) % 501 - 250, g % 13, g FROM generate_series(1, 20000) g;
INSERT INTO fx_rev SELECT NULL, g, -g FROM generate_series(1, 50) g;
CREATE INDEX fx_rev_a ON fx_rev (a fx_int4_rev_ops, b);
CREATE INDEX fx_alias_b ON fx_rev (b fx_int4_alias_ops, a DESC);
VACUUM ANALYZE fx_rev;
SELECT fx_check('custom opclass with a reversed comparator', ARRAY[
    'SELECT a, b, id FROM fx_rev WHERE a === 17',
    'SELECT a, b, id FROM fx_rev WHERE a <<< -200 ORDER BY a USING <<<, b',
    'SELECT a, b, id FROM fx_rev WHERE a >>> 240 ORDER BY a USING >>>, b DESC',
    'SELECT a, b FROM fx_rev WHERE a <<<= 0 AND a >>>= 5 ORDER BY a USING <<< LIMIT 30',
    'SELECT a, b FROM fx_rev WHERE a === 3 AND b = 4',
    'SELECT count(*) FROM fx_rev WHERE a IS NULL',
    'SELECT a FROM fx_rev ORDER BY a USING >>> LIMIT 10']);
SELECT fx_check('opclass of its own family with btint4cmp', ARRAY[
    'SELECT a, b, id FROM fx_rev WHERE b = 5 AND a > 100 ORDER BY b, a DESC',
    'SELECT b, a FROM fx_rev WHERE b < 3 ORDER BY b DESC, a LIMIT 40',
    'SELECT b, a FROM fx_rev WHERE b = ANY (ARRAY[1, 7, 12]) AND a < -240']);
-- the reversed opclass must not run as plain int4 comparison: either stock,
-- or jit with verified searches (and then the results above prove it right)
SELECT CASE WHEN state = 'stock' OR (state = 'jit' AND verified_searches > 0)
            THEN '@@CHECK reversed opclass handled (' || state || ') ok'
            ELSE '@@CHECK reversed opclass handled FAIL ' || state || ' ' || coalesce(signature, '') END
  FROM btree_jit_index_stats() WHERE indexrelid = 'fx_rev_a'::regclass;

-- ---- a scroll cursor with the module switched between FETCHes -------------
CREATE TABLE fx_cur (a int8, b date, c int2);
INSERT INTO fx_cur SELECT g % 97, '2000-01-01'::date + g % 400, g % 7 FROM generate_series(1, 30000) g;
CREATE INDEX fx_cur_abc ON fx_cur (a DESC, b, c NULLS FIRST);
VACUUM ANALYZE fx_cur;
CREATE FUNCTION fx_cursor(toggle bool) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    c refcursor;
    r record;
    out text := '';
BEGIN
    PERFORM set_config('btree_jit.enabled', CASE WHEN toggle THEN 'on' ELSE 'off' END, true);
    OPEN c SCROLL FOR SELECT * FROM fx_cur WHERE a < 50 AND b > '2000-06-01' ORDER BY a DESC, b, c NULLS FIRST;
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'off', true); END IF;
    FETCH NEXT FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'on', true); END IF;
    FETCH PRIOR FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'off', true); END IF;
    FETCH LAST FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    MOVE BACKWARD 3 FROM c;
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'on', true); END IF;
    FETCH PRIOR FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'off', true); END IF;
    FETCH ABSOLUTE 500 FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'on', true); END IF;
    FETCH RELATIVE -30 FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    MOVE BACKWARD 3 FROM c;
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'off', true); END IF;
    FETCH FIRST FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'on', true); END IF;
    FETCH RELATIVE 7 FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'off', true); END IF;
    FETCH ABSOLUTE -2 FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    MOVE BACKWARD 3 FROM c;
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'on', true); END IF;
    FETCH PRIOR FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'off', true); END IF;
    FETCH LAST FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    IF toggle THEN PERFORM set_config('btree_jit.enabled', 'on', true); END IF;
    FETCH RELATIVE -100 FROM c INTO r;
    out := out || coalesce(r::text, '-') || ';';
    MOVE BACKWARD 3 FROM c;
    CLOSE c;
    PERFORM set_config('btree_jit.enabled', 'on', true);
    RETURN out;
END $$;
SELECT CASE WHEN fx_cursor(true) = fx_cursor(false)
            THEN '@@CHECK scroll cursor with btree_jit.enabled toggled between fetches ok'
            ELSE '@@CHECK scroll cursor with btree_jit.enabled toggled between fetches FAIL '
                 || left(fx_cursor(true), 200) || ' / ' || left(fx_cursor(false), 200) END;

-- ---- generic plans with cross-type parameters -----------------------------
CREATE TABLE fx_gen (a int4, b int2, c timestamp);
INSERT INTO fx_gen SELECT g - 5000, (g % 300)::int2, '2010-01-01'::timestamp + g * interval '1 h'
  FROM generate_series(1, 10000) g;
INSERT INTO fx_gen VALUES (2147483647, 32767, 'infinity'), (-2147483648, -32768, '-infinity');
CREATE INDEX fx_gen_ab ON fx_gen (a, b DESC);
CREATE INDEX fx_gen_cb ON fx_gen (c DESC, b);
VACUUM ANALYZE fx_gen;
SET plan_cache_mode = force_generic_plan;
PREPARE fx_p1(int8) AS SELECT a, b FROM fx_gen WHERE a >= $1 ORDER BY a, b DESC LIMIT 5;
PREPARE fx_p2(int8, int4) AS SELECT a, b FROM fx_gen WHERE a = $1 AND b > $2;
PREPARE fx_p3(date) AS SELECT c, b FROM fx_gen WHERE c < $1 ORDER BY c DESC, b LIMIT 4;
CREATE FUNCTION fx_prepared() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    out text := '';
    v int8;
    r record;
BEGIN
    FOREACH v IN ARRAY ARRAY[-9223372036854775808, -2147483649, -2147483648, -1, 0, 4999,
                             2147483647, 2147483648, 9223372036854775807]::int8[] LOOP
        FOR r IN EXECUTE 'EXECUTE fx_p1(' || v || ')' LOOP
            out := out || r::text;
        END LOOP;
        FOR r IN EXECUTE 'EXECUTE fx_p2(' || v || ', 3)' LOOP
            out := out || r::text;
        END LOOP;
    END LOOP;
    FOR r IN EXECUTE 'EXECUTE fx_p3(''2010-03-01'')' LOOP
        out := out || r::text;
    END LOOP;
    FOR r IN EXECUTE 'EXECUTE fx_p3(''infinity'')' LOOP
        out := out || r::text;
    END LOOP;
    RETURN md5(out) || ' ' || length(out);
END $$;
SET btree_jit.enabled = on;
SELECT fx_prepared() AS on_result \gset
SET btree_jit.enabled = off;
SELECT CASE WHEN fx_prepared() = :'on_result'
            THEN '@@CHECK generic plans with int8/date parameters on int4/timestamp keys ok'
            ELSE '@@CHECK generic plans with int8/date parameters on int4/timestamp keys FAIL ' || fx_prepared() || ' / ' || :'on_result' END;
SET btree_jit.enabled = on;
RESET plan_cache_mode;

-- ---- wide keys, domains, enums, expression and partial indexes ------------
CREATE DOMAIN fx_dom AS int4 CHECK (VALUE > -1000000);
CREATE TYPE fx_enum AS ENUM ('red', 'green', 'blue', 'violet');
CREATE TABLE fx_misc (a int2, b int4, c int8, d oid, e date, f time, g bool, h "char", i int4,
                      dm fx_dom, en fx_enum);
INSERT INTO fx_misc SELECT g % 3, g % 5, g % 7, g % 11, '2000-01-01'::date + g % 13, '00:00'::time + (g % 17) * interval '1 min',
       g % 2 = 0, (g % 19)::int4::"char", g, g % 1000, (ARRAY['red', 'green', 'blue', 'violet'])[1 + g % 4]::fx_enum
  FROM generate_series(1, 20000) g;
CREATE INDEX fx_misc_nine ON fx_misc (a, b, c, d, e, f, g, h, i);
CREATE INDEX fx_misc_eight ON fx_misc (a DESC, b, c DESC, d, e DESC, f, g DESC, h);
CREATE INDEX fx_misc_dom ON fx_misc (dm DESC NULLS LAST);
CREATE INDEX fx_misc_en ON fx_misc (en, b);
CREATE INDEX fx_misc_expr ON fx_misc ((b * 1000 + a), (c - 3) DESC);
CREATE INDEX fx_misc_part ON fx_misc (i) WHERE g AND a = 1;
VACUUM ANALYZE fx_misc;
SELECT fx_check('nine and eight key columns', ARRAY[
    'SELECT * FROM fx_misc WHERE a = 1 AND b = 2 AND c = 3 AND d = 4 AND e = ''2000-01-05'' AND f > ''00:03'' ORDER BY a, b, c, d, e, f, g, h, i LIMIT 20',
    'SELECT a, b, c, d, e, f, g, h, i FROM fx_misc WHERE (a, b, c, d) > (1, 4, 6, 10) ORDER BY a, b, c, d, e, f, g, h, i LIMIT 20',
    'SELECT a, b, c, d, e, f, g, h FROM fx_misc WHERE a = 2 AND b = 3 AND c = 1 ORDER BY a DESC, b, c DESC, d, e DESC, f, g DESC, h LIMIT 30',
    'SELECT a, b, c, d, e, f, g, h FROM fx_misc WHERE a = 2 AND b = 3 AND c = 1 ORDER BY a, b DESC, c, d DESC, e, f DESC, g, h DESC LIMIT 30',
    'SELECT count(*) FROM fx_misc WHERE a = 0 AND b = 0 AND c = 0 AND d = 0 AND e = ''2000-01-01'' AND f = ''00:00'' AND g AND h = ''\000''']);
SELECT fx_check('domain, enum, expression and partial indexes', ARRAY[
    'SELECT dm, i FROM fx_misc WHERE dm > 995 ORDER BY dm DESC LIMIT 25',
    'SELECT dm, i FROM fx_misc WHERE dm = 17::fx_dom',
    'SELECT en, b, i FROM fx_misc WHERE en = ''blue'' AND b = 3 LIMIT 50',
    'SELECT en, b FROM fx_misc WHERE en > ''green'' ORDER BY en DESC, b DESC LIMIT 10',
    'SELECT i FROM fx_misc WHERE b * 1000 + a = 4002 AND c - 3 < 2',
    'SELECT i FROM fx_misc WHERE g AND a = 1 AND i BETWEEN 500 AND 600']);
SELECT CASE WHEN count(*) FILTER (WHERE indexrelid = 'fx_misc_nine'::regclass AND state = 'stock') = 1
             AND count(*) FILTER (WHERE indexrelid = 'fx_misc_eight'::regclass AND state = 'jit' AND verified_searches > 0) = 1
             AND count(*) FILTER (WHERE indexrelid = 'fx_misc_dom'::regclass AND state = 'jit') = 1
             AND count(*) FILTER (WHERE indexrelid = 'fx_misc_en'::regclass AND state = 'jit' AND verified_searches > 0) = 1
            THEN '@@CHECK index states: 9 keys stock, 8 keys jit, domain jit, enum jit (its proc called) ok'
            ELSE '@@CHECK index states: 9 keys stock, 8 keys jit, domain jit, enum jit (its proc called) FAIL '
                 || string_agg(indexrelid::text || '=' || state, ', ') END
  FROM btree_jit_index_stats() WHERE indexrelid::text LIKE 'fx\_misc\_%';

DROP TABLE fx_rev, fx_cur, fx_gen, fx_misc;
