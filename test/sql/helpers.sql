--
-- Helpers used by the other tests: run a query with the module on and off
-- and compare the results row for row.
--
-- check_query() runs q with btree_jit.enabled on, then off, forcing plain
-- index scans, and returns NULL when both gave the same rows in the same
-- order, or a description of the first difference.  A query without ORDER
-- BY promises no order: its rows are compared sorted, as autovacuum may
-- change the plan between the two runs on a busy machine.
CREATE FUNCTION check_query(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    on_rows text[];
    off_rows text[];
    agg text := CASE WHEN q ~* 'order\s+by' THEN 'array_agg(r::text)'
                     ELSE 'array_agg(r::text ORDER BY r::text)' END;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('btree_jit.enabled', 'on', true);
    EXECUTE format('SELECT coalesce(%s, ''{}'') FROM (%s) r', agg, q)
        INTO on_rows;
    PERFORM set_config('btree_jit.enabled', 'off', true);
    EXECUTE format('SELECT coalesce(%s, ''{}'') FROM (%s) r', agg, q)
        INTO off_rows;
    PERFORM set_config('btree_jit.enabled', 'on', true);
    IF on_rows IS DISTINCT FROM off_rows THEN
        RETURN format('%s: on %s, off %s', q,
                      left(on_rows::text, 200), left(off_rows::text, 200));
    END IF;
    RETURN NULL;
END $$;

-- check_queries() runs check_query over a set of queries and returns how
-- many were compared and the differences found.
CREATE FUNCTION check_queries(qs text[], OUT checked int, OUT failures text[])
LANGUAGE plpgsql AS $$
DECLARE
    q text;
    r text;
BEGIN
    checked := 0;
    failures := '{}';
    FOREACH q IN ARRAY qs LOOP
        r := check_query(q);
        checked := checked + 1;
        IF r IS NOT NULL THEN
            failures := failures || r;
        END IF;
    END LOOP;
END $$;

-- Per-index figures of this backend, as booleans a test can assert.
CREATE FUNCTION index_state(idx regclass, OUT state text, OUT signature text,
                            OUT searched_jit boolean, OUT verified boolean)
LANGUAGE sql AS $$
    SELECT s.state, s.signature, s.jit_searches > 0, s.verified_searches > 0
      FROM btree_jit_index_stats() s WHERE s.indexrelid = idx
$$;

-- An index's jit_<counter> and verified_<counter> (btree_jit_index_stats())
-- so far in this backend.
CREATE FUNCTION jit_counts(idx regclass, counter text,
                           OUT jit bigint, OUT verified bigint)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SELECT coalesce(sum(s.%I), 0), coalesce(sum(s.%I), 0)
                      FROM btree_jit_index_stats() s WHERE s.indexrelid = $1',
                   'jit_' || counter, 'verified_' || counter)
        INTO jit, verified USING idx;
END $$;

-- Whether this server redirects the function fn (the status's reason).
CREATE FUNCTION redirected(fn text) RETURNS boolean
LANGUAGE sql AS $$
    SELECT position(fn || ' redirected' IN reason) > 0 FROM btree_jit_status()
$$;

-- Page searches of one index so far in this backend (either path).
CREATE FUNCTION searches(idx regclass) RETURNS bigint
LANGUAGE sql AS $$
    SELECT coalesce(sum(s.jit_searches + s.stock_searches), 0)::bigint
      FROM btree_jit_index_stats() s WHERE s.indexrelid = idx
$$;

SELECT check_query('SELECT 1');
