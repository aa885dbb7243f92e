--
-- Indexes the compiled code does not cover stay on the stock path, with the
-- reason recorded; the SQL functions refuse bad input with clear errors.
--
SET btree_jit.verify = on;
SET btree_jit.compile_threshold = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE other (t text, n numeric, f float8, i int4);
INSERT INTO other SELECT g::text, g, g, g FROM generate_series(1, 1000) g;
CREATE INDEX other_t ON other (t);
CREATE INDEX other_n ON other (n);
CREATE INDEX other_f ON other (f);
CREATE INDEX other_ti ON other (i, t);
SELECT count(*) FROM other WHERE t = '500';
SELECT count(*) FROM other WHERE n = 500;
SELECT count(*) FROM other WHERE f = 500;
SELECT count(*) FROM other WHERE i = 500 AND t = '500';
SELECT indexrelid, state, reason, jit_searches, stock_searches > 0 AS stock_used
  FROM btree_jit_index_stats()
 WHERE indexrelid IN ('other_t'::regclass, 'other_n'::regclass,
                      'other_f'::regclass, 'other_ti'::regclass)
 ORDER BY indexrelid::text;

-- compiling ahead of time
CREATE INDEX other_i ON other (i DESC);
CREATE INDEX other_wide ON other (i, i, i, i, i, i, i, i, i);
SELECT state, signature, reason IS NULL AS no_reason, compile_ms >= 0 AS timed
  FROM btree_jit_compile('other_i');
SELECT state, signature, reason FROM btree_jit_compile('other_wide');

-- the generated code can be inspected
SELECT btree_jit_explain('other_i') ~ 'define .*btjit_search' AS has_ir;
SELECT btree_jit_explain('other_i', 'asm') ~ 'btjit_search' AS has_asm;
SELECT btree_jit_explain('other_i', 'pdf');
SELECT btree_jit_explain('other_wide');

-- bad input
SELECT * FROM btree_jit_compile('other');
SELECT * FROM btree_jit_compile(0);
CREATE INDEX other_hash ON other USING hash (i);
SELECT * FROM btree_jit_compile('other_hash');
SELECT * FROM btree_jit_compile(NULL);
SELECT btree_jit_explain(NULL);

-- after REINDEX and ALTER the index is examined again and still correct
DROP INDEX other_hash, other_ti, other_wide;
SELECT count(*) FROM other WHERE i = 10;
REINDEX INDEX other_i;
SELECT count(*) FROM other WHERE i = 10;
SELECT state, searched_jit, verified FROM index_state('other_i');
ALTER TABLE other ALTER COLUMN i TYPE int8;
SELECT count(*) FROM other WHERE i = 10;
SELECT count(*) FROM other WHERE i = 10::int4;
SELECT state, signature, searched_jit, verified FROM index_state('other_i');

DROP TABLE other;
