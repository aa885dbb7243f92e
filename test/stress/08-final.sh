# test/stress/08-final.sh - stress section 8, final checks:
# the first cluster's closing checks, run after whichever of its sections
# ran: amcheck (bt_index_parent_check heapallindexed + rootdescend) on every
# btree index, on/off comparison over every index of the stress tables,
# pgbench's and tf's, server log free of crashes / PANIC / verify
# mismatches, postmaster start time unchanged.
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 8.
# cluster: first, final

echo "-- 8. final checks"
t8=$(now)
# leftovers of failed CREATE/REINDEX CONCURRENTLY are invalid: drop them
q "SELECT count(*) FROM (SELECT 1 FROM pg_index WHERE NOT indisvalid) x" >/dev/null
psqlv -v ON_ERROR_STOP=0 -c "DO \$\$ DECLARE r record; BEGIN FOR r IN SELECT indexrelid::regclass AS ix FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE NOT i.indisvalid AND c.relname IN ('s_a', 's_b', 'pgbench_accounts') LOOP EXECUTE format('DROP INDEX %s', r.ix); END LOOP; END \$\$" >/dev/null 2>&1 || true
am_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.enabled = on;
SET btree_jit.verify = on;
SELECT '@@A ' || count(*) FROM (
  SELECT bt_index_parent_check(c.oid, true, true)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
   WHERE c.relam = 403 AND c.relkind = 'i' AND i.indisvalid AND i.indisready AND c.relpersistence <> 't'
     AND NOT (c.relname LIKE 'm\_%' AND random() > 0.1)) x;
SQL
) || true
nam=$(sed -n 's/^@@A //p' <<<"$am_out")
if [[ -n $nam ]] && ! grep -q 'ERROR:' <<<"$am_out"; then
	ok "amcheck bt_index_parent_check(heapallindexed, rootdescend) clean on $nam btree indexes (catalogs, stress tables, pgbench, a tenth of the 2000 shape indexes)"
else
	bad "amcheck" "$am_out"
fi
echo "   (amcheck $(elapsed "$t8")s)"
fin_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('s\__', 4);
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('pgbench%', 4);
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('tf', 4);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT '@@R 0 ' || stress_probe(300);
COMMIT;
SQL
) || true
fin_mis=$(sed -n 's/^@@R [0-9]* //p' <<<"$fin_out" | sum_lines)
fin_n=$(sed -n 's/^@@R \([0-9]*\) .*/\1/p' <<<"$fin_out" | sum_lines)
expect_eq "final on/off comparison over $fin_n indexes (4 probes each) + 300 random probes" "$fin_mis" 0
if grep -q 'ERROR:' <<<"$fin_out"; then bad "final comparisons: errors" "$(grep -m5 'ERROR:' <<<"$fin_out")"; fi
IFS='|' read -r s_jit s_stock s_ver s_comp s_cfail < <(q "SELECT jit_searches, stock_searches, verified_searches, compiles, compile_failures FROM btree_jit_status()")
echo "   cluster-wide btree_jit_status(): jit_searches=$s_jit stock_searches=$s_stock verified_searches=$s_ver compiles=$s_comp compile_failures=$s_cfail"
check "verified searches happened cluster-wide" test "${s_ver:-0}" -gt 0
expect_eq "postmaster start time unchanged (no crash restart)" "$(q "SELECT pg_postmaster_start_time()")" "$pm_start"
problems=$(server_log_problems)
if [[ -z $problems ]]; then
	ok "server log: no crash, PANIC, abort or verify mismatch"
else
	bad "server log: crash, PANIC, abort or verify mismatch" "$problems"
fi
echo "   ($(elapsed "$t8")s)"
