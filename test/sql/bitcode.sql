--
-- Tier 2: comparison procs imported from the server's own bitcode.  A
-- called column whose proc is a built-in function gets the proc's body
-- inlined into the compiled search, behind a guard on the scankey's fn_addr
-- (the imported body runs only when the scankey's proc is that very
-- function); its signature says "<symbol> bitcode".  types_other covers
-- every imported type alone (interval, inet, money, enum, arrays, records,
-- jsonb, macaddr, ranges, text under libc and ICU collations); this test
-- covers what is particular to importing: several imports in one shape,
-- cross-type scankeys whose proc is not the imported one, the object cache,
-- and a server without usable bitcode.  verify is on throughout: every
-- compiled search is checked against the server's own.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btree_jit;
RESET client_min_messages;

CREATE FUNCTION bc_setup() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    SET btree_jit.verify = on;
    SET btree_jit.compile_threshold = 0;
    SET enable_seqscan = off;
    SET enable_bitmapscan = off;
END $$;
CREATE FUNCTION bc_verified(idx regclass) RETURNS TABLE (state text, signature text,
                                                        searched_jit boolean,
                                                        verified boolean)
LANGUAGE sql AS $$
    SELECT s.state, s.signature, s.jit_searches > 0, s.verified_searches > 0
      FROM btree_jit_index_stats() s WHERE s.indexrelid = idx
$$;
SELECT bc_setup();

-- (autovacuum off on these tables: its pg_class update invalidates an index
-- and returns its state to pending between a search and the check of it)
-- ---- several imports in one shape, one of them twice, with an inline
-- column between them; NULLs, DESC and NULLS FIRST
CREATE TYPE bc_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE bc (iv interval, ip inet, n int4, m money, e bc_mood, iv2 interval) WITH (autovacuum_enabled = off);
INSERT INTO bc
  SELECT CASE WHEN g % 31 = 0 THEN NULL ELSE (g % 700) * interval '1 hour 7 sec' END,
         CASE WHEN g % 29 = 0 THEN NULL
              ELSE ('10.' || (g % 50) || '.' || (g % 9) || '.' || (g % 97))::inet END,
         g % 13,
         ((g * 7919) % 2003 - 1000)::money,
         (ARRAY['sad', 'ok', 'happy'])[1 + g % 3]::bc_mood,
         (g % 11) * interval '1 day'
    FROM generate_series(1, 30000) g;
INSERT INTO bc VALUES ('-178000000 years', '::1', 0, '-92233720368547758.08', 'sad', '1 mon'),
                      ('178000000 years', '0.0.0.0/0', 1, '92233720368547758.07', 'happy', '30 days');
CREATE INDEX bc_multi ON bc (iv, n, ip DESC NULLS LAST, iv2 NULLS FIRST);
CREATE INDEX bc_money ON bc (m DESC);
CREATE INDEX bc_enum ON bc (e NULLS FIRST, m);
ANALYZE bc;

SELECT check_queries(ARRAY[
  'SELECT count(*) FROM bc WHERE iv = interval ''3 hours 21 sec''',
  'SELECT iv, n, ip FROM bc WHERE iv = interval ''5 hours 35 sec'' AND n = 5 ORDER BY iv, n, ip DESC',
  'SELECT iv, n, ip, iv2 FROM bc WHERE iv = interval ''10 hours 70 sec'' AND n = 10 AND ip < ''10.10.1.0''::inet ORDER BY iv, n, ip DESC, iv2 NULLS FIRST LIMIT 20',
  'SELECT iv, n, ip, iv2 FROM bc WHERE iv = interval ''10 hours 70 sec'' AND n = 10 AND ip = ''10.10.1.10''::inet AND iv2 >= interval ''1 day'' ORDER BY iv2',
  'SELECT iv FROM bc WHERE iv > interval ''600 hours'' ORDER BY iv LIMIT 10',
  'SELECT iv FROM bc WHERE iv < interval ''1 hour'' ORDER BY iv DESC LIMIT 10',
  'SELECT count(*) FROM bc WHERE iv IS NULL',
  'SELECT iv, n, ip FROM bc WHERE iv = interval ''7 hours 49 sec'' AND n = 7 AND ip IS NULL',
  'SELECT iv FROM bc WHERE iv = interval ''178000000 years''',
  'SELECT iv FROM bc WHERE iv >= interval ''-178000000 years'' ORDER BY iv LIMIT 3',
  'SELECT m FROM bc WHERE m = ''-92233720368547758.08''::money',
  'SELECT m FROM bc WHERE m > 900::money ORDER BY m DESC LIMIT 10',
  'SELECT m FROM bc WHERE m <= (-900)::money ORDER BY m LIMIT 10',
  'SELECT count(*) FROM bc WHERE e = ''ok''',
  'SELECT e, m FROM bc WHERE e = ''happy'' AND m BETWEEN 0::money AND 20::money ORDER BY e, m',
  'SELECT e FROM bc WHERE e IS NULL',
  'SELECT e, m FROM bc WHERE e > ''sad'' ORDER BY e NULLS FIRST, m LIMIT 5']);
-- inserts go through the compiled _bt_compare
INSERT INTO bc SELECT iv, ip, n + 1, m, e, iv2 FROM bc WHERE n = 3;
SELECT * FROM bc_verified('bc_multi');
SELECT * FROM bc_verified('bc_money');
SELECT * FROM bc_verified('bc_enum');

-- ---- cross-type scankeys: a text column under a linguistic collation
-- imports bttextcmp; a name constant makes the scankey carry bttextnamecmp,
-- which is not the imported function, so the guard sends it to the plain
-- call (and the result is still exact)
CREATE TABLE bc_t (t text COLLATE "en-US-x-icu", id int4) WITH (autovacuum_enabled = off);
INSERT INTO bc_t
  SELECT CASE WHEN g % 17 = 0 THEN NULL
              WHEN g % 2 = 0 THEN md5(g::text) ELSE upper(md5(g::text)) END, g
    FROM generate_series(1, 8000) g;
INSERT INTO bc_t VALUES ('', -1), ('a', -2), ('A', -3), ('ä', -4), ('Ä', -5);
CREATE INDEX bc_t_t ON bc_t (t DESC NULLS LAST);
ANALYZE bc_t;
SELECT check_queries(ARRAY[
  'SELECT id FROM bc_t WHERE t = ''a'' ORDER BY id',
  'SELECT t FROM bc_t WHERE t < ''B'' ORDER BY t DESC LIMIT 10',
  'SELECT t FROM bc_t WHERE t >= ''ä'' ORDER BY t LIMIT 10',
  'SELECT id FROM bc_t WHERE t = (''a''::name COLLATE "en-US-x-icu") ORDER BY id',
  'SELECT t FROM bc_t WHERE t < (''B''::name COLLATE "en-US-x-icu") ORDER BY t DESC LIMIT 10',
  'SELECT t FROM bc_t WHERE t >= (''Ä''::name COLLATE "en-US-x-icu") ORDER BY t LIMIT 10',
  'SELECT t FROM bc_t WHERE t > (''c81e728d9d4c2f636f067f89cc14862c''::name COLLATE "en-US-x-icu") ORDER BY t LIMIT 3',
  'SELECT count(*) FROM bc_t WHERE t IS NULL']);
SELECT * FROM bc_verified('bc_t_t');

-- ---- the object cache: a backend that links an object with imported code
-- from the cache does not load LLVM, and knows the tiers without it
CREATE FUNCTION bc_llvm_mapped() RETURNS bool LANGUAGE sql AS
$$ SELECT pg_read_file('/proc/' || pg_backend_pid() || '/maps') ~ 'libLLVM' $$;
-- a shape no other test uses: (inet DESC, interval, int2)
CREATE TABLE bc_oc (a inet, b interval, c int2) WITH (autovacuum_enabled = off);
INSERT INTO bc_oc SELECT ('192.168.' || (g % 40) || '.' || (g % 250))::inet,
                         (g % 300) * interval '1 min', g % 5
                    FROM generate_series(1, 20000) g;
CREATE INDEX bc_oc_abc ON bc_oc (a DESC, b, c);
ANALYZE bc_oc;
\c
SELECT state, signature FROM btree_jit_compile('bc_oc_abc');
SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'bc_oc_abc'::regclass;
SELECT bc_llvm_mapped() AS llvm_after_compiling;
\c
SELECT state, signature FROM btree_jit_compile('bc_oc_abc');
SELECT code_source FROM btree_jit_index_stats() WHERE indexrelid = 'bc_oc_abc'::regclass;
SELECT bc_llvm_mapped() AS llvm_after_cached_load;
-- and the linked code searches exactly
SET btree_jit.verify = on;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM bc_oc WHERE a = '192.168.7.7' AND b BETWEEN interval '1 min' AND interval '3 hours';
SELECT count(*) FROM bc_oc WHERE a > '192.168.30.0' AND a < '192.168.31.0';
SELECT * FROM bc_verified('bc_oc_abc');

-- ---- a server without usable bitcode: every import is refused, the
-- column is called, and the signature says why
\c
SELECT bc_setup();
SET btree_jit.server_bitcode_path = '/nonexistent/bitcode';
SELECT count(*) FROM bc WHERE iv = interval '3 hours 21 sec';
-- (without bc_enum: 18's skip scan would answer m > 900 with it)
DROP INDEX bc_enum;
SELECT count(*) FROM bc WHERE m > 900::money;
SELECT * FROM bc_verified('bc_multi');
SELECT * FROM bc_verified('bc_money');
-- a directory that is there but holds no index
CREATE INDEX bc_enum ON bc (e NULLS FIRST, m);
SET btree_jit.server_bitcode_path = '/';
SELECT count(*) FROM bc WHERE e = 'ok';
SELECT * FROM bc_verified('bc_enum');
RESET btree_jit.server_bitcode_path;

DROP TABLE bc, bc_t, bc_oc;
DROP TYPE bc_mood;
DROP FUNCTION bc_setup(), bc_verified(regclass), bc_llvm_mapped();
