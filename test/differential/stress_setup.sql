--
-- test/differential/stress_setup.sql - tables and functions for
-- test/suite-stress.sh (run once by a superuser, module preloaded).
--
-- index_probe_sql(idx, v)   a query that scans idx (forced by the ORDER BY
--                           of its own key order, with a predicate on its
--                           first key column), variant v
-- compare_index(idx)        run the probes of idx with btree_jit on and off,
--                           return the number of differences (WARNING each)
-- compare_indexes(pattern)  compare_index over every valid btree index of
--                           the tables whose name matches pattern
-- stress_probe(n)           n random probes of s_a/s_b, each run with the
--                           module on and off; must be called inside a
--                           REPEATABLE READ transaction (one snapshot)
-- stress_write(n)           n random writes: inserts with duplicates,
--                           ON CONFLICT, caught unique violations, key
--                           updates, range deletes, batch inserts (splits)
-- probe_indexes(pattern)    the same probes once each, under the session's
--                           btree_jit.enabled (for memory baselines)
-- mem()                     this backend's VmRSS (kB) and the total of its
--                           memory contexts (bytes)
--
CREATE EXTENSION IF NOT EXISTS amcheck;

CREATE FUNCTION index_probe_sql(idx regclass, v int) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    i pg_index;
    tab text;
    cols text[] := '{}';
    ord text[] := '{}';
    rord text[] := '{}';
    col1 text;
    k int;
    o int;
    pick text;
BEGIN
    SELECT * INTO i FROM pg_index WHERE indexrelid = idx;
    tab := i.indrelid::regclass::text;
    FOR k IN 1 .. i.indnkeyatts LOOP
        cols := cols || pg_get_indexdef(idx, k, true);
        o := i.indoption[k - 1];
        ord := ord || format('%s %s NULLS %s', pg_get_indexdef(idx, k, true),
                             CASE WHEN o & 1 = 1 THEN 'DESC' ELSE 'ASC' END,
                             CASE WHEN o & 2 = 2 THEN 'FIRST' ELSE 'LAST' END);
        rord := rord || format('%s %s NULLS %s', pg_get_indexdef(idx, k, true),
                              CASE WHEN o & 1 = 1 THEN 'ASC' ELSE 'DESC' END,
                              CASE WHEN o & 2 = 2 THEN 'LAST' ELSE 'FIRST' END);
    END LOOP;
    col1 := cols[1];
    -- a value of the first key column, taken from the table
    pick := format('(SELECT %s FROM %s WHERE %s IS NOT NULL OFFSET %s LIMIT 1)',
                   col1, tab, col1, (v * 7) % 23);
    RETURN CASE v % 4
        WHEN 0 THEN format('SELECT %s FROM %s WHERE %s = %s ORDER BY %s LIMIT 500',
                           array_to_string(cols, ', '), tab, col1, pick,
                           array_to_string(ord, ', '))
        WHEN 1 THEN format('SELECT %s FROM %s WHERE %s >= %s ORDER BY %s LIMIT 7',
                           array_to_string(cols, ', '), tab, col1, pick,
                           array_to_string(rord, ', '))
        WHEN 2 THEN format('SELECT %s FROM %s WHERE %s IS NULL ORDER BY %s LIMIT 5',
                           array_to_string(cols, ', '), tab, col1,
                           array_to_string(ord, ', '))
        ELSE format('SELECT %s FROM %s WHERE %s < %s ORDER BY %s LIMIT 9',
                    array_to_string(cols, ', '), tab, col1, pick,
                    array_to_string(ord, ', '))
    END;
END $$;

CREATE FUNCTION compare_index(idx regclass, variants int DEFAULT 2) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    q text;
    r_on text;
    r_off text;
    bad int := 0;
    v int;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    FOR v IN 0 .. variants - 1 LOOP
        q := format('SELECT count(*) || '' '' || coalesce(md5(string_agg(x::text, '','')), ''-'') FROM (%s) x',
                    index_probe_sql(idx, v + (idx::oid::int8 % 4)::int));
        PERFORM set_config('btree_jit.enabled', 'on', true);
        EXECUTE q INTO r_on;
        PERFORM set_config('btree_jit.enabled', 'off', true);
        EXECUTE q INTO r_off;
        PERFORM set_config('btree_jit.enabled', 'on', true);
        IF r_on IS DISTINCT FROM r_off THEN
            bad := bad + 1;
            RAISE WARNING 'MISMATCH index %: on % off %; query: %', idx, r_on, r_off, q;
        END IF;
    END LOOP;
    RETURN bad;
END $$;

CREATE FUNCTION compare_indexes(pattern text, variants int DEFAULT 2) RETURNS TABLE (indexes int, mismatches int)
LANGUAGE plpgsql AS $$
DECLARE
    ix regclass;
BEGIN
    indexes := 0;
    mismatches := 0;
    FOR ix IN SELECT i.indexrelid::regclass FROM pg_index i
                JOIN pg_class c ON c.oid = i.indexrelid
                JOIN pg_class t ON t.oid = i.indrelid
               WHERE c.relam = 403 AND i.indisvalid AND i.indisready
                 AND t.relname LIKE pattern AND t.relkind = 'r'
               ORDER BY 1::int LOOP
        mismatches := mismatches + compare_index(ix, variants);
        indexes := indexes + 1;
    END LOOP;
    RETURN NEXT;
END $$;

-- the probes of compare_indexes, run once under the session's settings
CREATE FUNCTION probe_indexes(pattern text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    ix regclass;
    n int := 0;
    dummy int8;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    FOR ix IN SELECT i.indexrelid::regclass FROM pg_index i
                JOIN pg_class c ON c.oid = i.indexrelid
                JOIN pg_class t ON t.oid = i.indrelid
               WHERE c.relam = 403 AND i.indisvalid AND i.indisready
                 AND t.relname LIKE pattern AND t.relkind = 'r'
               ORDER BY 1::int LOOP
        EXECUTE format('SELECT count(*) FROM (%s) x',
                       index_probe_sql(ix, (ix::oid::int8 % 4)::int)) INTO dummy;
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

CREATE FUNCTION mem(OUT rss_kb int8, OUT context_bytes int8)
LANGUAGE sql AS $$
    SELECT substring(pg_read_file('/proc/' || pg_backend_pid() || '/status')
                     FROM 'VmRSS:\s*(\d+)')::int8,
           (SELECT sum(total_bytes)::int8 FROM pg_backend_memory_contexts)
$$;

-- ---- concurrency workload ----------------------------------------------
CREATE TABLE s_a (id bigserial PRIMARY KEY, k int4, t timestamptz, g int2,
                  c "char", x text, v int8 UNIQUE);
INSERT INTO s_a (k, t, g, c, x, v)
SELECT (power(random(), 3) * 2000)::int, '2020-01-01'::timestamptz + g * interval '17 min',
       CASE WHEN g % 9 = 0 THEN NULL ELSE (g % 50)::int2 END,
       ((g % 256) - 128)::int4::"char", 'x' || (g % 300), g
  FROM generate_series(1, 30000) g;
CREATE INDEX s_a_k_t ON s_a (k, t DESC);
CREATE INDEX s_a_g_k ON s_a (g NULLS FIRST, k) INCLUDE (v);
CREATE INDEX s_a_c_id ON s_a (c DESC, id);
CREATE INDEX s_a_x ON s_a (x);
CREATE INDEX s_a_t ON s_a (t) WITH (fillfactor = 30);

CREATE TABLE s_b (a int8, b date, c oid, d bool);
INSERT INTO s_b SELECT g % 3000, '2000-01-01'::date + (g % 400), (g * 7919)::int8 % 4294967296, g % 2 = 0
  FROM generate_series(1, 20000) g;
CREATE INDEX s_b_a ON s_b (a);
CREATE INDEX s_b_bc ON s_b (b DESC NULLS LAST, c);
CREATE UNIQUE INDEX s_b_abc ON s_b (a, b, c);
CREATE INDEX s_b_dca ON s_b (d, c DESC, a);
VACUUM ANALYZE s_a;
VACUUM ANALYZE s_b;

CREATE FUNCTION stress_probe_sql() RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    k int := (power(random(), 3) * 2000)::int;
    w int := (random() * 50)::int;
BEGIN
    RETURN CASE (random() * 14)::int
        WHEN 0 THEN format('SELECT id, k, t FROM s_a WHERE k = %s', k)
        WHEN 1 THEN format('SELECT id FROM s_a WHERE k BETWEEN %s AND %s', k, k + w)
        WHEN 2 THEN format('SELECT id, g, k, v FROM s_a WHERE g = %s AND k > %s', w, k)
        WHEN 3 THEN format('SELECT id, c FROM s_a WHERE c = ANY (ARRAY[%s, %s, -128]::int4[]::"char"[])', w - 60, w + 60)
        WHEN 4 THEN format('SELECT id, k, t FROM s_a WHERE (k, t) > (%s, ''2020-03-01'') ORDER BY k, t DESC, id LIMIT 20', k)
        WHEN 5 THEN format('SELECT id, v FROM s_a WHERE v = %s', k * 13)
        WHEN 6 THEN format('SELECT id FROM s_a WHERE k = %s::int8 OR k = %s::int2', k, w)
        WHEN 7 THEN format('SELECT a, b, c FROM s_b WHERE b = ''2000-01-01''::date + %s ORDER BY b DESC, c, a LIMIT 30', w)
        WHEN 8 THEN format('SELECT a, b, c FROM s_b WHERE a IN (%s, %s, %s)', k, k + 1, w)
        WHEN 9 THEN format('SELECT count(*) FROM s_a WHERE g IS NULL AND k < %s', k)
        WHEN 10 THEN format('SELECT id, k FROM s_a WHERE k < %s ORDER BY k DESC, t, id LIMIT 15', k)
        -- "as of": the newest row of key k at or before an instant (s_a_k_t
        -- forward, LIMIT 1, int4 and int8 keys), and the oldest at or after
        -- one, index-only (s_a_k_t backward)
        WHEN 11 THEN format('SELECT id, t FROM s_a WHERE k = %s%s AND t <= ''2020-01-01''::timestamptz + %s * interval ''1 day'' ORDER BY k, t DESC LIMIT 1',
                            k, CASE WHEN w % 2 = 0 THEN '::int8' ELSE '' END, w * 3)
        WHEN 12 THEN format('SELECT k, t FROM s_a WHERE k = %s AND t >= ''2020-01-01''::timestamptz + %s * interval ''1 day'' ORDER BY k DESC, t LIMIT 1',
                            k, w * 3)
        -- a merge join of s_a with itself: the inner scan is marked and
        -- restored (stress_probe turns hash and nested-loop joins off).
        -- Four keys from the sparse upper half: the join returns the square
        -- of each key's rows, and a small k can have thousands (the
        -- writers' batches of 150 land mostly there), which once made
        -- string_agg's result pass 1 GB ("out of memory", 54000)
        WHEN 13 THEN format('SELECT a.id, b.id FROM s_a a JOIN s_a b ON a.k = b.k WHERE a.k BETWEEN %s AND %s AND b.k >= %1$s',
                            1000 + (w * 19) % 900, 1000 + (w * 19) % 900 + 3)
        ELSE format('SELECT d, c, a FROM s_b WHERE d AND c > %s ORDER BY d, c DESC, a LIMIT 25', k * 1000000)
    END;
END $$;

CREATE FUNCTION stress_probe(n int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    q text;
    r_on text;
    r_off text;
    bad int := 0;
    saved text := current_setting('btree_jit.enabled');
BEGIN
    IF current_setting('transaction_isolation') <> 'repeatable read' THEN
        RAISE EXCEPTION 'stress_probe needs a REPEATABLE READ transaction';
    END IF;
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('enable_hashjoin', 'off', true);
    PERFORM set_config('enable_nestloop', 'off', true);
    FOR i IN 1 .. n LOOP
        -- order-insensitive: a concurrent CREATE INDEX may change the plan
        -- between the two runs
        q := format('SELECT count(*) || '' '' || coalesce(md5(string_agg(x::text, '','' ORDER BY x::text)), ''-'') FROM (%s) x',
                    stress_probe_sql());
        PERFORM set_config('btree_jit.enabled', 'on', true);
        EXECUTE q INTO r_on;
        PERFORM set_config('btree_jit.enabled', 'off', true);
        EXECUTE q INTO r_off;
        IF r_on IS DISTINCT FROM r_off THEN
            bad := bad + 1;
            RAISE WARNING 'MISMATCH on % off %; query: %', r_on, r_off, q;
        END IF;
    END LOOP;
    PERFORM set_config('btree_jit.enabled', saved, true);
    RETURN bad;
END $$;

CREATE FUNCTION stress_write(n int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    kk int;
    dup int := 0;
    somev int8;
BEGIN
    FOR i IN 1 .. n LOOP
        kk := (power(random(), 3) * 2000)::int;
        CASE (random() * 7)::int
        WHEN 0 THEN
            INSERT INTO s_a (k, t, g, c, x, v)
            VALUES (kk, now() - random() * interval '1000 days', (random() * 60)::int2,
                    ((random() * 255)::int - 128)::int4::"char", 'x' || kk, (random() * 100000)::int8)
            ON CONFLICT (v) DO UPDATE SET k = excluded.k, g = excluded.g;
        WHEN 1 THEN
            UPDATE s_a SET k = k + 1, t = t + interval '1 s'
             WHERE id IN (SELECT id FROM s_a WHERE k = kk ORDER BY id LIMIT 3);
        WHEN 2 THEN
            DELETE FROM s_a WHERE id IN (SELECT id FROM s_a WHERE k = kk LIMIT 20);
        WHEN 3 THEN
            SELECT v INTO somev FROM s_a WHERE k = kk LIMIT 1;
            BEGIN
                INSERT INTO s_a (k, t, g, c, x, v) VALUES (kk, now(), 1, 'a', 'dup', somev);
            EXCEPTION WHEN unique_violation THEN
                dup := dup + 1;
            END;
        WHEN 4 THEN
            -- many equal keys at once: posting lists, page splits
            INSERT INTO s_a (k, t, g, c, x, v)
            SELECT kk, '2021-01-01', (g % 3)::int2, 'z', 'batch', 200000 + (random() * 1e9)::int8
              FROM generate_series(1, 150) g
            ON CONFLICT DO NOTHING;
        WHEN 5 THEN
            INSERT INTO s_b VALUES (kk, '2000-01-01'::date + (random() * 400)::int,
                                    (random() * 4294967295)::int8::oid, random() < 0.5)
            ON CONFLICT DO NOTHING;
        WHEN 6 THEN
            DELETE FROM s_b WHERE a = kk;
        ELSE
            BEGIN
                INSERT INTO s_b SELECT a, b, c, d FROM s_b WHERE a = kk LIMIT 2;
            EXCEPTION WHEN unique_violation THEN
                dup := dup + 1;
            END;
        END CASE;
    END LOOP;
    RETURN dup;
END $$;
