-- bench/workloads/data_pgbench.sql - pgbench's tables at scale 20
-- (2,000,000 pgbench_accounts rows).  The driver runs `pgbench -i` with the
-- arguments below first, then the SQL.
-- @pgbench_init -s 20 -q
VACUUM (FREEZE, ANALYZE) pgbench_accounts;
