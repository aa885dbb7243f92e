# test/stress/03-memory.sh - stress section 3, memory:
# one long-lived backend searches 2000 indexes with hundreds of distinct key
# shapes (four passes and index churn): VmRSS and memory contexts stay
# bounded, compiled shapes stay within btree_jit.max_signatures.
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 3.
# cluster: first

echo "-- 3. memory: one backend, 2000 indexes, many shapes"
t3=$(now)
nidx=$(q "SELECT make_shape_tables('m', 100, 20, $fseed)")
nshapes=$(q "SELECT count(DISTINCT regexp_replace(pg_get_indexdef(i.indexrelid), '^.* USING btree ', '') || (SELECT string_agg(format_type(a.atttypid, NULL), ',' ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = i.indexrelid)) FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname LIKE 'm\_%'")
echo "   created $nidx indexes on 100 tables ($(elapsed "$t3")s)"
# a cap below the number of shapes (and below the default 64: every
# compile costs ~0.4 s here, on two shared cores)
memsig=24
maxsig=$memsig
mem_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<SQL
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET btree_jit.max_signatures = $memsig;
SELECT '@@M0 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT '@@P1 ' || indexes || ' ' || mismatches FROM compare_indexes('m\_%', 1);
SELECT '@@M1 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT '@@P2 ' || probe_indexes('m\_%') || ' 0';
SELECT '@@M2 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT '@@P3 ' || probe_indexes('m\_%') || ' 0';
SELECT '@@M3 ' || rss_kb || ' ' || context_bytes FROM mem();
\! $psql_bin -X -q -At -c "SELECT churn('m', 500)" >/dev/null
SELECT '@@P4 ' || probe_indexes('m\_%') || ' 0';
SELECT '@@M4 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT '@@S ' || count(*) || ' ' || count(*) FILTER (WHERE state = 'jit') || ' '
       || count(DISTINCT signature) FILTER (WHERE state = 'jit') || ' '
       || count(*) FILTER (WHERE state = 'stock' AND reason LIKE '%max_signatures%') || ' '
       || count(*) FILTER (WHERE state = 'stock' AND coalesce(reason, '') NOT LIKE '%max_signatures%')
  FROM btree_jit_index_stats() s JOIN pg_class c ON c.oid = s.indexrelid WHERE c.relname LIKE 'm\_%';
SELECT '@@J ' || count(*) || ' ' || count(*) FILTER (WHERE c.oid IS NULL) FROM btree_jit_index_stats() s LEFT JOIN pg_class c ON c.oid = s.indexrelid;
SELECT '@@C ' || round(avg(compile_ms)) || ' ' || round(max(compile_ms)) FROM btree_jit_index_stats() WHERE code_source = 'compiled';
SQL
) || true
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
mbb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
memval() { sed -n "s/^@@$1 //p" <<<"$mem_out" | head -n1; }
if [[ -z $(memval M4) ]]; then
	bad "memory run finished" "$(tail -n 20 <<<"$mem_out")"
else
	read -r rss0 ctx0 <<<"$(memval M0)"
	read -r rss1 ctx1 <<<"$(memval M1)"
	read -r rss2 ctx2 <<<"$(memval M2)"
	read -r rss3 ctx3 <<<"$(memval M3)"
	read -r rss4 ctx4 <<<"$(memval M4)"
	read -r nstat njit njitsig nfull nother <<<"$(memval S)"
	read -r nall ndropped <<<"$(memval J)"
	echo "   VmRSS MB: start $(mb "$rss0"), pass1 $(mb "$rss1"), pass2 $(mb "$rss2"), pass3 $(mb "$rss3"), after churn of 500 + pass4 $(mb "$rss4")"
	echo "   memory contexts MB: $(mbb "$ctx0"), $(mbb "$ctx1"), $(mbb "$ctx2"), $(mbb "$ctx3"), $(mbb "$ctx4")"
	echo "   compile time of a shape in this backend: avg/max ms $(memval C)"
	echo "   ~$nshapes distinct index definitions; stats rows for m_* indexes: $nstat; jit $njit with $njitsig distinct signatures (max_signatures $maxsig); stock because the cache is full: $nfull; stock otherwise: $nother; stats rows in all $nall, of dropped indexes $ndropped"
	for p in P1 P2 P3 P4; do
		read -r pi pm <<<"$(memval $p)"
		expect_eq "memory pass ${p#P}: $pi indexes searched$([[ $p == P1 ]] && echo ", compared on/off") without mismatch (verify on)" "$pm" 0
	done
	check "memory: compiled shapes within max_signatures (0 < $njitsig <= $maxsig)" test "$njitsig" -le "$maxsig" -a "$njitsig" -gt 0
	check "memory: indexes beyond the cap fell back to stock with the reason ($nfull)" test "$nfull" -gt 0 -o "$nshapes" -le "$maxsig"
	check "memory: compiled indexes used ($njit)" test "$njit" -gt 0
	check "memory: VmRSS growth pass2 -> pass3 below 8 MB ($(mb $((rss3 - rss2))) MB)" test $((rss3 - rss2)) -lt 8192
	check "memory: VmRSS growth pass3 -> churn + pass4 below 24 MB ($(mb $((rss4 - rss3))) MB)" test $((rss4 - rss3)) -lt 24576
	check "memory: VmRSS growth over all below 256 MB ($(mb $((rss4 - rss0))) MB)" test $((rss4 - rss0)) -lt 262144
	check "memory: memory contexts below 64 MB after all ($(mbb "$ctx4") MB)" test "$ctx4" -lt 67108864
	check "memory: context growth pass2 -> pass3 below 2 MB ($(mbb $((ctx3 - ctx2))) MB)" test $((ctx3 - ctx2)) -lt 2097152
fi
if grep -q 'ERROR:' <<<"$mem_out"; then
	bad "memory run: errors" "$(grep -m5 'ERROR:' <<<"$mem_out")"
else
	ok "memory run: no errors (verify on)"
fi
# baseline: the same probes in a backend with the module switched off
base=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.enabled = off;
SELECT '@@M0 ' || rss_kb || ' ' || context_bytes FROM mem();
SELECT probe_indexes('m\_%');
SELECT '@@M1 ' || rss_kb || ' ' || context_bytes FROM mem();
SQL
) || true
read -r brss0 bctx0 <<<"$(sed -n 's/^@@M0 //p' <<<"$base")"
read -r brss1 bctx1 <<<"$(sed -n 's/^@@M1 //p' <<<"$base")"
if [[ -n ${brss1:-} && -n ${rss4:-} ]]; then
	echo "   baseline backend with btree_jit.enabled = off, same probes: VmRSS $(mb "$brss0") -> $(mb "$brss1") MB, contexts $(mbb "$bctx0") -> $(mbb "$bctx1") MB; the module's backend grew $(mb $((rss4 - rss0))) MB vs $(mb $((brss1 - brss0))) MB"
fi
# a second backend with a small cache: shapes beyond it run stock, correctly
small=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SET btree_jit.max_signatures = 4;
SELECT '@@P ' || indexes || ' ' || mismatches FROM compare_indexes('m\_1%', 1);
SELECT '@@S ' || count(DISTINCT signature) FILTER (WHERE state = 'jit') FROM btree_jit_index_stats();
SQL
) || true
read -r spi spm <<<"$(sed -n 's/^@@P //p' <<<"$small")"
expect_eq "max_signatures = 4: $spi indexes compared on/off, no mismatch" "${spm:-missing}" 0
check "max_signatures = 4: 1 to 4 compiled signatures ($(sed -n 's/^@@S //p' <<<"$small"))" \
	test "$(sed -n 's/^@@S //p' <<<"$small")" -le 4 -a "$(sed -n 's/^@@S //p' <<<"$small")" -gt 0
echo "   ($(elapsed "$t3")s)"
