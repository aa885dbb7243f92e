-- bench/workloads/pgbench_select.sql - pgbench's select-only transaction
-- (pgbench -S -M prepared) at scale 20.
--
-- Throughput: pgbench itself, -T short rounds, JIT off/on via PGOPTIONS.
-- Instructions: the same statement as a prepared statement in single-user
-- mode, one EXECUTE per transaction (the @repeat line, {AID} from a
-- deterministic pseudo-random sequence over 1..scale*100000): backend
-- user-space instructions per transaction, without the client and the
-- wire protocol.
--
-- @title pgbench -S -M prepared, scale 20, 1 and 2 clients
-- @kind pgbench
-- @uses data_pgbench
-- @index pgbench_accounts_pkey
-- @unit transaction
-- @pgbench -S -M prepared
-- @clients 1 2
-- @scale 20
-- @n_full 200000
-- @n_callgrind 5000
-- @n_warm 300
-- @target 1.04

-- @section session
SET jit = off;
SELECT pg_prewarm('pgbench_accounts'), pg_prewarm('pgbench_accounts_pkey');
PREPARE sel(int) AS SELECT abalance FROM pgbench_accounts WHERE aid = $1;

-- @section warmup
EXECUTE sel(1);
EXECUTE sel(2);
EXECUTE sel(3);
EXECUTE sel(4);
EXECUTE sel(5);
EXECUTE sel(6);
EXECUTE sel(7);

-- @query execute EXECUTE of pgbench -S's SELECT
-- @repeat
EXECUTE sel({AID});
