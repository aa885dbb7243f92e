# test/lib/chroot.sh - Debian chroots holding other PostgreSQL major versions
# (17 from Debian 13 trixie, 18 from Debian unstable sid, 19 from Debian
# experimental on top of sid), so that btree_jit can be built and tested
# against each version's real, stripped server binary on a Debian 12
# machine.  Source it from bash (set -euo pipefail is
# fine), or run it as a command:
#
#   source test/lib/chroot.sh
#   chroot_ensure 17                      # create/complete the chroot (cached)
#   chroot_stage_tree 17                  # a copy of this tree at $BTJIT_CHROOT_SRC
#   chroot_bind 17 /some/dir /path        # or any host dir at /path inside
#   chroot_run 17 make -C /build/btree_jit $(chroot_make_vars 17)
#
#   bash test/lib/chroot.sh ensure 18
#   bash test/lib/chroot.sh run 18 pg_config --version
#   bash test/lib/chroot.sh info 17
#   bash test/lib/chroot.sh source 17     # the server's source (regression suite)
#
# A chroot is named by its suite (trixie, sid, experimental) or by the
# PostgreSQL major it carries (17, 18, 19); both spellings work everywhere.
# "experimental" is a sid chroot (debootstrap sid) whose apt also has
# Debian experimental: postgresql-19 (19~rc1) is only there, and its
# packages need libc6 >= 2.43.  It is a chroot of its own, not the sid one
# with more packages, so that the 18 tests never see anything experimental
# brought in.  An apt pin takes every binary package built from the source
# package postgresql-19 (the server, its JIT, headers, and libpq5/libpq-dev,
# which postgresql-server-dev-19 needs at >= 19) from experimental, and
# everything else from sid: "apt-get -t experimental" would also take
# experimental's perl, which conflicts with sid's.
#
# Why a chroot: the packages of 17 and 18 need a newer glibc than Debian 12
# has, and the module must be tested against exactly the binaries Debian
# ships (the locator reads their machine code).  A minbase debootstrap plus
# the server, its headers, the LLVM its JIT links and our build tools takes
# about 2.2 GB and 100-200 s to build (measured here: trixie 98 s, sid 195 s
# from nothing), then it is reused (a cached chroot_ensure takes ~2.5 s).
# Needs root (debootstrap, chroot, unshare, mount).
#
# Where: $BTJIT_CHROOT_CACHE/<suite> (default /var/cache/btree_jit/chroot),
# outside the repository.  A chroot is complete when its marker file
# /.btree_jit-chroot exists and every wanted package is installed; anything
# missing is installed on the next chroot_ensure, nothing is rebuilt.
# BTJIT_CHROOT_REBUILD=1 throws the cached chroot away first.
#
# Mounts: every chroot_run runs in its own private mount namespace
# (unshare -m), where /proc, /sys, /dev (with /dev/pts and /dev/shm) and the
# chroot_bind directories are mounted.  They are never visible on the host,
# and they disappear with the last process of the namespace, so nothing can
# be left mounted: not after an error, not after kill -9 (no unmount trap
# is needed, and there is no shared mount state between concurrent runs).
# Before a cached chroot is deleted (BTJIT_CHROOT_REBUILD=1), any mount under
# it in the host's namespace (one made by hand) is detached first.
#
# The host's apt configuration is never read for packages and never changed:
# only its mirror URL is reused for debootstrap.  Inside the chroots, apt has
# its own configuration (sid's Release file has expired on the mirror, so
# the sid and experimental chroots set Acquire::Check-Valid-Until "false"
# in their own /etc/apt/apt.conf.d).  debootstrap itself is installed on the host with
# apt-get when missing.
#
# Environment knobs (all optional):
#   BTJIT_CHROOT_CACHE    where chroots live (default
#                         ${BTJIT_CACHE_DIR:-/var/cache/btree_jit}/chroot)
#   BTJIT_CHROOT_MIRROR   Debian mirror for debootstrap (default: the first
#                         non-security Debian URI in the host's apt sources,
#                         else http://deb.debian.org/debian)
#   BTJIT_CHROOT_SRC      where chroot_bind mounts by default
#                         (default /build/btree_jit)
#   BTJIT_CHROOT_EXTRA_PKGS  more packages to install in every chroot
#   BTJIT_CHROOT_REBUILD  1: delete and recreate the chroot in chroot_ensure

if [[ -n ${_BTJIT_CHROOT_SH:-} ]]; then
	return 0 2>/dev/null || exit 0
fi
_BTJIT_CHROOT_SH=1

# btjit_log, btjit_die and the exit-hook machinery (cluster_on_exit).
# shellcheck source=cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"

BTJIT_CHROOT_CACHE=${BTJIT_CHROOT_CACHE:-${BTJIT_CACHE_DIR:-/var/cache/btree_jit}/chroot}
BTJIT_CHROOT_SRC=${BTJIT_CHROOT_SRC:-/build/btree_jit}

# Inside the chroot the environment is rebuilt from nothing (env -i): the
# host's PATH, PG_CONFIG etc. mean nothing there.
_BTJIT_CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
_BTJIT_CHROOT_MARKER=.btree_jit-chroot

# Packages every chroot gets, whatever the version: the module's build
# (PGXS, Zydis), the server's regression suite (dpkg-dev for apt-get source,
# bzip2/xz for the tarballs, diffutils for pg_regress), test helpers
# (python3, valgrind, gdb/binutils for looking at binaries), runuser.
# libicu-dev: the server headers' utils/pg_locale.h includes ICU's headers
# (Debian builds with ICU), and the server-dev packages of 17 and 18 do not
# pull it in.
_BTJIT_CHROOT_COMMON_PKGS=(make gcc g++ libzydis-dev libicu-dev python3 valgrind gdb binutils
	dpkg-dev bzip2 xz-utils diffutils procps util-linux
	build-essential debhelper postgresql-server-dev-all)

declare -A _btjit_chroot_binds=()

# --- naming ----------------------------------------------------------------

# chroot_suite NAME -> the chroot's name (trixie, sid, experimental) for a
# suite or major: its directory, lock and marker are named after it
chroot_suite() {
	case ${1:-} in
	17 | trixie) echo trixie ;;
	18 | sid | unstable) echo sid ;;
	19 | experimental) echo experimental ;;
	*) btjit_die "unknown chroot '${1:-}' (known: 17/trixie, 18/sid, 19/experimental)" ;;
	esac
}

# _chroot_base_suite SUITE -> the suite debootstrap installs (experimental
# is not a complete suite: it sits on top of sid)
_chroot_base_suite() {
	case $1 in
	experimental) echo sid ;;
	*) echo "$1" ;;
	esac
}

# Die (in the calling shell, not in a $(...) subshell) on an unknown name.
_chroot_check_name() {
	chroot_suite "$1" >/dev/null
}

# chroot_pg_major NAME -> the PostgreSQL major version its chroot carries
chroot_pg_major() {
	case $(chroot_suite "$1") in
	trixie) echo 17 ;;
	sid) echo 18 ;;
	experimental) echo 19 ;;
	esac
}

# chroot_dir NAME -> the chroot's root directory on the host
chroot_dir() {
	echo "$BTJIT_CHROOT_CACHE/$(chroot_suite "$1")"
}

# chroot_pg_config NAME -> pg_config path inside the chroot
chroot_pg_config() {
	echo "/usr/lib/postgresql/$(chroot_pg_major "$1")/bin/pg_config"
}

# chroot_llvm_version NAME -> the LLVM major the chroot's server JIT links
# (recorded by chroot_ensure)
chroot_llvm_version() {
	local f
	f=$(chroot_dir "$1")/$_BTJIT_CHROOT_MARKER
	[[ -f $f ]] || btjit_die "chroot $(chroot_suite "$1") is not set up (chroot_ensure $1)"
	sed -n 's/^llvm=//p' "$f"
}

# chroot_make_vars NAME -> make variables that build the module for the
# chroot's server: its pg_config and the LLVM its JIT uses.
chroot_make_vars() {
	local v
	v=$(chroot_llvm_version "$1")
	echo "PG_CONFIG=$(chroot_pg_config "$1") LLVM_CONFIG=llvm-config-$v CLANG=clang-$v"
}

# --- helpers -----------------------------------------------------------------

# Run a command, then log how long it took (and whether it failed).
_chroot_timed() {
	local what=$1 t0 rc=0 status=""
	shift
	t0=$(date +%s.%N)
	"$@" || rc=$?
	[[ $rc -eq 0 ]] || status=" (FAILED, exit $rc)"
	btjit_log "$what: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }')$status"
	return "$rc"
}

# The Debian mirror the host uses (deb822 .sources or one-line lists),
# skipping the security archive.
_chroot_mirror() {
	local uri
	if [[ -n ${BTJIT_CHROOT_MIRROR:-} ]]; then
		echo "$BTJIT_CHROOT_MIRROR"
		return
	fi
	uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^[[:space:]]*#/ { next }
			$1 == "URIs:" { for (i = 2; i <= NF; i++) print $i; next }
			$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' |
		grep -E '/debian/?$' | grep -v -- '-security' | head -n 1 || true)
	echo "${uri:-http://deb.debian.org/debian}"
}

_chroot_need_root() {
	[[ $(id -u) -eq 0 ]] || btjit_die "chroots need root (debootstrap, chroot, mount)"
}

# Install debootstrap on the host if missing (the only host package we add).
_chroot_host_tools() {
	local t
	for t in unshare chroot flock; do
		command -v "$t" >/dev/null || btjit_die "$t is missing on the host (util-linux, coreutils)"
	done
	if ! command -v debootstrap >/dev/null; then
		btjit_log "installing debootstrap on the host"
		DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=600 \
			--no-install-recommends install debootstrap >/dev/null ||
			{
				DEBIAN_FRONTEND=noninteractive apt-get -q update >/dev/null &&
					DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=600 \
						--no-install-recommends install debootstrap >/dev/null
			} || btjit_die "could not install debootstrap"
	fi
}

# chroot_exec NAME CMD... - run CMD in the chroot WITHOUT mounts (enough for
# dpkg-query, apt configuration); chroot_run is the normal entry point.
chroot_exec() {
	local dir
	dir=$(chroot_dir "$1")
	shift
	env -i PATH="$_BTJIT_CHROOT_PATH" HOME=/root LANG=C.UTF-8 TERM=dumb \
		DEBIAN_FRONTEND=noninteractive chroot "$dir" "$@"
}

# --- creation ----------------------------------------------------------------

# debootstrap into a temp dir beside the final one, then rename: a cached
# chroot is never half-made.
_chroot_bootstrap() {
	local suite=$1 dir=$2 tmp mirror base
	mirror=$(_chroot_mirror)
	base=$(_chroot_base_suite "$suite")
	tmp=$(mktemp -d "$BTJIT_CHROOT_CACHE/.new-$suite.XXXXXX")
	cluster_on_exit "rm -rf '$tmp' '$tmp.log'"
	# mktemp made it 0700; it becomes the chroot's /, which every user
	# (postgres above all) must be able to traverse
	chmod 755 "$tmp"
	btjit_log "debootstrap --variant=minbase $base from $mirror (for the $suite chroot)"
	if ! _chroot_timed "debootstrap $base" \
		_chroot_logged "$tmp.log" debootstrap --variant=minbase "$base" "$tmp" "$mirror"; then
		tail -n 30 "$tmp.log" >&2
		btjit_die "debootstrap $base failed (full log: $tmp.log)"
	fi
	rm -f "$tmp.log"
	rm -rf "$dir"
	mv "$tmp" "$dir"
}

# Configure the chroot's own apt and dpkg hooks (idempotent).
_chroot_configure() {
	local suite=$1 dir=$2 base
	base=$(_chroot_base_suite "$suite")
	# the chroot's / must be traversable by every user (postgres)
	chmod 755 "$dir"
	# Packages must not start services in the chroot (no init there), and
	# postgresql-common must not create and start a default cluster.
	printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
	chmod 755 "$dir/usr/sbin/policy-rc.d"
	mkdir -p "$dir/etc/postgresql-common/createcluster.d"
	echo "create_main_cluster = false" >"$dir/etc/postgresql-common/createcluster.d/btree_jit.conf"
	{
		echo 'APT::Install-Recommends "false";'
		echo 'APT::Install-Suggests "false";'
		echo 'Acquire::Retries "3";'
		# sid's (and experimental's) Release file is past its
		# Valid-Until on the mirror.
		[[ $base == sid ]] && echo 'Acquire::Check-Valid-Until "false";'
	} >"$dir/etc/apt/apt.conf.d/99btree_jit"
	# deb-src too: the server's own regression suite comes from the source
	# package (apt-get source inside the chroot).  Not for experimental:
	# 19's source is not served (404), its suite comes from
	# ../shared/pg19 (chroot_server_source).
	{
		echo "deb http://deb.debian.org/debian $base main"
		if [[ $suite == experimental ]]; then
			echo "deb http://deb.debian.org/debian experimental main"
		else
			echo "deb-src http://deb.debian.org/debian $base main"
		fi
	} >"$dir/etc/apt/sources.list"
	sed -i "s|http://deb.debian.org/debian|$(_chroot_mirror)|" "$dir/etc/apt/sources.list"
	if [[ $suite == experimental ]]; then
		printf 'Package: src:postgresql-%s\nPin: release a=experimental\nPin-Priority: 990\n' \
			"$(chroot_pg_major "$suite")" >"$dir/etc/apt/preferences.d/btree_jit"
		# sid's postgresql-common supports 18 only: extension packages
		# (pg_buildext, test/suite-package.sh) are built for the
		# chroot's major, as Debian's experimental builds set it
		chroot_pg_major "$suite" >"$dir/etc/postgresql-common/supported_versions"
	fi
	cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
}

# _chroot_missing NAME PKG... -> the packages among PKG not installed
# (one dpkg-query for all: unknown packages make it complain, not fail us)
_chroot_missing() {
	local name=$1 installed
	shift
	[[ $# -gt 0 ]] || return 0
	installed=" $(chroot_exec "$name" dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "$@" 2>/dev/null |
		awk '$1 == "ii" { sub(/:.*/, "", $2); printf "%s ", $2 }' || true) "
	printf '%s\n' "$@" | while read -r p; do
		[[ $installed == *" $p "* ]] || echo "$p"
	done
}

# _chroot_logged LOG CMD... - run CMD with its output in LOG
_chroot_logged() {
	local log=$1
	shift
	"$@" >"$log" 2>&1
}

# apt-get update in the chroot, once per shell and chroot.
_chroot_apt_updated=""
_chroot_apt_update() {
	local name=$1
	[[ $_chroot_apt_updated != *" $name "* ]] || return 0
	_chroot_timed "apt-get update in $(chroot_suite "$name")" \
		chroot_run "$name" apt-get -q update >/dev/null ||
		btjit_die "apt-get update failed in the $(chroot_suite "$name") chroot"
	_chroot_apt_updated+=" $name "
}

# _chroot_apt_install NAME PKG... (nothing to do without PKG)
_chroot_apt_install() {
	local name=$1 log
	shift
	[[ $# -gt 0 ]] || return 0
	_chroot_apt_update "$name"
	log=$(chroot_dir "$name").apt.log
	_chroot_timed "apt-get install in $(chroot_suite "$name"): $*" \
		_chroot_logged "$log" chroot_run "$name" apt-get -q -y -o DPkg::Lock::Timeout=600 install "$@" || {
		tail -n 30 "$log" >&2
		btjit_die "apt-get install $* failed in the $(chroot_suite "$name") chroot (log: $log)"
	}
}

# The server packages of the chroot's major: server, client, headers, and
# the JIT provider where it is packaged apart (18 in sid: postgresql-18-jit).
_chroot_server_pkgs() {
	local name=$1 m
	m=$(chroot_pg_major "$name")
	echo "postgresql-$m postgresql-client-$m postgresql-server-dev-$m"
	if chroot_exec "$name" apt-cache show "postgresql-$m-jit" >/dev/null 2>&1; then
		echo "postgresql-$m-jit"
	fi
}

# The LLVM major the installed server's JIT provider links: from the Depends
# of the package that ships llvmjit.so (libllvmN), checked against the file.
_chroot_server_llvm() {
	local name=$1 m pkg deps v dir
	m=$(chroot_pg_major "$name")
	dir=$(chroot_dir "$name")
	[[ -f $dir/usr/lib/postgresql/$m/lib/llvmjit.so ]] ||
		btjit_die "no llvmjit.so in the $(chroot_suite "$name") chroot's server"
	pkg=$(chroot_exec "$name" dpkg-query -S "/usr/lib/postgresql/$m/lib/llvmjit.so" | cut -d: -f1)
	deps=$(chroot_exec "$name" dpkg-query -W -f='${Depends}' "$pkg")
	v=$(grep -oE 'libllvm[0-9]+' <<<"$deps" | head -n 1 | tr -dc 0-9)
	[[ -n $v ]] || btjit_die "cannot tell which LLVM $pkg links (Depends: $deps)"
	echo "$v"
}

# chroot_ensure NAME - make sure the chroot exists and has every package
# (server, headers, matching clang/LLVM, build and test tools).  Safe to run
# concurrently: creation and apt runs hold a per-suite lock.
chroot_ensure() {
	local name=$1 suite dir lockfd server_pkgs llvm missing t0
	_chroot_check_name "${1:-}"
	_chroot_need_root
	suite=$(chroot_suite "$name")
	dir=$(chroot_dir "$name")
	t0=$(date +%s.%N)
	mkdir -p "$BTJIT_CHROOT_CACHE"
	exec {lockfd}>"$BTJIT_CHROOT_CACHE/.$suite.lock"
	flock "$lockfd"

	if [[ ${BTJIT_CHROOT_REBUILD:-0} == 1 && -d $dir ]]; then
		btjit_log "BTJIT_CHROOT_REBUILD=1: removing $dir"
		_chroot_detach_leftovers "$dir"
		rm -rf "$dir"
	fi
	# a completed debootstrap has a working dpkg and apt
	if [[ ! -x $dir/usr/bin/apt-get || ! -f $dir/var/lib/dpkg/status ]]; then
		_chroot_host_tools
		_chroot_bootstrap "$suite" "$dir"
	fi
	_chroot_configure "$suite" "$dir"

	# the server first: which LLVM to install follows from its JIT
	# shellcheck disable=SC2207
	server_pkgs=($(_chroot_server_pkgs "$name"))
	mapfile -t missing < <(_chroot_missing "$name" "${server_pkgs[@]}" \
		"${_BTJIT_CHROOT_COMMON_PKGS[@]}" ${BTJIT_CHROOT_EXTRA_PKGS:-})
	if [[ ${#missing[@]} -gt 0 ]]; then
		# refresh first: whether a separate JIT package exists is only
		# known from fresh lists
		_chroot_apt_update "$name"
		# shellcheck disable=SC2207
		server_pkgs=($(_chroot_server_pkgs "$name"))
		mapfile -t missing < <(_chroot_missing "$name" "${server_pkgs[@]}" \
			"${_BTJIT_CHROOT_COMMON_PKGS[@]}" ${BTJIT_CHROOT_EXTRA_PKGS:-})
	fi
	_chroot_apt_install "$name" "${missing[@]}"

	llvm=$(_chroot_server_llvm "$name")
	mapfile -t missing < <(_chroot_missing "$name" "clang-$llvm" "llvm-$llvm-dev")
	_chroot_apt_install "$name" "${missing[@]}"

	{
		echo "suite=$suite"
		echo "pg_major=$(chroot_pg_major "$name")"
		echo "pg_version=$(chroot_exec "$name" dpkg-query -W -f='${Version}' "postgresql-$(chroot_pg_major "$name")")"
		echo "llvm=$llvm"
		echo "packages=${server_pkgs[*]} clang-$llvm llvm-$llvm-dev ${_BTJIT_CHROOT_COMMON_PKGS[*]}"
	} >"$dir/$_BTJIT_CHROOT_MARKER"
	flock -u "$lockfd"
	exec {lockfd}>&-
	btjit_log "chroot $suite ready in $dir: PostgreSQL $(sed -n 's/^pg_version=//p' "$dir/$_BTJIT_CHROOT_MARKER"), LLVM $llvm ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'))"
}

# --- running -----------------------------------------------------------------

# chroot_bind NAME HOSTDIR [PATH] - have every later chroot_run of NAME see
# HOSTDIR at PATH (default $BTJIT_CHROOT_SRC) inside the chroot, instead of
# what an earlier chroot_bind put there (whose HOSTDIR may be gone by
# then).  Give it a copy of the tree if the chroot's build must not write
# into yours.
chroot_bind() {
	local suite host target
	_chroot_check_name "${1:-}"
	suite=$(chroot_suite "$1")
	host=$(cd "$2" && pwd) || btjit_die "chroot_bind: no directory $2"
	target=${3:-$BTJIT_CHROOT_SRC}
	[[ $target == /* && $target != / ]] || btjit_die "chroot_bind: target must be an absolute path, not /"
	chroot_unbind "$1" "$target"
	_btjit_chroot_binds[$suite]+="$host"$'\t'"$target"$'\n'
}

# stage_tree_copy SRC DEST - copy the source tree SRC into the existing
# directory DEST: in a git tree exactly the files git would hold (tracked,
# plus untracked ones not ignored), as they are on disk now; otherwise
# everything but build outputs.  Fails if the copy does.
stage_tree_copy() {
	local src=$1 dest=$2
	if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$src" && git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
			tar --null -T - -cf -) | tar -C "$dest" -xf -
	else
		tar -C "$src" --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
			--exclude=./test/results --exclude=./bench/out -cf - . |
			tar -C "$dest" -xf -
	fi
}

# chroot_stage_tree NAME [SRC] - copy the source tree SRC (default: this
# repository, $BTJIT_ROOT) into a fresh directory and bind it at
# $BTJIT_CHROOT_SRC for NAME; sets BTJIT_CHROOT_TREE to the copy's host
# path.  Call it directly, not in $(...): the bind and the cleanup are
# recorded in the calling shell.  A build inside
# the chroot writes objects for another major version, which must not land
# in the caller's tree.  The copy (stage_tree_copy) is removed at exit.
chroot_stage_tree() {
	local name=$1 src=${2:-$BTJIT_ROOT} dest
	_chroot_check_name "${1:-}"
	src=$(cd "$src" && pwd) || btjit_die "chroot_stage_tree: no directory $2"
	mkdir -p "$BTJIT_CHROOT_CACHE"
	dest=$(mktemp -d "$BTJIT_CHROOT_CACHE/.tree-$(chroot_suite "$name").XXXXXX")
	cluster_on_exit "rm -rf '$dest'"
	chmod 755 "$dest"
	stage_tree_copy "$src" "$dest" || btjit_die "chroot_stage_tree: copying $src failed"
	chroot_bind "$name" "$dest"
	BTJIT_CHROOT_TREE=$dest
}

# chroot_unbind NAME [PATH] - forget the bind at PATH inside NAME's chroot
# (before its host directory is removed: a later chroot_run would fail to
# mount it), or every bind of NAME
chroot_unbind() {
	local suite line kept=""
	suite=$(chroot_suite "$1")
	if [[ -n ${2:-} ]]; then
		while IFS= read -r line; do
			[[ -n $line && ${line#*$'\t'} != "$2" ]] && kept+=$line$'\n'
		done <<<"${_btjit_chroot_binds[$suite]:-}"
	fi
	_btjit_chroot_binds[$suite]=$kept
}

# The script run by unshare in the new mount namespace: mount, chroot, exec.
# Mounts are made private first, so nothing propagates back to the host.
# shellcheck disable=SC2016
_BTJIT_CHROOT_NS_SCRIPT='
set -e
dir=$1 binds=$2
shift 2
mount --make-rprivate /
mount -t proc proc "$dir/proc"
mount -t sysfs -o ro sysfs "$dir/sys"
mount --rbind /dev "$dir/dev"
while IFS=$(printf "\t") read -r host target; do
	[ -n "$host" ] || continue
	mkdir -p "$dir$target"
	mount --bind "$host" "$dir$target"
done <<EOF
$binds
EOF
exec chroot "$dir" "$@"
'

# chroot_run NAME CMD... - run CMD inside the chroot as root, with /proc,
# /sys, /dev and the binds mounted in a private mount namespace, and a clean
# environment (PG_CONFIG, LLVM_CONFIG and CLANG set for the chroot's server
# once chroot_ensure has recorded its LLVM).  Add variables with
# `chroot_run NAME env VAR=value CMD...`.
chroot_run() {
	local name=$1 suite dir vars=()
	_chroot_check_name "${1:-}"
	shift
	_chroot_need_root
	suite=$(chroot_suite "$name")
	dir=$(chroot_dir "$name")
	[[ -x $dir/usr/bin/env ]] || btjit_die "no chroot at $dir (chroot_ensure $name)"
	[[ $# -gt 0 ]] || set -- /bin/bash
	if [[ -f $dir/$_BTJIT_CHROOT_MARKER ]]; then
		vars=(PG_CONFIG="$(chroot_pg_config "$name")"
			LLVM_CONFIG="llvm-config-$(chroot_llvm_version "$name")"
			CLANG="clang-$(chroot_llvm_version "$name")")
	fi
	unshare --mount --propagation private sh -c "$_BTJIT_CHROOT_NS_SCRIPT" chroot-ns \
		"$dir" "${_btjit_chroot_binds[$suite]:-}" \
		/usr/bin/env -i PATH="$_BTJIT_CHROOT_PATH" HOME=/root LANG=C.UTF-8 TERM=dumb \
		DEBIAN_FRONTEND=noninteractive "${vars[@]}" "$@"
}

# chroot_shell NAME - an interactive shell in the chroot (debugging)
chroot_shell() {
	chroot_run "$1" /bin/bash -l
}

# --- the server's source (its own regression suite) ----------------------------

# Source package versions to use when the installed version's source is no
# longer in the archive (checked Nov 2026: trixie's 17.12-0+deb13u1 is
# installable, but its source files are gone from the pool, while
# 17.11-0+deb13u1's .dsc, orig and debian tarballs are still there).  A
# neighbouring minor release's suite is good enough for comparing module
# off/on outcomes test by test.  Override with BTJIT_CHROOT_SOURCE_FALLBACK.
declare -A _BTJIT_CHROOT_SOURCE_FALLBACK=([trixie]=17.11-0+deb13u1)

# Fetch PKG=VERSION's source package into DIR (host path, bound at /srcdl)
# by its .dsc in the pool, with the chroot's apt-helper; dpkg-source -x
# later checks every file against the .dsc's checksums.  (The .dsc itself
# is not in any signed Sources index any more; its upload signature would
# need the debian-keyring package to check.)
_chroot_fetch_dsc() {
	local name=$1 pkg=$2 version=$3 dl=$4 url dsc f
	url="$(_chroot_mirror)/pool/main/${pkg:0:1}/$pkg"
	dsc="${pkg}_${version#*:}.dsc"
	chroot_run "$name" /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$url/$dsc" "/srcdl/$dsc" >/dev/null ||
		return 1
	for f in $(sed -n '/^Checksums-Sha256:/,/^[^ ]/{/^ /p}' "$dl/$dsc" | awk '{ print $3 }'); do
		chroot_run "$name" /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$url/$f" "/srcdl/$f" >/dev/null ||
			return 1
	done
}

# 19: Debian's pool does not serve postgresql-19's source (404 for 19~rc1
# and 19~beta2).  ../shared/pg19/ beside the clone holds a git archive of
# the PostgreSQL repository at the REL_19 branch point (commit 9cfd19bc,
# configure.ac says 19beta1): the regression suite and the nbtree sources.
# Its suite is used as 17.11's is against a 17.12 server: every module run
# must have the module-off run's outcome, test by test.
BTJIT_PG19_SUITE_TARBALL=${BTJIT_PG19_SUITE_TARBALL:-}
_BTJIT_PG19_SUITE_VERSION=19~beta1-branchpoint-9cfd19bc

# _chroot_tarball_source SUITE MAJOR - unpack the suite tarball of a major
# whose Debian source is not served (19) into the cache; sets
# BTJIT_CHROOT_SOURCE_DIR / _VERSION like chroot_server_source
_chroot_tarball_source() {
	local suite=$1 m=$2 tarball version dir tmp
	[[ $m == 19 ]] || btjit_die "no source tarball is known for PostgreSQL $m"
	tarball=${BTJIT_PG19_SUITE_TARBALL:-$BTJIT_ROOT/../shared/pg19/postgresql-19-branchpoint-regress-nbtree.tar.xz}
	version=$_BTJIT_PG19_SUITE_VERSION
	dir=${BTJIT_CACHE_DIR:-/var/cache/btree_jit}/postgresql-$m-$version
	if [[ ! -f $dir/.btree_jit-complete ]]; then
		[[ -f $tarball ]] ||
			btjit_die "the $suite chroot's regression suite comes from $tarball, which does not exist (set BTJIT_PG19_SUITE_TARBALL)"
		mkdir -p "$(dirname "$dir")"
		tmp=$(mktemp -d "$(dirname "$dir")/.srcdl.XXXXXX")
		cluster_on_exit "rm -rf '$tmp'"
		tar -C "$tmp" -xJf "$tarball" || btjit_die "unpacking $tarball failed"
		[[ -f $tmp/postgresql-19-branchpoint/src/test/regress/parallel_schedule ]] ||
			btjit_die "$tarball holds no src/test/regress/parallel_schedule under postgresql-19-branchpoint/"
		# the server (user postgres) reads the suite's data files
		chmod -R a+rX "$tmp/postgresql-19-branchpoint"
		rm -rf "$dir"
		mv "$tmp/postgresql-19-branchpoint" "$dir"
		touch "$dir/.btree_jit-complete"
		rm -rf "$tmp"
		btjit_log "suite of the REL_19 branch point unpacked into $dir (from $tarball)"
	fi
	BTJIT_CHROOT_SOURCE_DIR=$dir
	BTJIT_CHROOT_SOURCE_VERSION=$version
}

# chroot_server_source NAME - unpack the Debian source of the chroot's
# server (Debian patches applied, as in the build of the binary) into
# ${BTJIT_CACHE_DIR:-/var/cache/btree_jit}/postgresql-M-VERSION, reused when
# present.  Sets BTJIT_CHROOT_SOURCE_DIR (host path) and
# BTJIT_CHROOT_SOURCE_VERSION (which may be the fallback above: say so in
# any report).  19 (experimental): not a Debian source, the REL_19 branch
# point's suite from ../shared/pg19 (_chroot_tarball_source), with no
# debian/ directory; BTJIT_CHROOT_SOURCE_VERSION says which.
chroot_server_source() {
	local name=$1 suite m version use dir dl cache t0 binds
	_chroot_check_name "${1:-}"
	suite=$(chroot_suite "$name")
	m=$(chroot_pg_major "$name")
	version=$(chroot_exec "$name" dpkg-query -W -f='${Version}' "postgresql-$m") ||
		btjit_die "postgresql-$m is not installed in the $suite chroot (chroot_ensure $name)"
	if [[ $suite == experimental ]]; then
		_chroot_tarball_source "$suite" "$m"
		return 0
	fi
	cache=${BTJIT_CACHE_DIR:-/var/cache/btree_jit}
	mkdir -p "$cache"
	for use in "$version" "${BTJIT_CHROOT_SOURCE_FALLBACK:-${_BTJIT_CHROOT_SOURCE_FALLBACK[$suite]:-}}"; do
		[[ -n $use ]] || continue
		dir=$cache/postgresql-$m-$use
		if [[ -f $dir/.btree_jit-complete ]]; then
			BTJIT_CHROOT_SOURCE_DIR=$dir
			BTJIT_CHROOT_SOURCE_VERSION=$use
			return 0
		fi
	done
	t0=$(date +%s.%N)
	dl=$(mktemp -d "$cache/.srcdl.XXXXXX")
	cluster_on_exit "rm -rf '$dl'"
	chmod 755 "$dl"
	binds=${_btjit_chroot_binds[$suite]:-}
	chroot_bind "$name" "$dl" /srcdl
	_chroot_apt_update "$name"
	use=$version
	if ! chroot_run "$name" sh -c "cd /srcdl && apt-get -q -o APT::Sandbox::User=root source --download-only postgresql-$m=$version" \
		>"$dl.log" 2>&1; then
		use=${BTJIT_CHROOT_SOURCE_FALLBACK:-${_BTJIT_CHROOT_SOURCE_FALLBACK[$suite]:-}}
		[[ -n $use ]] || {
			cat "$dl.log" >&2
			btjit_die "apt-get source postgresql-$m=$version failed in the $suite chroot, and no fallback version is known"
		}
		btjit_log "source of postgresql-$m $version is not in the archive; using $use's instead"
		rm -rf "${dl:?}"/*
		_chroot_fetch_dsc "$name" "postgresql-$m" "$use" "$dl" ||
			btjit_die "could not download the source of postgresql-$m $use from the pool"
	fi
	rm -f "$dl.log"
	chroot_run "$name" sh -c 'cd /srcdl && dpkg-source -x ./*.dsc /srcdl/src' >"$dl/unpack.log" 2>&1 || {
		cat "$dl/unpack.log" >&2
		btjit_die "dpkg-source -x failed for postgresql-$m $use"
	}
	# the server (user postgres) reads the suite's data files
	chmod -R a+rX "$dl/src"
	dir=$cache/postgresql-$m-$use
	rm -rf "$dir"
	mv "$dl/src" "$dir"
	touch "$dir/.btree_jit-complete"
	rm -rf "$dl"
	_btjit_chroot_binds[$suite]=$binds
	BTJIT_CHROOT_SOURCE_DIR=$dir
	BTJIT_CHROOT_SOURCE_VERSION=$use
	btjit_log "source of postgresql-$m $use in $dir ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'))"
}

# --- leftovers ----------------------------------------------------------------

# Detach anything mounted under DIR in the host's namespace.  chroot_run
# never mounts there; this is for a mount made by hand (or by an older
# script) so that rm -rf of a chroot can never descend into /dev or /proc.
_chroot_detach_leftovers() {
	local dir=$1 m
	# deepest first
	while read -r m; do
		btjit_log "detaching leftover mount $m"
		umount -l "$m" || true
	done < <(awk -v d="$dir/" 'index($2 "/", d) == 1 { print $2 }' /proc/self/mounts | sort -r)
}

# --- command line ---------------------------------------------------------------

_chroot_main() {
	local cmd=${1:-}
	shift || true
	case $cmd in
	ensure) chroot_ensure "$@" ;;
	run) chroot_run "$@" ;;
	shell) chroot_shell "$@" ;;
	dir) chroot_dir "$@" ;;
	make-vars) chroot_make_vars "$@" ;;
	info) cat "$(chroot_dir "$1")/$_BTJIT_CHROOT_MARKER" ;;
	source)
		chroot_server_source "$@"
		echo "$BTJIT_CHROOT_SOURCE_DIR $BTJIT_CHROOT_SOURCE_VERSION"
		;;
	*)
		echo "usage: $0 ensure|run|shell|dir|make-vars|info|source NAME [CMD...]   (NAME: 17, 18, 19, trixie, sid, experimental)" >&2
		return 2
		;;
	esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	_chroot_main "$@"
fi
