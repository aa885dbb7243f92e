--
-- index_coverage.sql - which btree indexes of the current database get
-- compiled code, and why the others do not.  Run by test/server_regress.sh
-- in the regression database after the suite when BTJIT_INDEX_COVERAGE=1
-- (the module must be preloaded; needs a superuser for btree_jit_compile).
--
-- Every btree index with storage is compiled ahead of time in this
-- session; the report gives the count per state, the refusal reasons with
-- their counts, and the key shapes with the number of indexes using each.
--
CREATE EXTENSION IF NOT EXISTS btree_jit;
SET btree_jit.max_signatures = 4096;
SET client_min_messages = warning;
CREATE TEMP TABLE btjit_cov (idx oid, state text, reason text, signature text);
DO $$
DECLARE
    r record;
    c record;
BEGIN
    FOR r IN SELECT cl.oid
               FROM pg_class cl JOIN pg_am am ON am.oid = cl.relam
              WHERE am.amname = 'btree' AND cl.relkind = 'i'
                AND cl.relpersistence <> 't'
    LOOP
        BEGIN
            SELECT * INTO c FROM btree_jit_compile(r.oid);
            INSERT INTO btjit_cov VALUES (r.oid, c.state, coalesce(c.reason, ''), c.signature);
        EXCEPTION WHEN OTHERS THEN
            INSERT INTO btjit_cov VALUES (r.oid, 'error', SQLERRM, NULL);
        END;
    END LOOP;
END $$;
\echo btree indexes by state (catalog = in pg_catalog)
SELECT state, count(*) AS indexes,
       count(*) FILTER (WHERE idx::regclass::text LIKE 'pg\_%') AS catalog
  FROM btjit_cov GROUP BY 1 ORDER BY 1;
\echo refusals
SELECT state, reason, count(*) AS indexes
  FROM btjit_cov WHERE state <> 'jit' GROUP BY 1, 2 ORDER BY 3 DESC, 2;
\echo key columns by how they are compared
SELECT CASE WHEN col LIKE 'call(%' THEN 'called'
            WHEN col LIKE '% bitcode%' THEN 'bitcode' ELSE 'inline' END AS how,
       regexp_replace(col, ' (DESC|NULLS FIRST|NULLS LAST)', '', 'g') AS kind,
       count(*) AS columns
  FROM btjit_cov,
       LATERAL regexp_split_to_table(substr(signature, 2, length(signature) - 2),
                                     ', (?![^(]*\))') AS col
 WHERE state = 'jit'
 GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2;
\echo distinct compiled shapes
SELECT count(DISTINCT signature) AS shapes FROM btjit_cov WHERE state = 'jit';
