# test/stress/05-object-cache.sh - stress section 5, object cache:
# corrupted, truncated and swapped cached objects: the objects the earlier
# sections stored are damaged and the indexes of 03-memory's m_1 and
# 02-templates' tf compared on/off; a cache file holding another shape's
# object must not break the shape it belongs to.
#
# Sourced by test/suite-stress.sh (after test/stress/lib.sh); run alone
# with test/suite-stress.sh 5.
# cluster: first
# needs: 02 03

echo "-- 5. object cache: corrupted, truncated and swapped files"
t5=$(now)
mapfile -t objs < <(ls "$cache_dir"/*.o 2>/dev/null || true)
if [[ ${#objs[@]} -lt 3 ]]; then
	bad "object cache has files to corrupt (found ${#objs[@]})"
else
	i=0
	for f in "${objs[@]}"; do
		case $((i % 3)) in
		0) head -c "$(stat -c %s "$f")" /dev/urandom >"$f" ;;
		1) truncate -s $(($(stat -c %s "$f") / 2)) "$f" ;;
		2) cp "${objs[$(((i + 1) % ${#objs[@]}))]}" "$f" ;;
		esac
		i=$((i + 1))
	done
	chown "$BTJIT_OS_USER:" "$cache_dir"/*.o
	log_from=$(server_log_size)
	oc_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('m\_1', 2);
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('tf', 2);
SELECT '@@S ' || count(*) FILTER (WHERE state = 'jit') || ' ' || count(*) FILTER (WHERE state = 'stock') FROM btree_jit_index_stats();
SQL
	) || true
	nignored=$(tail -c +"$((log_from + 1))" "$BTJIT_CLUSTER_LOG" | grep -c 'ignoring cached object' || true)
	echo "   ${#objs[@]} cached objects damaged; the server log says 'ignoring cached object' $nignored times; stats (jit, stock): $(sed -n 's/^@@S //p' <<<"$oc_out")"
	oc_mis=$(sed -n 's/^@@R [0-9]* //p' <<<"$oc_out" | sum_lines)
	expect_eq "damaged object cache: every index compared on/off without mismatch ($(sed -n 's/^@@R \([0-9]*\) .*/\1/p' <<<"$oc_out" | sum_lines) indexes)" "$oc_mis" 0
	if grep -q 'ERROR:' <<<"$oc_out"; then
		bad "damaged object cache: errors" "$(grep -m5 'ERROR:' <<<"$oc_out")"
	else
		ok "damaged object cache: no errors (verify on)"
	fi
fi
# Deterministic case: the cached file of shape B holds shape A's object.
# Loading it must not leave A's symbol behind in the backend, or A's own
# (valid) object later fails with "Duplicate definition of symbol".
psql_as -q <<'SQL'
CREATE TABLE oc (a int8, b date, c time, d oid, e int2);
INSERT INTO oc SELECT g, '2000-01-01'::date + g, '00:00'::time + g * interval '1 s', g, (g % 100)::int2 FROM generate_series(1, 2000) g;
CREATE INDEX oc_w ON oc (e DESC NULLS LAST, c NULLS FIRST, b DESC);
CREATE INDEX oc_a ON oc (a DESC, b NULLS FIRST);
CREATE INDEX oc_b ON oc (c, d DESC NULLS LAST);
SQL
new_cache_file() { # index -> the cache file its compile created (warm-up first)
	local files
	files=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<SQL | sed -n 's/^@@F //p'
SELECT count(*) FROM btree_jit_compile('oc_w');
SELECT coalesce(string_agg(f, ','), '') AS before FROM pg_ls_dir('btree_jit_cache') f \gset
SELECT count(*) FROM btree_jit_compile('$1');
SELECT '@@F ' || f FROM pg_ls_dir('btree_jit_cache') f
 WHERE f LIKE '%.o' AND NOT f = ANY (string_to_array(:'before', ','));
SQL
	)
	# opening the index may compile catalog shapes first: the index's own
	# object is the last one stored
	[[ -n $files ]] && (cd "$cache_dir" && ls -t $files | head -n 1)
}
# an empty cache first: a shape some earlier section compiled (section 3
# draws its shapes at random) would be linked, not stored again
find "$cache_dir" -name '*.o' -delete
fa=$(new_cache_file oc_a) || true
fb=$(new_cache_file oc_b) || true
if [[ $fa != *.o || $fb != *.o || $fa == *$'\n'* || $fb == *$'\n'* ]]; then
	bad "swapped cache file case: could not tell the cache files of oc_a and oc_b apart" "oc_a: $fa / oc_b: $fb"
else
	cp "$cache_dir/$fa" "$cache_dir/$fb"
	sw_out=$(psqlv -v ON_ERROR_STOP=0 2>&1 <<'SQL'
SELECT '@@B ' || state FROM btree_jit_compile('oc_b');
SELECT '@@A ' || state FROM btree_jit_compile('oc_a');
SELECT '@@R ' || indexes || ' ' || mismatches FROM compare_indexes('oc', 2);
SQL
	) || true
	echo "   cache file of oc_b replaced by oc_a's ($fb <- $fa): oc_b $(sed -n 's/^@@B //p' <<<"$sw_out"), then oc_a $(sed -n 's/^@@A //p' <<<"$sw_out")"
	if [[ $(sed -n 's/^@@A //p' <<<"$sw_out") == jit && $(sed -n 's/^@@B //p' <<<"$sw_out") == jit ]] && ! grep -q WARNING <<<"$sw_out"; then
		ok "swapped cache file: both shapes compile, no WARNING"
	else
		bad "swapped cache file: a wrong object in the cache must not break the shape it belongs to" \
			"$(grep -v '^LOCATION\|^HINT' <<<"$sw_out" | head -n 8)"
	fi
	expect_eq "swapped cache file: oc indexes compared on/off without mismatch" "$(sed -n 's/^@@R [0-9]* //p' <<<"$sw_out")" 0
fi
# leave a clean cache for the next sections
rm -f "$cache_dir"/*.o
check "object cache faults: postmaster did not restart" server_alive
echo "   ($(elapsed "$t5")s)"
