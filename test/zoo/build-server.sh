#!/bin/bash
# test/zoo/build-server.sh - build one PostgreSQL server of the zoo from an
# unpacked source, with one flavor's compiler and flags, strip it as a
# distribution package does, and install it under its own prefix.  Runs
# where the build belongs (test/suite-zoo.sh calls it on the host for 15,
# in the version's chroot for 17 and 18), as root.
#
#   build-server.sh SOURCE BUILD PREFIX FLAVOR LLVM_MAJOR
#
# Only what a cluster, the module's build and its tests need is built: the
# backend and its loadable parts, libpq, initdb, pg_ctl, psql, pg_config,
# pg_isready (src/bin/scripts), pg_regress, PGXS, and contrib's amcheck,
# pageinspect and pg_prewarm.  The
# server is configured --with-llvm, as every distribution's is: the
# module's Makefile takes CLANG and LLVM's flags from PGXS, and imports
# comparison procedures from the server's bitcode (postgres.index.bc),
# which distributions ship with the JIT provider.  The provider itself
# (llvmjit.so) is not built: the module does not use it.
#
# Never the system's server: Debian's 50-per-version-dirs patch sets
# pkglibdir to /usr/lib/postgresql/NN/lib unless libdir names "postgres"
# (PREFIX must: the suite's prefixes are .../postgresql-NN-FLAVOR/...),
# and everything is installed with DESTDIR into a stage first, which must
# hold nothing outside PREFIX before it is moved there.
set -euo pipefail

[[ $# -eq 5 ]] || { echo "usage: $0 SOURCE BUILD PREFIX FLAVOR LLVM_MAJOR" >&2; exit 2; }
src=$1 build=$2 prefix=$3 flavor=$4 llvm=$5
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=flavors.sh
source "$here/flavors.sh"
zoo_flavor "$flavor" "$llvm" || { echo "build-server.sh: unknown flavor $flavor" >&2; exit 2; }
[[ $prefix == /* && $prefix == *postgres* ]] ||
	{ echo "build-server.sh: PREFIX must be absolute and name postgres ($prefix)" >&2; exit 2; }
[[ -x $src/configure ]] || { echo "build-server.sh: no configure in $src" >&2; exit 2; }

jobs=${BTJIT_ZOO_JOBS:-$(nproc)}
stage=$build.stage
rm -rf "$build" "$stage" "$prefix"
mkdir -p "$build"
cd "$build"

log() { printf '%s\n' "[$(date +%H:%M:%S)] zoo $flavor: $*"; }

log "configure ($ZOO_CC $ZOO_CFLAGS)"
"$src/configure" --prefix="$prefix" \
	--with-icu --with-llvm LLVM_CONFIG="llvm-config-$llvm" CLANG="clang-$llvm" \
	--with-system-tzdata=/usr/share/zoneinfo --without-readline \
	--enable-debug --with-extra-version=" (btree_jit zoo $flavor)" \
	CC="$ZOO_CC" CFLAGS="$ZOO_CFLAGS" LDFLAGS="$ZOO_LDFLAGS" >configure.log 2>&1 ||
	{ tail -n 40 configure.log >&2; echo "build-server.sh: configure failed" >&2; exit 1; }

# directories in build order (each one's Makefile makes what it needs
# first: generated headers, libpgport, libpq)
dirs=(src/port src/common src/backend src/backend/utils/mb/conversion_procs src/backend/snowball
	src/timezone src/include src/interfaces/libpq src/fe_utils
	src/bin/initdb src/bin/pg_ctl src/bin/psql src/bin/pg_config src/bin/scripts
	src/pl/plpgsql src/makefiles src/test/regress
	contrib/amcheck contrib/pageinspect contrib/pg_prewarm)
log "make -j$jobs (${#dirs[@]} directories)"
for d in "${dirs[@]}"; do
	make -j"$jobs" -C "$d" >>make.log 2>&1 ||
		{ tail -n 40 make.log >&2; echo "build-server.sh: make in $d failed" >&2; exit 1; }
done

log "install into a stage"
for d in "${dirs[@]}" src config; do
	target=install
	[[ $d == src ]] && target=install-local
	make -C "$d" DESTDIR="$stage" "$target" >>install.log 2>&1 ||
		{ tail -n 40 install.log >&2; echo "build-server.sh: make install in $d failed" >&2; exit 1; }
done
outside=$(cd "$stage" && find . -mindepth 1 \( -type f -o -type l \) | sed 's|^\.||' | grep -v "^$prefix/" | head -n 5 || true)
if [[ -n $outside ]]; then
	echo "build-server.sh: the install would write outside $prefix:" >&2
	echo "$outside" >&2
	exit 1
fi

# strip as dh_strip does: the debug info goes to a file of its own, kept
# in the build directory (a user's server does not have it installed)
log "strip"
mkdir -p "$build/debug"
while IFS= read -r -d '' f; do
	if [[ $(head -c 4 "$f" | od -An -c | tr -d ' ') == '177ELF' ]]; then
		objcopy --only-keep-debug "$f" "$build/debug/$(basename "$f").debug"
		strip --remove-section=.comment --remove-section=.note --strip-unneeded "$f"
	fi
done < <(find "$stage$prefix" -type f \( -perm -u+x -o -name '*.so*' \) -print0)

mkdir -p "$(dirname "$prefix")"
mv "$stage$prefix" "$prefix"
rm -rf "$stage"
{
	echo "flavor=$flavor"
	echo "description=$ZOO_DESCRIPTION"
	echo "cc=$("$ZOO_CC" --version | head -n 1)"
	echo "cflags=$ZOO_CFLAGS"
	echo "ldflags=$ZOO_LDFLAGS"
	echo "version=$("$prefix/bin/pg_config" --version)"
} >"$prefix/zoo-build.info"
log "installed in $prefix: $("$prefix/bin/postgres" --version)"
