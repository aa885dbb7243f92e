-- bench/workloads/compile_latency.sql - first-search latency of a new key
-- shape in a fresh backend (cold), and in a fresh backend after another
-- backend compiled the same shape; module-reported compile_ms; and
-- btree_jit_compile() on a never-compiled shape.  Each round uses its own
-- two never-searched indexes from data_latency (latidx<2r>, latidx<2r+1>).
-- {T} is the table number.
--
-- @title first-search latency of a new key shape: cold, and after another backend compiled it
-- @kind latency
-- @uses data_latency
-- @rounds 5

-- @query first first query on a fresh index
SELECT count(*) FROM lat{T} WHERE a = 12345 AND b = 15 AND c = 4115;
