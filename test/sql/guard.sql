--
-- The compiler library's LLVM fatal-error guard (llvm_error.cpp) is left on
-- every path.  An ERROR raised inside it (a failed palloc, say) must not
-- leave LLVM's handlers installed for the rest of the session: the library
-- refuses to compile if it finds the guard still raised, so a compile that
-- succeeds after the ERROR shows that the guard was left.
--
-- btree_jit.compile_fault is a superuser-only test hook that raises the
-- ERROR there.  (Its other value, llvm_fatal, ends the session with FATAL;
-- test/suite-stress.sh checks that, as a FATAL ends the psql session.)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS btree_jit;
RESET client_min_messages;

-- compile only when asked (no catalog index compiles in between), and with
-- the library rather than from the object cache
SET btree_jit.compile_threshold = 1000000000;
SET btree_jit.object_cache = off;

-- shapes no other test uses
CREATE TABLE guard_t (a int2, b oid, c bool, d time);
INSERT INTO guard_t
  SELECT g % 101, g * 7919, g % 3 = 0, time '00:00' + g * interval '7 s'
    FROM generate_series(1, 10000) g;
CREATE INDEX guard_1 ON guard_t (b DESC, a, c);
CREATE INDEX guard_2 ON guard_t (d DESC NULLS FIRST, b);
CREATE INDEX guard_3 ON guard_t (c, d, a DESC);
ANALYZE guard_t;

-- the hook is for superusers only, and hidden
CREATE ROLE guard_plain;
SET ROLE guard_plain;
SET btree_jit.compile_fault = error;
RESET ROLE;
DROP ROLE guard_plain;
SELECT count(*) AS listed FROM pg_settings WHERE name = 'btree_jit.compile_fault';

-- an ERROR inside the guard propagates ...
SET btree_jit.compile_fault = error;
SELECT state FROM btree_jit_compile('guard_1');
-- ... and is not remembered as a failed shape: it fails again while the
-- fault is set
SELECT state FROM btree_jit_compile('guard_1');
SELECT count(*) AS examined FROM btree_jit_index_stats()
 WHERE indexrelid = 'guard_1'::regclass AND state <> 'pending';
RESET btree_jit.compile_fault;

-- the same session compiles again: the guard was left each time
SELECT state, reason FROM btree_jit_compile('guard_1');
SELECT state, reason FROM btree_jit_compile('guard_2');
SELECT btree_jit_explain('guard_3') ~ 'define .*btjit_search' AS has_ir;
SELECT state, reason FROM btree_jit_compile('guard_3');

-- and its code searches correctly (verify compares every search with the
-- server's own)
SET btree_jit.verify = on;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM guard_t WHERE b = 7919 * 500 AND a = 500 % 101;
SELECT count(*) FROM guard_t WHERE d >= time '10:00' AND d < time '10:05';
SELECT count(*) FROM guard_t WHERE c AND d = time '00:00' + 3 * interval '7 s';
SELECT jit_searches > 0 AS used_compiled_code
  FROM btree_jit_index_stats() WHERE indexrelid = 'guard_1'::regclass;
RESET btree_jit.verify;
RESET enable_seqscan;
RESET enable_bitmapscan;

DROP TABLE guard_t;
RESET btree_jit.object_cache;
RESET btree_jit.compile_threshold;
