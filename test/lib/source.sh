# test/lib/source.sh - the Debian source of the host's server, for the
# tests that need PostgreSQL's own files: its regression suite
# (test/server_regress.sh) and the functions the module reproduces
# (test/suite-fingerprints.sh).  Source it after test/lib/cluster.sh (it
# uses btjit_log, btjit_die and cluster_on_exit).  The chroots' servers get
# theirs from test/lib/chroot.sh (chroot_server_source).

# host_server_source PACKAGE VERSION - unpack the Debian source of PACKAGE
# (Debian's patches applied, as in the build of the binary) into
# ${BTJIT_CACHE_DIR:-/var/cache/btree_jit}/PACKAGE-VERSION, reused when
# present, and set BTJIT_HOST_SOURCE_DIR and BTJIT_HOST_SOURCE_VERSION.
# VERSION's source first (the installed release's); a
# security archive may publish a binary whose source the mirror does not
# serve (15.20 from bookworm-security: the .deb downloads, the .dsc is a
# 404), and then the newest other source of the package the private lists
# offer: the caller compares BTJIT_HOST_SOURCE_VERSION with the server's
# and decides what a source of another point release means.
host_server_source() {
	local pg_package=$1 pg_deb_version=$2 tmp opts codename v src_deb_version srcdir
	local cache_dir=${BTJIT_CACHE_DIR:-/var/cache/btree_jit}
	local -a candidates
	if [[ -f $cache_dir/$pg_package-$pg_deb_version/.btree_jit-complete ]]; then
		BTJIT_HOST_SOURCE_DIR=$cache_dir/$pg_package-$pg_deb_version
		BTJIT_HOST_SOURCE_VERSION=$pg_deb_version
		btjit_log "using cached source $BTJIT_HOST_SOURCE_DIR"
		return 0
	fi
	mkdir -p "$cache_dir"
	tmp=$(mktemp -d "$cache_dir/.fetch.XXXXXX")
	cluster_on_exit "rm -rf '$tmp'"
	mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/dl"
	# this machine's release (bookworm for 15).  In the chroots of 17 and 18
	# test/suite-versions.sh gives BTJIT_SERVER_SOURCE instead (sid's
	# os-release names testing, whose source may not be sid's version).
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[[ -n $codename ]] || btjit_die "cannot tell this machine's Debian release (/etc/os-release)"
	echo "deb-src http://deb.debian.org/debian $codename main" >"$tmp/sources.list"
	if [[ $codename != sid ]]; then
		echo "deb-src http://deb.debian.org/debian $codename-updates main" >>"$tmp/sources.list"
		echo "deb-src http://deb.debian.org/debian-security $codename-security main" >>"$tmp/sources.list"
	fi
	# Every apt path that would otherwise be the machine's (source lists,
	# lists dir, package caches) points into $tmp.  The sandbox user is root
	# because _apt cannot enter the mktemp dir; apt still checks signatures.
	opts=(-o "Dir::Etc::SourceList=$tmp/sources.list"
		-o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$tmp/lists"
		-o "Dir::Cache=$tmp/cache"
		-o "APT::Sandbox::User=root")
	apt-get -q "${opts[@]}" update >"$tmp/update.log" 2>&1 || {
		cat "$tmp/update.log" >&2
		btjit_die "apt-get update with the private deb-src list failed"
	}
	# the installed version, then every other version of the package the
	# lists name, newest first
	candidates=("$pg_deb_version")
	while read -r v; do
		[[ $v == "$pg_deb_version" ]] || candidates+=("$v")
	done < <(apt-cache "${opts[@]}" showsrc "$pg_package" 2>/dev/null |
		sed -nE 's/^Version: (.+)/\1/p' | sort -ruV)
	src_deb_version=""
	for v in "${candidates[@]}"; do
		if [[ -f $cache_dir/$pg_package-$v/.btree_jit-complete ]]; then
			rm -rf "$tmp"
			BTJIT_HOST_SOURCE_DIR=$cache_dir/$pg_package-$v
			BTJIT_HOST_SOURCE_VERSION=$v
			btjit_log "the archive does not serve the source of $pg_package=$pg_deb_version; using cached $v's"
			return 0
		fi
		btjit_log "fetching source $pg_package=$v"
		rm -rf "${tmp:?}/dl"/*
		if (cd "$tmp/dl" && apt-get -q "${opts[@]}" source --download-only "$pg_package=$v") \
			>"$tmp/source.log" 2>&1; then
			src_deb_version=$v
			break
		fi
		btjit_log "the archive does not serve the source of $pg_package=$v: $(grep -m1 -E '^E:' "$tmp/source.log" || tail -n 1 "$tmp/source.log")"
	done
	[[ -n $src_deb_version ]] || {
		cat "$tmp/source.log" >&2
		btjit_die "no source of $pg_package in the archive (tried: ${candidates[*]})"
	}
	srcdir=$cache_dir/$pg_package-$src_deb_version
	# dpkg-source applies Debian's patches, as in the build of the binary.
	(cd "$tmp/dl" && dpkg-source -x ./*.dsc "$tmp/src") >"$tmp/unpack.log" 2>&1 || {
		cat "$tmp/unpack.log" >&2
		btjit_die "dpkg-source -x failed"
	}
	# the server (user postgres) reads the suite's data files, whatever
	# root's umask was
	chmod -R a+rX "$tmp/src"
	rm -rf "$srcdir"
	mv "$tmp/src" "$srcdir"
	touch "$srcdir/.btree_jit-complete"
	rm -rf "$tmp"
	BTJIT_HOST_SOURCE_DIR=$srcdir
	BTJIT_HOST_SOURCE_VERSION=$src_deb_version
}
