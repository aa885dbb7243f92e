--
-- test/differential/shapes_setup.sql - many small tables with many indexes
-- of many distinct key shapes, for test/suite-stress.sh (memory of a
-- long-lived backend, compile-heavy sessions, cancellation, termination).
--
-- make_shape_tables(prefix, ntables, per_table, seed): ntables tables
--   <prefix>_<n> with 8 columns of the types the module compiles, 40 rows
--   (every 7th value NULL), and per_table indexes each: 1-3 key columns in
--   random order, DESC / NULLS FIRST at random, sometimes an INCLUDE column.
-- churn(prefix, n): drop and re-create n of those indexes (relcache
--   invalidations for every backend that has them open).
--
CREATE FUNCTION make_shape_tables(prefix text, ntables int, per_table int, seed float8)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    types text[] := ARRAY['int2', 'int4', 'int8', 'oid', 'date', 'time',
                          'timestamp', 'timestamptz', 'bool', '"char"'];
    val text[] := ARRAY[
        '(g * 37 %% 30000)::int2', '(g * 7919)', '(g::int8 * 1000000007)',
        '(g::int8 * 99999989)::oid', '''2000-01-01''::date + g * 31',
        '''00:00''::time + g * interval ''17 min''',
        '''2000-01-01''::timestamp + g * interval ''5 days 3 h''',
        '''2000-01-01''::timestamptz + g * interval ''9 days 1 h''',
        'g %% 2 = 0', '(g %% 256 - 128)::int4::"char"'];
    ty int[];
    tab text;
    cols text;
    sel text;
    keys text;
    nk int;
    n int := 0;
    pick int[];
    c int;
BEGIN
    PERFORM setseed(seed);
    FOR t IN 1 .. ntables LOOP
        tab := format('%s_%s', prefix, t);
        ty := '{}';
        cols := '';
        sel := '';
        FOR i IN 1 .. 8 LOOP
            ty := ty || (1 + floor(random() * array_length(types, 1)))::int;
            cols := cols || format(', c%s %s', i, types[ty[i]]);
            sel := sel || format(', CASE WHEN g %% 7 = %s THEN NULL ELSE %s END', i % 7,
                                 format(val[ty[i]]));
        END LOOP;
        EXECUTE format('CREATE TABLE %s (id int%s)', tab, cols);
        EXECUTE format('INSERT INTO %s SELECT g%s FROM generate_series(1, 40) g', tab, sel);
        FOR j IN 1 .. per_table LOOP
            nk := 1 + floor(random() * 3)::int;
            pick := '{}';
            WHILE coalesce(array_length(pick, 1), 0) < nk LOOP
                c := 1 + floor(random() * 8)::int;
                IF NOT c = ANY (pick) THEN
                    pick := pick || c;
                END IF;
            END LOOP;
            keys := '';
            FOREACH c IN ARRAY pick LOOP
                keys := keys || CASE WHEN keys = '' THEN '' ELSE ', ' END
                    || format('c%s%s%s', c,
                              CASE WHEN random() < 0.4 THEN ' DESC' ELSE '' END,
                              CASE WHEN random() < 0.3 THEN ' NULLS FIRST'
                                   WHEN random() < 0.3 THEN ' NULLS LAST' ELSE '' END);
            END LOOP;
            EXECUTE format('CREATE INDEX %s_i%s ON %s (%s)%s', tab, j, tab, keys,
                           CASE WHEN random() < 0.2 THEN ' INCLUDE (id)' ELSE '' END);
            n := n + 1;
        END LOOP;
        EXECUTE format('ANALYZE %s', tab);
    END LOOP;
    RETURN n;
END $$;

CREATE FUNCTION churn(prefix text, n int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    done int := 0;
BEGIN
    FOR r IN SELECT c.oid::regclass AS ix, pg_get_indexdef(c.oid) AS def
               FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
               JOIN pg_class t ON t.oid = i.indrelid
              WHERE t.relname LIKE prefix || '\_%' AND c.relkind = 'i'
              ORDER BY random() LIMIT n LOOP
        EXECUTE format('DROP INDEX %s', r.ix);
        EXECUTE r.def;
        done := done + 1;
    END LOOP;
    RETURN done;
END $$;
