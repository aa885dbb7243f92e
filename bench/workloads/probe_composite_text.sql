-- bench/workloads/probe_composite_text.sql - full-key probes into a
-- 1,000,000-row three-column primary key (region text, customer text, n
-- int4) whose text columns have low cardinality and long common prefixes,
-- in random probe order: the key shape dynamic prefix truncation is for
-- (the page search skips the columns known equal at both bounds).  {N} is
-- the number of probes: the first N rows of pct.
--
-- @title (text C, text C, int4) primary key, 1M rows: 200k full-key probes
-- @kind sql
-- @plan nested_loop
-- @uses data_composite_text
-- @index tct_pkey
-- @unit probe
-- @n_full 200000
-- @n_timing 200000
-- @n_callgrind 10000

-- @section session
SELECT pg_prewarm('tct'), pg_prewarm('tct_pkey'), pg_prewarm('pct');

-- @section warmup
SELECT v FROM tct WHERE region = 'eu-central-datacenter-003' AND customer = 'customer-00042' AND n = 42 LIMIT 1;

-- @query full full-key probes (region, customer, n)
SELECT count(*), sum(x.v)
  FROM (SELECT region, customer, n FROM pct LIMIT {N}) p
  CROSS JOIN LATERAL (SELECT v FROM tct WHERE tct.region = p.region AND tct.customer = p.customer AND tct.n = p.n LIMIT 1) x;
