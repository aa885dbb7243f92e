# test/stress/04-cancel.sh - stress section 4, cancel and terminate:
# statement_timeout and pg_cancel_backend during compile-heavy sessions,
# pg_terminate_backend mid-work: the session (or the others) carry on,
# correct results, the postmaster never restarts.  The busy sessions also
# compare the indexes of table tf (02-templates).
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 4.
# cluster: first
# needs: 02

echo "-- 4. cancel and terminate during compile-heavy sessions"
t4=$(now)
psql_as -q -c "SELECT make_shape_tables('k', 4, 3, $fseed / 2)" >/dev/null
# statement_timeout at several points of a statement that compiles shapes
# (object cache off: every new shape is a real compile)
to_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.object_cache = off;
SET statement_timeout = '60ms';
SELECT compare_indexes('k\_%', 1);
SET statement_timeout = '250ms';
SELECT compare_indexes('k\_%', 1);
SET statement_timeout = '900ms';
SELECT compare_indexes('k\_%', 1);
RESET statement_timeout;
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('k\_%', 2);
SELECT '@@S ' || count(*) FILTER (WHERE state = 'jit') || ' ' || count(*) FROM btree_jit_index_stats() s JOIN pg_class c ON c.oid = s.indexrelid WHERE c.relname LIKE 'k\_%';
SQL
) || true
ntimeouts=$(grep -c 'ERROR:  57014' <<<"$to_out" || true)
read -r ri rm <<<"$(sed -n 's/^@@R //p' <<<"$to_out")"
echo "   statement_timeout fired $ntimeouts times; then $ri indexes compared; stats (jit, all): $(sed -n 's/^@@S //p' <<<"$to_out")"
expect_eq "statement_timeout mid-compile: the session then compares correctly" "${rm:-missing}" 0
if grep -v 'ERROR:  57014' <<<"$to_out" | grep -q 'ERROR:\|WARNING:'; then
	bad "statement_timeout mid-compile: only timeouts expected" "$(grep -v 'ERROR:  57014' <<<"$to_out" | grep -m5 'ERROR:\|WARNING:')"
else
	ok "statement_timeout mid-compile: only 57014 errors"
fi

# pg_cancel_backend and pg_terminate_backend of busy sessions at random
# moments, while another session keeps working
busy_script() { # $1 = tag
	cat <<SQL
SET application_name = '$1';
SET btree_jit.object_cache = off;
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('k\_%', 2);
SET btree_jit.object_cache = on;
INSERT INTO s_a (k, t, g, c, x, v) SELECT g % 7, now(), 1, 'q', 'busy', 500000000::int8 + g + $RANDOM * 100000::int8 FROM generate_series(1, 3000) g ON CONFLICT DO NOTHING;
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('tf', 2);
SELECT '@@DONE';
SQL
}
ncancel=0
nterm=0
busy_bad=0
cancel_rounds=()
for round in 1 2 3 4; do
	busy_script "busy$round" | as_postgres "$psql_bin" -X -q -At -v ON_ERROR_STOP=0 -v VERBOSITY=verbose >"$work/busy$round.out" 2>&1 &
	bpid=$!
	sleep "0.$((RANDOM % 9 + 1))"
	if ((round % 2)); then
		fn=pg_cancel_backend
	else
		fn=pg_terminate_backend
	fi
	r=$(q "SELECT count(*) FILTER (WHERE $fn(pid)) FROM pg_stat_activity WHERE application_name = 'busy$round'")
	if [[ $fn == pg_cancel_backend ]]; then ncancel=$((ncancel + r)); else nterm=$((nterm + r)); fi
	[[ $fn == pg_cancel_backend && $r == 1 ]] && cancel_rounds+=("$round")
	# another session meanwhile
	if ! q "SELECT count(*) FROM s_a WHERE k = 3" >/dev/null; then
		busy_bad=$((busy_bad + 1))
	fi
	wait "$bpid" || true
	if grep -q '@@R .* [1-9][0-9]*$' "$work/busy$round.out"; then
		busy_bad=$((busy_bad + 1))
		echo "   busy$round: mismatch: $(grep '@@R' "$work/busy$round.out")"
	fi
	if grep -v 'ERROR:  57014\|FATAL:  57P01\|terminating connection due to administrator\|server closed the connection\|connection to server was lost\|This probably means\|before or while processing' "$work/busy$round.out" | grep -q 'ERROR:\|FATAL:\|PANIC'; then
		busy_bad=$((busy_bad + 1))
		echo "   busy$round: unexpected: $(grep -m3 'ERROR:\|FATAL:' "$work/busy$round.out")"
	fi
done
echo "   cancelled $ncancel, terminated $nterm busy sessions"
ncont=0
for r in "${cancel_rounds[@]}"; do
	grep -q '^@@DONE' "$work/busy$r.out" && ncont=$((ncont + 1))
done
expect_eq "cancelled sessions carried on to the end of their script" "$ncont" "${#cancel_rounds[@]}"
expect_eq "cancel/terminate: no unexpected errors or mismatches, other sessions unaffected" "$busy_bad" 0
check "cancel/terminate: postmaster did not restart" server_alive
echo "   ($(elapsed "$t4")s)"
