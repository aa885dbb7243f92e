--
-- Every type whose keys compare as integers (int2, int4, int8, oid, date,
-- time, timestamp, timestamptz, bool, "char"), under every ordering option:
-- the compiled page search must give exactly the server's results (verify
-- is on, so every compiled search is also checked against the stock
-- search).  types_other covers every other operator class.
--
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
SET client_min_messages = warning;

-- Build table tt of one type from expr (over i), with duplicates, NULLs and
-- the type's extreme values; then for each index ordering variant run
-- equality, range, backward, IS NULL and cross-type probes, module on vs
-- off.
CREATE FUNCTION type_checks(typ text, expr text, extremes text[],
                            crosstypes text[] DEFAULT '{}')
RETURNS TABLE (variant text, checked int, failures text[], state text,
               signature text, verified boolean)
LANGUAGE plpgsql AS $$
DECLARE
    variants text[] := ARRAY['ASC', 'DESC', 'ASC NULLS FIRST', 'DESC NULLS LAST'];
    v text;
    s text;
    ct text;
    samples text[];
    qs text[];
BEGIN
    DROP TABLE IF EXISTS tt;
    EXECUTE format('CREATE TABLE tt (k %s, id int4)', typ);
    EXECUTE format('INSERT INTO tt SELECT CASE WHEN i %% 37 = 0 THEN NULL ELSE (%s) END, i
                      FROM generate_series(1, 30000) i', expr);
    FOREACH s IN ARRAY extremes LOOP
        EXECUTE format('INSERT INTO tt SELECT %L::%s, -g FROM generate_series(1, 3) g', s, typ);
    END LOOP;
    EXECUTE 'SELECT array_agg(DISTINCT k::text) FROM tt WHERE id % 1499 = 7 AND k IS NOT NULL'
        INTO samples;
    samples := samples || extremes;
    ANALYZE tt;

    FOREACH v IN ARRAY variants LOOP
        EXECUTE format('CREATE INDEX tt_idx ON tt (k %s)', v);
        qs := ARRAY['SELECT count(*) FROM tt WHERE k IS NULL',
                    'SELECT k, id FROM tt WHERE k IS NOT NULL ORDER BY k LIMIT 7',
                    'SELECT k, id FROM tt ORDER BY k DESC LIMIT 7',
                    'SELECT k, id FROM tt ORDER BY k NULLS FIRST LIMIT 7',
                    'SELECT k, id FROM tt ORDER BY k DESC NULLS LAST LIMIT 7'];
        FOREACH s IN ARRAY samples LOOP
            qs := qs || ARRAY[
                format('SELECT id FROM tt WHERE k = %L::%s', s, typ),
                format('SELECT k, id FROM tt WHERE k < %L::%s ORDER BY k DESC LIMIT 5', s, typ),
                format('SELECT k, id FROM tt WHERE k <= %L::%s ORDER BY k DESC LIMIT 5', s, typ),
                format('SELECT k, id FROM tt WHERE k > %L::%s ORDER BY k LIMIT 5', s, typ),
                format('SELECT k, id FROM tt WHERE k >= %L::%s ORDER BY k LIMIT 5', s, typ),
                format('SELECT count(*) FROM tt WHERE k BETWEEN %L::%s AND %L::%s', s, typ, s, typ)];
            FOREACH ct IN ARRAY crosstypes LOOP
                qs := qs || ARRAY[
                    format('SELECT id FROM tt WHERE k = %L::%s', s, ct),
                    format('SELECT k, id FROM tt WHERE k < %L::%s ORDER BY k DESC LIMIT 5', s, ct),
                    format('SELECT k, id FROM tt WHERE k >= %L::%s ORDER BY k LIMIT 5', s, ct)];
            END LOOP;
        END LOOP;
        variant := v;
        SELECT c.checked, c.failures INTO checked, failures FROM check_queries(qs) c;
        SELECT i.state, i.signature, i.verified INTO state, signature, verified
          FROM index_state('tt_idx') i;
        RETURN NEXT;
        DROP INDEX tt_idx;
    END LOOP;
    DROP TABLE tt;
END $$;

SELECT * FROM type_checks('int2', '((i * 7919) % 65536 - 32768)::int2',
                          '{-32768, 32767, 0}', '{int4, int8}');
SELECT * FROM type_checks('int4',
                          'CASE WHEN i % 3 = 0 THEN i % 100
                                ELSE ((i::int8 * 2654435761) % 4294967296 - 2147483648)::int4 END',
                          '{-2147483648, 2147483647, 0}', '{int8}');
SELECT * FROM type_checks('int8',
                          '(i::numeric * 11400714819323198485 % 18446744073709551616
                            - 9223372036854775808)::int8',
                          '{-9223372036854775808, 9223372036854775807, 0, -1}');
SELECT * FROM type_checks('oid', '((i::int8 * 2654435761) % 4294967296)::oid',
                          '{0, 4294967295, 2147483648, 2147483647}');
SELECT * FROM type_checks('date', '''2000-01-01''::date + (i * 37 % 100000 - 50000)',
                          '{infinity, -infinity, 4713-01-01 BC, 5874897-12-31}');
SELECT * FROM type_checks('time', '''00:00''::time + ((i * 7919) % 86400) * interval ''1 second''',
                          '{00:00, 24:00:00, 23:59:59.999999}');
SELECT * FROM type_checks('timestamp',
                          '''2000-01-01''::timestamp + (i * 7919 % 1000000) * interval ''1 minute''',
                          '{infinity, -infinity, 4713-01-01 00:00:00 BC, 294276-12-31 23:59:59}');
SELECT * FROM type_checks('timestamptz',
                          '''2000-01-01 UTC''::timestamptz + (i * 7919 % 1000000) * interval ''1 minute''',
                          '{infinity, -infinity, 4713-01-01 00:00:00+00 BC, 294276-12-31 23:59:59+00}');
SELECT * FROM type_checks('bool', 'i % 3 = 0', '{true, false}');
SELECT * FROM type_checks('"char"', '((i % 255) - 127)::int4::"char"', '{a, \\177, \\377, \\001}');

-- int2 column probed with int4 and int8 constants outside int2's range
CREATE TABLE narrow (k int2, id int4);
INSERT INTO narrow SELECT (g % 65536 - 32768)::int2, g FROM generate_series(1, 70000) g;
CREATE INDEX narrow_k ON narrow (k);
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT count(*) FROM narrow WHERE k < 40000::int4',
    'SELECT count(*) FROM narrow WHERE k > ''-40000''::int8',
    'SELECT k FROM narrow WHERE k >= 32767::int8 ORDER BY k LIMIT 3',
    'SELECT k FROM narrow WHERE k > 32767::int4 ORDER BY k LIMIT 3',
    'SELECT k FROM narrow WHERE k < ''-32768''::int8 ORDER BY k DESC LIMIT 3',
    'SELECT k FROM narrow WHERE k = ANY (ARRAY[1, 70000, -5]::int8[]) ORDER BY k']);
SELECT state, signature, searched_jit, verified FROM index_state('narrow_k');
DROP TABLE narrow;

-- int8 column probed with int4 and int2 constants
CREATE TABLE wide (k int8, id int4);
INSERT INTO wide SELECT CASE WHEN g % 3 = 0 THEN g % 1000 ELSE g * 1000000007::int8 END, g
  FROM generate_series(1, 70000) g;
CREATE INDEX wide_k ON wide (k DESC);
SELECT checked, failures FROM check_queries(ARRAY[
    'SELECT count(*) FROM wide WHERE k = 500::int4',
    'SELECT count(*) FROM wide WHERE k = 500::int2',
    'SELECT k FROM wide WHERE k > 2147483647::int4 ORDER BY k LIMIT 3',
    'SELECT k FROM wide WHERE k < ''-32768''::int2 ORDER BY k DESC LIMIT 3',
    'SELECT k FROM wide WHERE k >= 999::int2 ORDER BY k LIMIT 3',
    'SELECT k FROM wide WHERE k <= 7::int4 ORDER BY k DESC LIMIT 3',
    'SELECT k FROM wide WHERE k = ANY (ARRAY[1, 7, 999]::int4[]) ORDER BY k']);
SELECT state, signature, searched_jit, verified FROM index_state('wide_k');
DROP TABLE wide;
