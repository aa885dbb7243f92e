#!/bin/bash
# test/suite-zoo.sh - the build zoo: the module on PostgreSQL servers built
# the way other distributions and toolchains build them (Ubuntu's and
# EL9's LTO builds, EL8's, gcc -O3, clang), not only on Debian's own.
#
#   test/run zoo                        every build (BTJIT_ZOO_BUILDS=all)
#   test/run                            the CI build only (below)
#   BTJIT_ZOO_BUILDS="15:el9-lto 18:clang" test/suite-zoo.sh
#
# A build is MAJOR:FLAVOR (test/zoo/flavors.sh says what each flavor is).
# For each one:
#   1. the server is built from the Debian source of that major (the host's
#      server's source for 15; the chroot's for 17 and 18, through
#      test/lib/chroot.sh), with the flavor's compiler and flags, stripped
#      as a package is, and installed under its own prefix
#      (test/zoo/build-server.sh), on the host for 15 and in the major's
#      chroot otherwise.  Builds are cached in
#      ${BTJIT_CACHE_DIR:-/var/cache/btree_jit}/zoo/postgresql-MAJOR-FLAVOR,
#      keyed by the source version, the flavor's flags, the compiler and
#      build-server.sh itself; a cold build took 2.6-4.8 minutes on this
#      2-core machine;
#   2. the module is built against it and checked (test/zoo/check-build.sh):
#      start-up status, the probe joins off/on/verify with equal results,
#      the project's pg_regress suite, and with BTJIT_ZOO_BENCH=1 the
#      bench's probe_int4 and probe_asof instruction counts;
#   3. every entry point the major has must be redirected: none refused
#      (the start-up line names each; Debian's build of each major has
#      them all, which the version matrix checks).  With
#      BTJIT_ZOO_BENCH=1 the same major's Debian server is measured too,
#      and the zoo build must redirect what it does and have instruction
#      ratios within 3% of its (both with btree_jit.recent_buffers off:
#      test/zoo/check-build.sh says why).  A flavor with a ZOO_REFUSAL (clang, which
#      inlines _bt_binsrch into both callers) may instead leave the module
#      inactive with exactly that start-up reason: then the probe must
#      still return the same rows, and the pg_regress suite is skipped.
# The last lines are a table, one row per build, and "N passed, M failed".
#
# BTJIT_ZOO_BUILDS: "ci" (the default: 18:el9-lto), "all", "none" (exit 77,
# a SKIP to test/run), or a list.  CI runs one build because the zoo does
# not fit its 90 minutes: 18 under EL9's flags is the build furthest from
# Debian's (LTO, the newest gcc, no frame pointers, x86-64-v2), on the
# newest major the module fully supports.
# A whole test/run skips the CI build when it starts more than
# BTJIT_ZOO_START_BY seconds (default 4500) after the run began.
# BTJIT_ZOO_BENCH=1: also the instruction counts (about 4 minutes a build;
# the default with "all", 0 otherwise).
# BTJIT_ZOO_REBUILD=1: build the servers again even when cached.
#
# 19: its whole source is not reachable here (Debian does not serve
# postgresql-19's source; ../shared/pg19 has the regression suite and the
# nbtree sources only), so there is no zoo build of it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=lib/chroot.sh
source "$here/lib/chroot.sh"
# shellcheck source=lib/source.sh
source "$here/lib/source.sh"
# shellcheck source=zoo/flavors.sh
source "$here/zoo/flavors.sh"

case ${BTJIT_ZOO_BUILDS:-ci} in
none)
	echo "BTJIT_ZOO_BUILDS=none: the zoo is skipped"
	exit 77
	;;
ci)
	builds=(18:el9-lto)
	# CI's 90 minutes: the zoo runs last in a whole test/run, and its one
	# cold build takes 7 minutes here, perhaps twice that on a slower
	# machine.  Past BTJIT_ZOO_START_BY seconds into the run it is
	# skipped, loudly, rather than have the run overrun and land nothing.
	if [[ -n ${BTJIT_RUN_STARTED:-} ]]; then
		elapsed=$(($(date +%s) - BTJIT_RUN_STARTED))
		if [[ $elapsed -gt ${BTJIT_ZOO_START_BY:-4500} ]]; then
			echo "zoo: SKIPPED: test/run began $elapsed s ago, past BTJIT_ZOO_START_BY=${BTJIT_ZOO_START_BY:-4500} s; its build would take CI past 90 minutes (run it alone: test/run zoo)"
			exit 77
		fi
	fi
	;;
all)
	builds=(15:ubuntu-lto 15:el9-lto 17:ubuntu-lto 17:el9-lto
		18:ubuntu-lto 18:el9-lto 18:el8 18:gcc-o3 18:clang)
	# the whole zoo is also the instruction counts
	export BTJIT_ZOO_BENCH=${BTJIT_ZOO_BENCH:-1}
	;;
*) read -r -a builds <<<"$BTJIT_ZOO_BUILDS" ;;
esac

host_major=$("$PG_CONFIG" --version | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')
for b in "${builds[@]}"; do
	m=${b%%:*} f=${b#*:}
	[[ $b == *:* && ( $m == "$host_major" || $m == 17 || $m == 18 ) ]] ||
		btjit_die "BTJIT_ZOO_BUILDS: '$b' is not MAJOR:FLAVOR with MAJOR $host_major, 17 or 18"
	zoo_flavor "$f" 1 || btjit_die "BTJIT_ZOO_BUILDS: unknown flavor '$f' (known: ${ZOO_FLAVORS[*]})"
done

# The chroots' servers are the matrix's: hold its lock, as bench/run --pg
# does (the reference step installs the module into them).
if [[ -z ${_BTJIT_MATRIX_LOCKED:-} ]]; then
	mkdir -p "$BTJIT_CHROOT_CACHE"
	export _BTJIT_MATRIX_LOCKED=1
	flock -n "$BTJIT_CHROOT_CACHE/.matrix.lock" true ||
		btjit_log "waiting for another matrix run ($BTJIT_CHROOT_CACHE/.matrix.lock)"
	exec flock -o "$BTJIT_CHROOT_CACHE/.matrix.lock" bash "$0" "$@"
fi

zoo=${BTJIT_CACHE_DIR:-/var/cache/btree_jit}/zoo
out=$root/test/results/zoo
rm -rf "$out"
mkdir -p "$zoo" "$out"
chmod 755 "$zoo"

# What a server build needs beyond the module's own build tools.
ZOO_BUILD_PKGS=(bison flex perl zlib1g-dev pkg-config tzdata libicu-dev)

host_build_deps() {
	local missing=() p
	for p in "${ZOO_BUILD_PKGS[@]}"; do
		dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || missing+=("$p")
	done
	[[ ${#missing[@]} -eq 0 ]] && return 0
	btjit_log "zoo: apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=600 \
		--no-install-recommends install "${missing[@]}" >/dev/null ||
		btjit_die "zoo: apt-get install ${missing[*]} failed"
}

# stage_host_tree -> a copy of the tree for a build on the host (as
# chroot_stage_tree makes for a chroot): the module built against a zoo
# server must not leave its objects in this tree
stage_host_tree() {
	local dest
	dest=$(mktemp -d "$zoo/.tree.XXXXXX")
	cluster_on_exit "rm -rf '$dest'"
	chmod 755 "$dest"
	stage_tree_copy "$root" "$dest" || btjit_die "zoo: copying the tree failed"
	echo "$dest"
}

# in_env MAJOR CMD... - run CMD where MAJOR's servers live: on the host for
# the host's major, in the chroot otherwise (with the zoo at /zoo)
in_env() {
	local m=$1
	shift
	if [[ $m == "$host_major" ]]; then
		"$@"
	else
		chroot_run "$m" "$@"
	fi
}

declare -A env_ready=() llvm_of=() source_of=() sourcever_of=() zoo_root_of=()

# prepare_env MAJOR - the chroot (with the build packages), the source, and
# the paths the builds of MAJOR use
prepare_env() {
	local m=$1
	[[ -z ${env_ready[$m]:-} ]] || return 0
	if [[ $m == "$host_major" ]]; then
		host_build_deps
		local v
		v=$(dpkg-query -W -f='${Version}' "postgresql-$m")
		host_server_source "postgresql-$m" "$v"
		source_of[$m]=$BTJIT_HOST_SOURCE_DIR
		sourcever_of[$m]=$BTJIT_HOST_SOURCE_VERSION
		llvm_of[$m]=$("$PG_CONFIG" --configure | grep -oE "LLVM_CONFIG=[^' ]*llvm-config-[0-9]+" | grep -oE '[0-9]+$' || true)
		[[ -n ${llvm_of[$m]} ]] || btjit_die "zoo: cannot tell which LLVM the host's server uses ($PG_CONFIG --configure)"
		zoo_root_of[$m]=$zoo
	else
		BTJIT_CHROOT_EXTRA_PKGS="${ZOO_BUILD_PKGS[*]}" chroot_ensure "$m"
		chroot_server_source "$m"
		source_of[$m]=/build/pgsrc
		sourcever_of[$m]=$BTJIT_CHROOT_SOURCE_VERSION
		chroot_bind "$m" "$BTJIT_CHROOT_SOURCE_DIR" /build/pgsrc
		chroot_bind "$m" "$zoo" /zoo
		llvm_of[$m]=$(chroot_llvm_version "$m")
		zoo_root_of[$m]=/zoo
	fi
	env_ready[$m]=1
}

# ensure_server MAJOR FLAVOR - the build, from the cache or built now
ensure_server() {
	local m=$1 f=$2 name key dir lockfd t0 cc
	name=postgresql-$m-$f
	dir=$zoo/$name
	zoo_flavor "$f" "${llvm_of[$m]}"
	cc=$(in_env "$m" "$ZOO_CC" --version | head -n 1)
	key=$( {
		echo "source=${sourcever_of[$m]}"
		echo "cc=$cc $ZOO_CFLAGS / $ZOO_LDFLAGS"
		sha256sum <"$here/zoo/build-server.sh"
	} | sha256sum | cut -c1-16)
	mkdir -p "$dir"
	exec {lockfd}>"$dir.lock"
	flock "$lockfd"
	if [[ ${BTJIT_ZOO_REBUILD:-0} != 1 && -f $dir/prefix/zoo-build.info && $(cat "$dir/key" 2>/dev/null) == "$key" ]]; then
		btjit_log "zoo: $name cached ($dir)"
	else
		t0=$SECONDS
		btjit_log "zoo: building $name ($ZOO_DESCRIPTION) from the source of ${sourcever_of[$m]}"
		rm -f "$dir/key"
		in_env "$m" bash "$tree_of_env/test/zoo/build-server.sh" "${source_of[$m]}" \
			"${zoo_root_of[$m]}/$name/build" "${zoo_root_of[$m]}/$name/prefix" "$f" "${llvm_of[$m]}" \
			>"$out/$m-$f/server-build.log" 2>&1 || {
			tail -n 30 "$out/$m-$f/server-build.log" >&2
			flock -u "$lockfd"
			return 1
		}
		echo "$key" >"$dir/key"
		echo "build_secs=$((SECONDS - t0))" >>"$dir/prefix/zoo-build.info"
		btjit_log "zoo: $name built in $((SECONDS - t0)) s"
	fi
	flock -u "$lockfd"
	exec {lockfd}>&-
}

# run_check MAJOR PG_CONFIG OUTDIR MODE - check-build.sh in a fresh copy of
# the tree, where MAJOR's servers are; results into OUTDIR
run_check() {
	local m=$1 pgc=$2 dir=$3 mode=$4 refusal=${5:-} tree rc=0
	if [[ $m == "$host_major" ]]; then
		tree=$(stage_host_tree)
		PG_CONFIG=$pgc BTJIT_ZOO_BENCH=${BTJIT_ZOO_BENCH:-0} BTJIT_ZOO_REFUSAL=$refusal \
			bash "$tree/test/zoo/check-build.sh" "$tree/.zoo-out" "$mode" || rc=$?
	else
		chroot_stage_tree "$m"
		tree=$BTJIT_CHROOT_TREE
		chroot_run "$m" env PG_CONFIG="$pgc" BTJIT_ZOO_BENCH="${BTJIT_ZOO_BENCH:-0}" BTJIT_ZOO_REFUSAL="$refusal" \
			bash "$BTJIT_CHROOT_SRC/test/zoo/check-build.sh" "$BTJIT_CHROOT_SRC/.zoo-out" "$mode" || rc=$?
	fi
	mkdir -p "$dir"
	cp -r "$tree/.zoo-out/." "$dir/" 2>/dev/null || true
	rm -rf "$tree"
	[[ $m == "$host_major" ]] || chroot_unbind "$m" "$BTJIT_CHROOT_SRC"
	return "$rc"
}

# get FILE KEY -> the value recorded for KEY
get() { sed -n "s/^$2=//p" "$1" 2>/dev/null | tail -n 1; }

# bench_ratio CSV WORKLOAD -> the instruction ratio of WORKLOAD's first
# query (bench/run's CSV: workload, metric, kind, unit, off, on, ratio, ...;
# the first instructions row is the headline one, off vs on)
bench_ratio() {
	awk -F, -v w="$2" '$1 == w && $3 == "instructions" { print $7; exit }' "$1" 2>/dev/null
}

declare -A verdict note
pass=0 fail=0
for b in "${builds[@]}"; do
	m=${b%%:*} f=${b#*:}
	d=$out/$m-$f
	mkdir -p "$d"
	echo
	echo "=== zoo: PostgreSQL $m, $f ==="
	t0=$SECONDS
	problems=()
	prepare_env "$m"
	# the path at which the env sees this tree's test/zoo scripts
	if [[ $m == "$host_major" ]]; then
		tree_of_env=$root
	else
		chroot_bind "$m" "$root/test/zoo" /build/zoo-scripts/test/zoo
		tree_of_env=/build/zoo-scripts
	fi
	if ! ensure_server "$m" "$f"; then
		problems+=("the server did not build (server-build.log)")
	else
		cp "$zoo/postgresql-$m-$f/prefix/zoo-build.info" "$d/"
		# the reference, once per major and only with the bench (its
		# ratios): Debian's own server.  Without it, a refusal on the zoo
		# build is what tells an entry point missing: Debian's build of a
		# supported major has every one of that major redirected (the
		# version matrix checks it)
		ref=$out/$m-debian
		if [[ ${BTJIT_ZOO_BENCH:-0} == 1 && ! -f $ref/result ]]; then
			if [[ $m == "$host_major" ]]; then
				ref_pgc=$PG_CONFIG
			else
				ref_pgc=$(chroot_pg_config "$m")
			fi
			run_check "$m" "$ref_pgc" "$ref" debian || true
		fi
		zoo_flavor "$f" "${llvm_of[$m]}"
		run_check "$m" "${zoo_root_of[$m]}/postgresql-$m-$f/prefix/bin/pg_config" "$d" zoo "$ZOO_REFUSAL" ||
			problems+=("check-build.sh failed: $(for s in build status probe regress bench; do
				r=$(get "$d/result" "${s}_rc"); [[ -z $r || $r == 0 ]] || printf '%s ' "$s"; done)")
		if [[ -f $d/refused ]]; then
			[[ ! -s $d/refused ]] || problems+=("refused on this build: $(tr '\n' ' ' <"$d/refused")(startup.log)")
		else
			problems+=("no list of the entry points' outcomes (status.log)")
		fi
		if [[ -f $ref/redirected && -f $d/redirected && ! -f $d/refused_cleanly ]]; then
			missing=$(comm -23 "$ref/redirected" "$d/redirected" | tr '\n' ' ')
			[[ -z $missing ]] || problems+=("not redirected here but on Debian's build: $missing")
		fi
		if [[ ${BTJIT_ZOO_BENCH:-0} == 1 && ! -f $d/refused_cleanly ]]; then
			for w in probe_int4 probe_asof; do
				rz=$(bench_ratio "$d/bench.csv" "$w")
				rd=$(bench_ratio "$ref/bench.csv" "$w")
				if [[ -z $rz || -z $rd ]]; then
					problems+=("$w: no instruction ratio")
				elif ! awk -v a="$rz" -v b="$rd" 'BEGIN { exit !(a >= b * 0.97) }'; then
					problems+=("$w: ${rz}x against Debian's ${rd}x")
				fi
				echo "${w}_ratio=$rz" >>"$d/result"
				echo "${w}_debian_ratio=$rd" >>"$d/result"
			done
		fi
	fi
	echo "secs=$((SECONDS - t0))" >>"$d/result"
	if [[ ${#problems[@]} -eq 0 ]]; then
		verdict[$b]=PASS
		pass=$((pass + 1))
	else
		verdict[$b]=FAIL
		fail=$((fail + 1))
		note[$b]="${problems[*]}"
		printf 'zoo: %s: %s\n' "$b" "${problems[@]}" >&2
	fi
	echo "--- zoo: ${verdict[$b]} $b ($((SECONDS - t0)) s)"
done

echo
echo "=== zoo summary (test/results/zoo/MAJOR-FLAVOR/) ==="
printf '%-6s %-16s %-10s %-20s %s\n' result build server "entry points" "probe_int4/asof (Debian's)"
for b in "${builds[@]}"; do
	m=${b%%:*} f=${b#*:}
	d=$out/$m-$f
	n=-
	[[ ! -f $d/redirected || ! -f $d/refused ]] ||
		n="$(wc -l <"$d/redirected"), $(wc -l <"$d/refused") refused"
	[[ ! -f $d/refused_cleanly ]] || n="none: inactive"
	ratios=-
	if [[ -n $(get "$d/result" probe_int4_ratio) ]]; then
		ratios="$(get "$d/result" probe_int4_ratio)/$(get "$d/result" probe_asof_ratio) ($(get "$d/result" probe_int4_debian_ratio)/$(get "$d/result" probe_asof_debian_ratio))"
	fi
	printf '%-6s %-16s %-10s %-20s %s\n' "${verdict[$b]}" "$b" \
		"$(get "$d/result" server_version | awk '{ print $2 }')" "$n" "$ratios"
	[[ -z ${note[$b]:-} ]] || echo "       ${note[$b]}"
	[[ ! -f $d/refused_cleanly ]] || echo "       refused at start-up, as expected of it: $(cat "$d/reason")"
done
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
