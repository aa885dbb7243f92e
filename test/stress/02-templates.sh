# test/stress/02-templates.sh - stress section 2, template faults:
# template_path missing, garbage, empty, truncated, a directory, someone
# else's bitcode: WARNING, index state 'stock' (with the reason), results
# still correct; RESET makes new shapes compile again; an ERROR inside the
# LLVM error guard (btree_jit.compile_fault) leaves the guard, an LLVM fatal
# error ends only the session, with FATAL.
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 2.
# cluster: first

echo "-- 2. template faults"
t2=$(now)
tpl=$(q "SELECT setting FROM pg_settings WHERE name = 'btree_jit.template_path'")
[[ -n $tpl ]] || tpl=$(pg_pkglibdir)/btree_jit/search_template.bc
[[ -f $tpl ]] || tpl=$(ls "$(pg_pkglibdir)"/btree_jit/*.bc | head -n1)
head -c 4096 /dev/urandom >"$work/garbage.bc"
: >"$work/empty.bc"
head -c 1000 "$tpl" >"$work/truncated.bc"
other_bc=$(pg_pkglibdir)/bitcode/postgres/access/nbtree/nbtsearch.bc
[[ -f $other_bc ]] || other_bc=$work/garbage.bc
chmod 644 "$work"/*.bc
psql_as -q <<'SQL'
CREATE TABLE tf (a int2, b oid, c "char", d timestamptz, e bool, f time);
INSERT INTO tf SELECT g % 97, g * 104729, (g % 200 - 100)::int4::"char", '2001-01-01'::timestamptz + g * interval '1 h', g % 3 = 0, '00:00'::time + g * interval '1 s'
  FROM generate_series(1, 5000) g;
CREATE INDEX tf_1 ON tf (a DESC, b, c NULLS FIRST);
CREATE INDEX tf_2 ON tf (c DESC NULLS LAST, e, a);
CREATE INDEX tf_3 ON tf (f DESC, d NULLS FIRST);
CREATE INDEX tf_4 ON tf (e DESC, f, b DESC);
CREATE INDEX tf_5 ON tf (d DESC, c, e DESC NULLS LAST);
CREATE INDEX tf_6 ON tf (b NULLS FIRST, f DESC NULLS LAST);
CREATE INDEX tf_7 ON tf (a, e NULLS FIRST, d DESC);
VACUUM ANALYZE tf;
SQL
n=0
for case in "missing:/nonexistent.bc" "garbage:$work/garbage.bc" "empty:$work/empty.bc" \
	"truncated:$work/truncated.bc" "directory:$work" "other-bitcode:$other_bc"; do
	n=$((n + 1))
	# an equality probe: it always descends the index (a range that starts
	# at the index's end would be served by _bt_endpoint, no page search)
	name=${case%%:*}
	path=${case#*:}
	idx=tf_$n
	col=$(q "SELECT pg_get_indexdef('$idx'::regclass, 1, true)")
	# results on stdout, messages apart: interleaving the two streams
	# can glue a WARNING to a result line
	out=$(psqlv -v ON_ERROR_STOP=0 2>"$work/template-$name.err" <<SQL
SET btree_jit.object_cache = off;
SET btree_jit.template_path = '$path';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT 'on:' || count(*) || ':' || coalesce(sum(hashtext(tf::text)), 0) FROM tf WHERE $col = (SELECT $col FROM tf WHERE $col IS NOT NULL OFFSET 2000 LIMIT 1);
SET btree_jit.enabled = off;
SELECT 'off:' || count(*) || ':' || coalesce(sum(hashtext(tf::text)), 0) FROM tf WHERE $col = (SELECT $col FROM tf WHERE $col IS NOT NULL OFFSET 2000 LIMIT 1);
SET btree_jit.enabled = on;
-- the index's state asked for directly: which indexes the planner happened
-- to search must not decide the check
SELECT 'state:' || state || ':' || coalesce(reason, '') FROM btree_jit_compile('$idx');
RESET btree_jit.template_path;
CREATE TEMP TABLE tf_after_$n (a int8, b date);
INSERT INTO tf_after_$n SELECT g, '2000-01-01'::date + g FROM generate_series(1, 100) g;
CREATE INDEX tf_after_${n}_i ON tf_after_$n (b DESC, a DESC NULLS LAST);
SELECT count(*) FROM tf_after_$n WHERE b = '2000-02-01';
SELECT 'after:' || state FROM btree_jit_index_stats() WHERE indexrelid = 'tf_after_${n}_i'::regclass;
SQL
	) || true
	err=$(cat "$work/template-$name.err")
	on=$(grep '^on:' <<<"$out" || true)
	off=$(grep '^off:' <<<"$out" || true)
	state=$(grep '^state:' <<<"$out" || true)
	if [[ -z $state ]] || grep -q 'server closed the connection' <<<"$err"; then
		bad "template $name: the session survives (no connection loss)" "$(printf '%s\n%s' "$out" "$err" | grep -v '^LOCATION\|^HINT\|^LINE\|^ *^' | tail -n 12)"
		continue
	fi
	ok "template $name: the session survives"
	if grep -q 'WARNING: ' <<<"$err" && [[ $state == state:stock:* ]]; then
		ok "template $name: WARNING, index stock ($(cut -c1-90 <<<"${state#state:stock:}"))"
	else
		bad "template $name: want a WARNING and state stock" "$out"
	fi
	if [[ $name == missing ]]; then
		check "template missing: reason mentions the template" grep -qi template <<<"$state"
	fi
	if [[ -n $on && ${on#on:} == "${off#off:}" ]]; then
		ok "template $name: results equal with the module on and off (${on#on:})"
	else
		bad "template $name: results differ or missing" "$out"
	fi
	expect_eq "template $name: after RESET a new shape compiles" "$(grep '^after:' <<<"$out" || true)" "after:jit"
done
# faults inside the compiler library's LLVM error guard (the test hook
# btree_jit.compile_fault, superuser only): an ERROR there leaves the guard,
# so the same session compiles again; an LLVM fatal error there ends the
# session with FATAL, not the server with abort()
cf_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.object_cache = off;
SET btree_jit.compile_fault = error;
SELECT '@@E ' || state FROM btree_jit_compile('tf_1');
RESET btree_jit.compile_fault;
SELECT '@@A ' || state || ':' || coalesce(reason, '') FROM btree_jit_compile('tf_1');
SQL
) || true
if grep -q 'ERROR:  XX000: btree_jit: injected fault' <<<"$cf_out" && ! grep -q '^@@E' <<<"$cf_out"; then
	ok "compile_fault = error: the compile raises the injected ERROR"
else
	bad "compile_fault = error: want the injected ERROR" "$cf_out"
fi
expect_eq "compile_fault = error: the same session then compiles (guard left)" \
	"$(sed -n 's/^@@A //p' <<<"$cf_out")" "jit:"
log_from=$(stat -c %s "$BTJIT_CLUSTER_LOG")
cf_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.object_cache = off;
SET btree_jit.compile_fault = llvm_fatal;
SELECT '@@F ' || state FROM btree_jit_compile('tf_2');
SELECT '@@G still connected';
SQL
) || true
if grep -q 'FATAL:  XX000: btree_jit: fatal error in LLVM' <<<"$cf_out" && ! grep -q '^@@[FG]' <<<"$cf_out"; then
	ok "compile_fault = llvm_fatal: the session ends with FATAL"
else
	bad "compile_fault = llvm_fatal: want FATAL and the session gone" "$cf_out"
fi
check "compile_fault = llvm_fatal: postmaster did not restart" server_alive
expect_eq "compile_fault = llvm_fatal: no crash, abort or LLVM ERROR in the server log" \
	"$(server_log_problems "$log_from")" ""
expect_value "compile_fault = llvm_fatal: the next session compiles the shape" \
	"SET btree_jit.object_cache = off; SELECT state FROM btree_jit_compile('tf_2')" jit
check "server up after template faults" server_alive
echo "   ($(elapsed "$t2")s)"
