#!/bin/bash
# test/deps.sh - install everything btree_jit needs to build, test and
# benchmark on Debian 12 (bookworm), as root.  Idempotent: when everything is
# present it only runs dpkg-query and exits within a second; apt-get (and its
# one `update`) runs only when something is missing.
#
# The one subtle rule: postgresql-server-dev-15 must be EXACTLY the version
# of the installed server.  The module is compiled against the headers and
# patches binary code of the running postgres, whose layout is only known to
# match the headers of the same build.  So:
#   - postgresql-15 installed at V        -> postgresql-server-dev-15=V
#   - only postgresql-server-dev-15 at W  -> postgresql-15=W
#   - neither                             -> both at the archive's candidate
# The machine's apt configuration is never edited.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

[[ $(id -u) -eq 0 ]] || { echo "test/deps.sh: must run as root (apt-get install)" >&2; exit 1; }

# Packages whose version does not matter to us.
plain_pkgs=(
	clang-14 llvm-14-dev       # templates -> bitcode, ORC JIT (the LLVM the server's JIT uses)
	libzydis-dev               # disassembler used to find _bt_binsrch
	libicu-dev                 # the server headers' utils/pg_locale.h includes ICU's
	make gcc g++               # PGXS build, regress.so
	dpkg-dev                   # apt-get source / dpkg-source for the server's regression suite
	valgrind                   # memory checking
	linux-perf                 # instruction counts in benchmarks
	python3                    # test and bench helpers
	util-linux                 # runuser: clusters run as the postgres user
	strace                     # suite-trust: the object cache's fsyncs and rename
	procps                     # pgrep: suite-stress finds the compile worker's child
	bzip2 xz-utils             # unpacking the server's Debian source (.orig.tar.bz2, .debian.tar.xz)
	debhelper build-essential  # the Debian package (test/suite-package.sh)
)

# installed_version PKG -> version if installed ("ii"), else empty
installed_version() {
	dpkg-query -W -f='${db:Status-Abbrev} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "ii" { print $2 }' || true
}

apt_updated=0
apt_update_once() {
	if [[ $apt_updated == 0 ]]; then
		echo "test/deps.sh: apt-get update" >&2
		apt-get -q update
		apt_updated=1
	fi
}

apt_install() {
	echo "test/deps.sh: apt-get install $*" >&2
	# Lock timeout: unattended-upgrades may hold the dpkg lock on a fresh VM.
	apt-get -q -y -o DPkg::Lock::Timeout=600 --no-install-recommends \
		--allow-downgrades install "$@"
}

candidate_version() {
	apt-cache policy "$1" | awk '$1 == "Candidate:" { print $2 }'
}

# --- PostgreSQL: server, client and server-dev at one version -------------
server_v=$(installed_version postgresql-15)
dev_v=$(installed_version postgresql-server-dev-15)
client_v=$(installed_version postgresql-client-15)
fresh_server=0

want_v=""
if [[ -n $server_v ]]; then
	want_v=$server_v
elif [[ -n $dev_v ]]; then
	want_v=$dev_v
fi

pg_pkgs=()
if [[ -z $want_v ]]; then
	apt_update_once
	want_v=$(candidate_version postgresql-15)
	if [[ -z $want_v || $want_v == "(none)" ]]; then
		echo "test/deps.sh: no installable postgresql-15 in the configured archive" >&2
		exit 1
	fi
fi
[[ $server_v == "$want_v" ]] || pg_pkgs+=("postgresql-15=$want_v")
[[ $client_v == "$want_v" ]] || pg_pkgs+=("postgresql-client-15=$want_v")
[[ $dev_v == "$want_v" ]] || pg_pkgs+=("postgresql-server-dev-15=$want_v")
# No server before this run: postgresql-common will create 15/main below.
[[ -n $server_v ]] || fresh_server=1

missing=()
for p in "${plain_pkgs[@]}"; do
	[[ -n $(installed_version "$p") ]] || missing+=("$p")
done

# postgresql-server-dev-all (pg_buildext, dh --with pgxs_loop: the Debian
# package) must be exactly the installed postgresql-common's version, or apt
# would upgrade postgresql-common for it; installed after the server, which
# brings postgresql-common on a fresh machine.
need_dev_all=0
[[ -n $(installed_version postgresql-server-dev-all) ]] || need_dev_all=1

if [[ ${#pg_pkgs[@]} -eq 0 && ${#missing[@]} -eq 0 && $need_dev_all == 0 ]]; then
	echo "test/deps.sh: all dependencies present (postgresql-15 $want_v)"
	exit 0
fi

apt_update_once
if [[ ${#pg_pkgs[@]} -gt 0 ]]; then
	# Install server, client and dev in one transaction so apt cannot pick
	# a newer dev package than the server (or upgrade the server under us).
	if ! apt_install "${pg_pkgs[@]}"; then
		echo "test/deps.sh: could not install ${pg_pkgs[*]}." >&2
		echo "  The installed server is $want_v; the archive must still carry the" >&2
		echo "  matching postgresql-server-dev-15 (apt-cache policy postgresql-server-dev-15)." >&2
		exit 1
	fi
fi
if [[ ${#missing[@]} -gt 0 ]]; then
	apt_install "${missing[@]}"
fi
if [[ $need_dev_all == 1 ]]; then
	common_v=$(installed_version postgresql-common)
	if ! apt_install "postgresql-server-dev-all=$common_v"; then
		echo "test/deps.sh: could not install postgresql-server-dev-all=$common_v" >&2
		echo "  (it must match the installed postgresql-common; apt-cache policy postgresql-server-dev-all)" >&2
		exit 1
	fi
fi

# postgresql-common creates and starts a default cluster 15/main (port 5432)
# when the server package is first installed.  We never use it (our clusters
# have private sockets and ports), but a running idle server is noise for the
# benchmarks, so stop it if this run is what created it.  Nothing else about
# it is changed.
if [[ $fresh_server == 1 ]] && command -v pg_ctlcluster >/dev/null &&
	pg_lsclusters -h 2>/dev/null | awk '$1 == "15" && $2 == "main" && $4 == "online" { f = 1 } END { exit !f }'; then
	echo "test/deps.sh: stopping the freshly created default cluster 15/main" >&2
	pg_ctlcluster 15 main stop || true
fi

# Check what we promised.
server_v=$(installed_version postgresql-15)
dev_v=$(installed_version postgresql-server-dev-15)
if [[ -z $server_v || $server_v != "$dev_v" ]]; then
	echo "test/deps.sh: postgresql-15 ($server_v) and postgresql-server-dev-15 ($dev_v) differ" >&2
	exit 1
fi
for p in "${plain_pkgs[@]}" postgresql-server-dev-all; do
	[[ -n $(installed_version "$p") ]] || { echo "test/deps.sh: $p did not install" >&2; exit 1; }
done
echo "test/deps.sh: dependencies installed (postgresql-15 $server_v)"
