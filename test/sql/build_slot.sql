--
-- A build's key image comparisons find the index being built when its
-- slot in the backend's table of indexes (runtime/dispatch.c: 256 slots,
-- indexed by bits of the Relation pointer) has been taken since btbuild
-- filled it.  Here each heap row's index expression searches one of 1,200
-- other indexes during the build's heap scan, so that nearly surely one of
-- them takes the slot (a build's sort does that with a catalog index on a
-- cold catalog cache, by chance).  Without the build's own entry the load's
-- deduplication would then compare every tuple with the server's code.
--
SET btree_jit.verify = on;
SET btree_jit.build_compile_rows = 0;
SET max_parallel_maintenance_workers = 0;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;

CREATE SCHEMA bslot;
DO $$
BEGIN
    FOR i IN 1..1200 LOOP
        EXECUTE format('CREATE TABLE bslot.s%s (id int4 PRIMARY KEY)', i);
        EXECUTE format('INSERT INTO bslot.s%s VALUES (1)', i);
    END LOOP;
END $$;

-- Declared immutable so that an index may use it; it reads one of the
-- tables by its primary key (an index scan: enable_seqscan is off).
CREATE FUNCTION bslot.probe(k int4) RETURNS int4
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    r int4;
BEGIN
    EXECUTE format('SELECT id FROM bslot.s%s WHERE id = 1', k % 1200 + 1)
       INTO r;
    RETURN r;
END $$;

CREATE TABLE bslot.t (k int4);
INSERT INTO bslot.t SELECT g FROM generate_series(1, 2400) g;
INSERT INTO bslot.t SELECT g % 40 FROM generate_series(1, 4000) g;

SET enable_seqscan = off;
CREATE INDEX bslot_k ON bslot.t (k, bslot.probe(k));
RESET enable_seqscan;

-- The build had compiled code, and up to 18 its deduplication compared
-- key images with it (verified); 19 keeps the server's _bt_keep_natts_fast.
SELECT s.jit_builds > 0 AS built_jit,
       (s.jit_image_compares > 0) =
       (current_setting('server_version_num')::int < 190000)
       AS compared_as_expected,
       s.verified_image_compares = s.jit_image_compares AS verified
  FROM btree_jit_index_stats() s
 WHERE s.indexrelid = 'bslot.bslot_k'::regclass;
SELECT bt_index_parent_check('bslot.bslot_k', true);

DROP SCHEMA bslot CASCADE;
RESET client_min_messages;
RESET max_parallel_maintenance_workers;
RESET btree_jit.build_compile_rows;
RESET btree_jit.verify;
