# test/lib/install.sh - clean Debian machines for test/suite-install.sh: a
# fresh minimal chroot per test (debootstrap --variant=minbase, nothing
# else), and the README's install steps, extracted from README.md and run
# there literally.  Source it from bash:
#
#   source test/lib/install.sh
#   inst_fresh trixie                 # a fresh chroot; sets INST_ROOT
#   inst_stage_tree                   # this tree at /build/btree_jit in it
#   inst_steps source                 # the README block tagged "source"
#   inst_run_steps source source LOG  # run that block there, as root
#   inst_sql_step preload             # that block's psql <<'SQL' command alone
#   inst_run CMD...                   # any command in the chroot, as root
#   inst_destroy                      # stop its server, remove the chroot
#
# The README side: inside the install and removal sections (between
# <!-- install-section-begin --> and <!-- remove-section-end -->) each step
# is a fenced code block preceded by a line <!-- steps: NAME -->, written
# for a shell where PG and LLVM are set from the section's table (a row per
# Debian release: | NN codename | PG | LLVM |, the columns found by their
# headers `PG` and `LLVM`).  The test runs a block as `bash -e` in the
# tree's copy with PG and LLVM set from the release's row, `sudo -u USER`
# turned into runuser and other `sudo ` dropped (the test is root, and
# minbase has no sudo).  A line ending in a comment "# from source" is run
# only when installing from source, one ending in "# ... the package" only
# for the package.  Nothing else is changed in the block.
#
# The only cache: the bare debootstrap result of each release, as a tarball
# ($BTJIT_CACHE_DIR/install/minbase-<release>.tar, default
# /var/cache/btree_jit/install), which holds none of the packages the README
# lists (checked when it is made).  Every test unpacks it into a new
# directory; the chroots of test/lib/chroot.sh (the version matrix) are
# never used.  Mounts (/proc, /sys, /dev) are made in a private mount
# namespace per command, as test/lib/chroot.sh does, so nothing stays
# mounted on the host.
#
# What the chroot gets besides minbase, as a machine of that release would
# have it: apt sources for the release (plus -updates and -security where
# they exist) on the host's Debian mirror, a policy-rc.d that keeps package
# scripts from starting services (there is no init), and apt's "assume yes"
# (the user answering Y).  No --no-install-recommends default: the README
# says so itself where it wants it.

if [[ -n ${_BTJIT_INSTALL_SH:-} ]]; then
	return 0 2>/dev/null || exit 0
fi
_BTJIT_INSTALL_SH=1

# _chroot_mirror, _chroot_host_tools, _BTJIT_CHROOT_NS_SCRIPT, and (through
# it) cluster.sh's btjit_log / btjit_die / cluster_on_exit
# shellcheck source=chroot.sh
source "$(dirname "${BASH_SOURCE[0]}")/chroot.sh"

INST_CACHE=${BTJIT_INSTALL_CACHE:-${BTJIT_CACHE_DIR:-/var/cache/btree_jit}/install}
INST_README=${BTJIT_INSTALL_README:-$BTJIT_ROOT/README.md}
INST_TREE=/build/btree_jit
INST_ROOT=""
# per release, for this shell only: the .deb files apt downloaded, shared by
# the chroots of one run (a download cache, not an installed package:
# removed at exit, never reused by a later run)
declare -A _inst_archives=()

_inst_secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# --- the README ------------------------------------------------------------

# The install + removal sections of README.md.
_inst_sections() {
	awk '/<!-- install-section-begin -->/ { on = 1 }
		on { print }
		/<!-- remove-section-end -->/ { on = 0 }' "$INST_README"
}

# inst_steps NAME - the fenced block after <!-- steps: NAME --> (fails,
# saying so, if there is none)
inst_steps() {
	local out
	out=$(_inst_sections | awk -v want="$1" '
		$0 ~ "^<!-- steps: " want " -->$" { found = 1; next }
		found == 1 && /^```/ { found = 2; next }
		found == 2 && /^```/ { exit }
		found == 2 { print }')
	if [[ -z $out ]]; then
		echo "README.md has no block tagged <!-- steps: $1 --> in its install/removal sections" >&2
		return 1
	fi
	printf '%s\n' "$out"
}

# inst_var RELEASE COLUMN - PG or LLVM for a release, from the section's
# table: the row whose first cell names the release, the column whose
# header cell is `PG` / `LLVM`.
inst_var() {
	local v
	v=$(_inst_sections | awk -F'|' -v rel="$1" -v col="$2" '
		/^\|/ && !hdr { for (i = 2; i < NF; i++) { c = $i; gsub(/[ `]/, "", c); if (c == col) want = i } hdr = 1; next }
		/^\|/ && want && $2 ~ rel { c = $want; gsub(/[ `]/, "", c); print c; exit }')
	[[ $v =~ ^[0-9]+$ ]] || btjit_die "README.md's install table has no $2 for $1"
	echo "$v"
}

# What the test runs for a block: PG and LLVM from the table, the lines of
# the other way left out, sudo dropped.
_inst_script() {
	local release=$1 name=$2 way=$3 other
	case $way in
	source) other='# .*the package$' ;;
	package) other='# from source$' ;;
	*) btjit_die "_inst_script: way is source or package, not '$way'" ;;
	esac
	echo "set -e"
	echo "PG=$(inst_var "$release" PG) LLVM=$(inst_var "$release" LLVM)"
	echo "cd $INST_TREE"
	inst_steps "$name" | grep -Ev -- "$other" | _inst_unsudo
}

# `sudo -u USER ` as runuser, other `sudo ` dropped: at a line's start or
# after &&, ; or |
_inst_unsudo() {
	sed -E 's/(^|&& |; |\| )sudo -u ([a-z_][a-z0-9_-]*) /\1runuser -u \2 -- /g; s/(^|&& |; |\| )sudo /\1/g'
}

# inst_sql_step NAME - the psql command of block NAME that reads a
# here-document: its lines from the one ending in <<'SQL' to the line SQL,
# sudo turned into runuser as for the whole block (for running that step
# alone, on chosen settings)
inst_sql_step() {
	local out
	out=$(inst_steps "$1" | awk '/<<'"'"'SQL'"'"'$/ { on = 1 } on { print } on && /^SQL$/ { exit }')
	if [[ -z $out ]]; then
		echo "README.md's block $1 has no command with a <<'SQL' here-document" >&2
		return 1
	fi
	printf '%s\n' "$out" | _inst_unsudo
}

# --- the chroot ------------------------------------------------------------

_inst_suites() {
	case $1 in
	sid) echo "sid" ;;
	*) echo "$1 $1-updates" ;;
	esac
}

# _inst_minbase RELEASE - path of the cached minbase tarball (made if missing)
_inst_minbase() {
	local release=$1 tar tmp mirror t0 lockfd
	tar=$INST_CACHE/minbase-$release.tar
	mkdir -p "$INST_CACHE"
	exec {lockfd}>"$INST_CACHE/.minbase-$release.lock"
	flock "$lockfd"
	if [[ ! -s $tar ]]; then
		_chroot_host_tools
		mirror=$(_chroot_mirror)
		tmp=$(mktemp -d "$INST_CACHE/.new-$release.XXXXXX")
		cluster_on_exit "rm -rf '$tmp' '$tmp.log' '$tar.tmp'"
		t0=$(date +%s.%N)
		btjit_log "debootstrap --variant=minbase $release from $mirror (cached as $tar)"
		if ! debootstrap --variant=minbase "$release" "$tmp" "$mirror" >"$tmp.log" 2>&1; then
			tail -n 30 "$tmp.log" >&2
			btjit_die "debootstrap $release failed"
		fi
		# nothing of what the README lists may be there already
		if grep -E '^Package: (make|gcc|g\+\+|cpp|libicu-dev|libzydis-dev|postgresql.*|clang.*|llvm.*|dpkg-dev|debhelper)$' \
			"$tmp/var/lib/dpkg/status"; then
			btjit_die "the minbase $release chroot already has packages the README lists"
		fi
		# only what debootstrap installed; no downloaded archives, no lists
		rm -f "$tmp"/var/cache/apt/archives/*.deb
		rm -rf "$tmp"/var/lib/apt/lists/*
		tar -C "$tmp" -cf "$tar.tmp" .
		mv "$tar.tmp" "$tar"
		rm -rf "$tmp" "$tmp.log"
		btjit_log "minbase $release: $(_inst_secs "$t0") s, $(du -m "$tar" | cut -f1) MB"
	fi
	flock -u "$lockfd"
	exec {lockfd}>&-
	echo "$tar"
}

# inst_fresh RELEASE - unpack a fresh chroot, give it apt sources for the
# release and refresh them; sets INST_ROOT and INST_RELEASE.  The chroot is
# removed at exit (inst_destroy).
inst_fresh() {
	local release=$1 tar mirror s
	_chroot_need_root
	tar=$(_inst_minbase "$release")
	mkdir -p "$INST_CACHE"
	INST_ROOT=$(mktemp -d "$INST_CACHE/$release.XXXXXX")
	INST_RELEASE=$release
	cluster_on_exit "inst_destroy '$INST_ROOT'"
	tar -C "$INST_ROOT" -xf "$tar"
	chmod 755 "$INST_ROOT"
	mirror=$(_chroot_mirror)
	{
		for s in $(_inst_suites "$release"); do
			echo "deb $mirror $s main"
		done
		[[ $release == sid ]] || echo "deb ${mirror%/debian*}/debian-security $release-security main"
	} >"$INST_ROOT/etc/apt/sources.list"
	{
		echo 'APT::Get::Assume-Yes "true";'
		echo 'Acquire::Retries "3";'
		# sid's Release file can be past its Valid-Until on the mirror
		[[ $release == sid ]] && echo 'Acquire::Check-Valid-Until "false";'
	} >"$INST_ROOT/etc/apt/apt.conf.d/99btree_jit-test"
	printf '#!/bin/sh\nexit 101\n' >"$INST_ROOT/usr/sbin/policy-rc.d"
	chmod 755 "$INST_ROOT/usr/sbin/policy-rc.d"
	cp -L /etc/resolv.conf "$INST_ROOT/etc/resolv.conf" 2>/dev/null || true
	if [[ -z ${_inst_archives[$release]:-} ]]; then
		_inst_archives[$release]=$(mktemp -d "$INST_CACHE/.archives-$release.XXXXXX")
		# traversable: apt downloads as its _apt user
		chmod 755 "${_inst_archives[$release]}"
		mkdir -p "${_inst_archives[$release]}/partial"
		cluster_on_exit "rm -rf '${_inst_archives[$release]}'"
	fi
	inst_run apt-get -q update >"$INST_ROOT.update.log" 2>&1 || {
		tail -n 20 "$INST_ROOT.update.log" >&2
		btjit_die "apt-get update failed in the fresh $release chroot"
	}
	rm -f "$INST_ROOT.update.log"
}

# inst_run CMD... - CMD in the current chroot as root, in a private mount
# namespace with /proc, /sys and /dev, and a clean environment
inst_run() {
	[[ -n $INST_ROOT && -x $INST_ROOT/usr/bin/env ]] || btjit_die "inst_run: no chroot (inst_fresh first)"
	env -i PATH="$_BTJIT_CHROOT_PATH" HOME=/root LANG=C.UTF-8 TERM=dumb \
		DEBIAN_FRONTEND=noninteractive \
		unshare -m sh -c "$_BTJIT_CHROOT_NS_SCRIPT" sh "$INST_ROOT" \
		"${_inst_archives[$INST_RELEASE]:+${_inst_archives[$INST_RELEASE]}$'\t'/var/cache/apt/archives}" "$@"
}

# inst_stage_tree [SRC] - copy this tree (git's view: tracked files and
# untracked ones not ignored, as on disk) to $INST_TREE in the chroot
inst_stage_tree() {
	local src=${1:-$BTJIT_ROOT} dest=$INST_ROOT$INST_TREE
	mkdir -p "$dest"
	chmod 755 "$INST_ROOT/build" "$dest"
	stage_tree_copy "$src" "$dest"
}

# inst_run_steps NAME WAY LOG - run the README's block NAME for WAY
# (source, package) in the chroot (as root, in the tree's copy), its output
# and the script itself in LOG
inst_run_steps() {
	local name=$1 way=$2 log=$3 script=/build/steps-$1.sh
	inst_steps "$name" >/dev/null 2>"$log" || { cat "$log" >&2; return 1; }
	_inst_script "$INST_RELEASE" "$name" "$way" >"$INST_ROOT$script"
	{
		echo "---- $script ----"
		cat "$INST_ROOT$script"
		echo "----"
	} >"$log"
	inst_run bash -x "$script" >>"$log" 2>&1
}

# inst_destroy [DIR] - stop every process whose root is the chroot (the
# servers it started: nothing else runs there), then remove it
inst_destroy() {
	local dir=${1:-$INST_ROOT} p pids i
	[[ -n $dir && -d $dir ]] || return 0
	dir=$(cd "$dir" && pwd -P)
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pids=()
		for p in /proc/[0-9]*; do
			[[ $(readlink "$p/root" 2>/dev/null) == "$dir" ]] && pids+=("${p#/proc/}")
		done
		[[ ${#pids[@]} -gt 0 ]] || break
		if [[ $i -lt 8 ]]; then kill -TERM "${pids[@]}" 2>/dev/null || true; else kill -KILL "${pids[@]}" 2>/dev/null || true; fi
		sleep 1
	done
	_chroot_detach_leftovers "$dir"
	rm -rf "$dir"
	[[ $dir != "$INST_ROOT" ]] || INST_ROOT=""
}
