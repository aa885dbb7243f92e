# test/lib/cluster.sh - throwaway PostgreSQL clusters for btree_jit's test and
# benchmark drivers.  Source it from bash (set -euo pipefail is fine):
#
#   source "$(dirname "$0")/lib/cluster.sh"
#   cluster_start "" "work_mem = '64MB'"     # "" = make a temp dir for it
#   psql_as -c 'SELECT 1'
#   cluster_stop
#
# Why this exists: the module only works when preloaded into a postmaster,
# PostgreSQL refuses to run as root (we are root), and tests must never touch
# the machine's own clusters (Debian's 15/main on port 5432).  So every
# cluster here is initdb'ed as the `postgres` OS user into a private temp dir,
# listens only on a unix socket inside that dir, on a port nobody else uses,
# and is torn down by an EXIT/INT/TERM trap even when the caller fails.
#
# Environment knobs (all optional):
#   PG_CONFIG       pg_config of the target server
#                   (default /usr/lib/postgresql/15/bin/pg_config)
#   BTJIT_PRELOAD   1 (default): shared_preload_libraries = 'btree_jit';
#                   0: preload nothing.  Extra conf lines given to
#                   cluster_start come last, so they override this too.
#   BTJIT_UNCHECKED_RELEASE  btree_jit.unchecked_release (default module:
#                   the tests and benchmarks run the module's copies of
#                   server code on any point release, where verify compares
#                   them with the server's own; test/suite-fingerprints.sh
#                   tests the default, server)
#   BTJIT_LOCALE    initdb --locale (default C: byte-order text comparison,
#                   deterministic across machines; text keys are not
#                   specialised yet and always use the server's own search)
#   BTJIT_TCP       1: also listen on 127.0.0.1 (for tools that need TCP)
#   BTJIT_TMP       parent of the temp dirs (default /tmp; must be
#                   traversable by the postgres user)
#   BTJIT_KEEP      1: keep the cluster dir after teardown (debugging)
#   BTJIT_FAILED_LOG_DIR  where server logs of failed runs are copied
#                   (default /tmp/btree_jit-failed-logs)
#
# After cluster_start these are exported for psql/pgbench/pg_regress:
#   PGHOST (the socket dir), PGPORT, PGUSER=postgres, PGDATABASE=postgres,
#   PGDATA, BTJIT_CLUSTER_DIR, BTJIT_CLUSTER_LOG (the server log).
#
# One cluster at a time per shell: cluster_stop before the next cluster_start.

if [[ -n ${_BTJIT_CLUSTER_SH:-} ]]; then
	return 0
fi
_BTJIT_CLUSTER_SH=1

BTJIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ -z ${PG_CONFIG:-} ]]; then
	if [[ -x /usr/lib/postgresql/15/bin/pg_config ]]; then
		PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
	else
		PG_CONFIG=pg_config
	fi
fi
export PG_CONFIG

BTJIT_OS_USER=${BTJIT_OS_USER:-postgres}
_BTJIT_PORT_CLAIMS=/tmp/btree_jit-ports
_btjit_port_claim=""
_btjit_cluster_owned_dir=""
_btjit_exit_hooks=()

btjit_log() { printf '%s\n' "[$(date +%H:%M:%S)] $*" >&2; }
btjit_die() { printf '%s\n' "ERROR: $*" >&2; exit 1; }

# Directories of the installed server (evaluated lazily: on a fresh machine
# this file may be sourced before test/deps.sh has installed anything).
pg_bindir() { "$PG_CONFIG" --bindir; }
pg_pkglibdir() { "$PG_CONFIG" --pkglibdir; }
pg_regress_bin() { echo "$(pg_pkglibdir)/pgxs/src/test/regress/pg_regress"; }

# Run a command as the postgres OS user, keeping our PG* environment.
# runuser (util-linux) needs no PAM password and keeps the environment apart
# from HOME/SHELL/USER/LOGNAME.
as_postgres() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u "$BTJIT_OS_USER" -- "$@"
	else
		"$@"
	fi
}

# psql as postgres against the current cluster: no psqlrc, stop on error.
psql_as() {
	as_postgres "$(pg_bindir)/psql" -X -v ON_ERROR_STOP=1 "$@"
}

# Make sure the postgres OS user exists (Debian's postgresql-common creates
# it; a machine without the packages may not have it).
ensure_os_user() {
	if ! id "$BTJIT_OS_USER" >/dev/null 2>&1; then
		[[ $(id -u) -eq 0 ]] || btjit_die "OS user $BTJIT_OS_USER is missing and we are not root"
		btjit_log "creating OS user $BTJIT_OS_USER"
		useradd --system --user-group --home-dir /var/lib/postgresql \
			--shell /bin/bash "$BTJIT_OS_USER"
	fi
}

# --- ports -----------------------------------------------------------------
# The server listens only on a socket inside its own dir, so a clash would
# be harmless for the socket; still pick a port nobody uses (TCP listeners,
# sockets in the usual dirs, other clusters of ours) so that BTJIT_TCP=1 and
# humans reading `ss` or logs are never confused.  Claims are directories
# created atomically with mkdir; a claim whose owner process is gone is stale.

_btjit_tcp_port_busy() {
	local port=$1 hex f
	hex=$(printf '%04X' "$port")
	for f in /proc/net/tcp /proc/net/tcp6; do
		[[ -r $f ]] || continue
		# column 2 is local addr:port in hex, column 4 the state (0A = LISTEN)
		if awk -v p=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' "$f"; then
			return 0
		fi
	done
	return 1
}

_btjit_claim_port() {
	local port owner
	mkdir -p "$_BTJIT_PORT_CLAIMS"
	chmod 1777 "$_BTJIT_PORT_CLAIMS" 2>/dev/null || true
	for ((port = ${BTJIT_PORT_BASE:-54000}; port < ${BTJIT_PORT_BASE:-54000} + 1000; port++)); do
		if [[ -e /tmp/.s.PGSQL.$port || -e /var/run/postgresql/.s.PGSQL.$port ]]; then
			continue
		fi
		if _btjit_tcp_port_busy "$port"; then
			continue
		fi
		if ! mkdir "$_BTJIT_PORT_CLAIMS/$port" 2>/dev/null; then
			owner=$(cat "$_BTJIT_PORT_CLAIMS/$port/pid" 2>/dev/null || true)
			if [[ -n $owner ]] && kill -0 "$owner" 2>/dev/null; then
				continue
			fi
			# stale claim of a process that is gone: take it over
			rm -rf "$_BTJIT_PORT_CLAIMS/$port"
			mkdir "$_BTJIT_PORT_CLAIMS/$port" 2>/dev/null || continue
		fi
		echo $$ >"$_BTJIT_PORT_CLAIMS/$port/pid"
		_btjit_port_claim=$port
		return 0
	done
	btjit_die "no free port in ${BTJIT_PORT_BASE:-54000}..+1000"
}

_btjit_release_port() {
	if [[ -n $_btjit_port_claim ]]; then
		rm -rf "${_BTJIT_PORT_CLAIMS:?}/$_btjit_port_claim"
		_btjit_port_claim=""
	fi
}

# --- teardown --------------------------------------------------------------

# Register a command to run at exit (before the cluster is torn down).
# Callers must use this instead of their own `trap ... EXIT`, which would
# replace ours.
cluster_on_exit() {
	_btjit_exit_hooks+=("$1")
}

cluster_running() {
	[[ -n ${PGDATA:-} && -f ${PGDATA}/postmaster.pid ]] &&
		as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1
}

# Stop the server (fast, then immediate) and remove the cluster dir.
# $1 = exit status of the caller: non-zero keeps a copy of the server log
# and prints its tail.
_btjit_teardown() {
	local rc=${1:-0} keep
	if [[ -n ${PGDATA:-} && -d ${PGDATA:-} ]]; then
		if cluster_running; then
			if ! as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" -m fast -w -t 60 stop >/dev/null 2>&1; then
				btjit_log "fast shutdown failed; stopping immediately"
				as_postgres "$(pg_bindir)/pg_ctl" -D "$PGDATA" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
			fi
		fi
	fi
	if [[ $rc -ne 0 && -n ${BTJIT_CLUSTER_LOG:-} && -s ${BTJIT_CLUSTER_LOG:-} ]]; then
		keep=${BTJIT_FAILED_LOG_DIR:-/tmp/btree_jit-failed-logs}
		mkdir -p "$keep"
		keep="$keep/$(basename "$BTJIT_CLUSTER_DIR")-$(date +%Y%m%d-%H%M%S).log"
		cp "$BTJIT_CLUSTER_LOG" "$keep"
		{
			echo "---- tail of server log (full copy: $keep) ----"
			tail -n 40 "$BTJIT_CLUSTER_LOG"
			echo "---- end of server log ----"
		} >&2
	fi
	if [[ -n $_btjit_cluster_owned_dir ]]; then
		if [[ ${BTJIT_KEEP:-0} == 1 ]]; then
			btjit_log "BTJIT_KEEP=1: keeping $_btjit_cluster_owned_dir"
		else
			rm -rf "$_btjit_cluster_owned_dir"
		fi
		_btjit_cluster_owned_dir=""
	fi
	_btjit_release_port
	unset PGDATA PGHOST PGPORT BTJIT_CLUSTER_DIR BTJIT_CLUSTER_LOG
}

_btjit_run_exit_hooks() {
	local i
	for ((i = ${#_btjit_exit_hooks[@]} - 1; i >= 0; i--)); do
		eval "${_btjit_exit_hooks[i]}" || true
	done
	_btjit_exit_hooks=()
}

_btjit_on_exit() {
	local rc=$?
	trap - EXIT INT TERM
	set +e
	_btjit_run_exit_hooks
	_btjit_teardown "$rc"
	exit "$rc"
}

_btjit_on_signal() {
	local sig=$1
	trap - EXIT INT TERM
	set +e
	btjit_log "interrupted (signal $sig): tearing down"
	_btjit_run_exit_hooks
	_btjit_teardown 1
	exit $((128 + sig))
}

trap '_btjit_on_exit' EXIT
trap '_btjit_on_signal 2' INT
trap '_btjit_on_signal 15' TERM

# --- start / stop ----------------------------------------------------------

# cluster_start DIR [postgresql.conf lines...]
#   DIR: "" (or "-") makes a fresh temp dir; otherwise DIR must not exist or
#   be empty.  Either way the dir belongs to the cluster and is removed at
#   cluster_stop / exit.
cluster_start() {
	local dir=${1:-}
	shift || true
	local bindir preload line port
	if [[ -n ${BTJIT_CLUSTER_DIR:-} ]]; then
		btjit_die "cluster_start: a cluster is already running in $BTJIT_CLUSTER_DIR (cluster_stop it first)"
	fi
	ensure_os_user
	bindir=$(pg_bindir) || btjit_die "no usable pg_config ($PG_CONFIG): run test/deps.sh"

	if [[ -z $dir || $dir == - ]]; then
		mkdir -p "${BTJIT_TMP:-/tmp}"
		dir=$(mktemp -d "${BTJIT_TMP:-/tmp}/btjit-cluster.XXXXXX")
	else
		mkdir -p "$dir"
		if [[ -n $(ls -A "$dir") ]]; then
			btjit_die "cluster_start: $dir is not empty"
		fi
		dir=$(cd "$dir" && pwd)
	fi
	_btjit_cluster_owned_dir=$dir
	export BTJIT_CLUSTER_DIR=$dir
	export PGDATA=$dir/data
	export BTJIT_CLUSTER_LOG=$dir/server.log
	mkdir -p "$dir/sock"
	chown -R "$BTJIT_OS_USER:" "$dir"
	chmod 755 "$dir"

	preload=btree_jit
	if [[ ${BTJIT_PRELOAD:-1} == 0 ]]; then
		preload=""
	elif [[ ! -f $(pg_pkglibdir)/btree_jit.so ]]; then
		btjit_die "btree_jit.so is not installed in $(pg_pkglibdir) (build_and_install first, or BTJIT_PRELOAD=0)"
	fi

	# initdb: -N because fsync is pointless for throwaway data; trust auth
	# because only the socket in our private dir can reach it.
	if ! (cd "$dir" && as_postgres "$bindir/initdb" -D "$PGDATA" -U postgres \
		--auth=trust --encoding=UTF8 --locale="${BTJIT_LOCALE:-C}" \
		-N --no-instructions) >"$dir/initdb.log" 2>&1; then
		cat "$dir/initdb.log" >&2
		btjit_die "initdb failed"
	fi

	_btjit_claim_port
	port=$_btjit_port_claim
	{
		echo ""
		echo "# ---- added by test/lib/cluster.sh ----"
		echo "port = $port"
		if [[ ${BTJIT_TCP:-0} == 1 ]]; then
			echo "listen_addresses = '127.0.0.1'"
		else
			echo "listen_addresses = ''"
		fi
		echo "unix_socket_directories = '$dir/sock'"
		echo "fsync = off"
		echo "shared_preload_libraries = '$preload'"
		echo "btree_jit.unchecked_release = ${BTJIT_UNCHECKED_RELEASE:-module}"
		echo "log_line_prefix = '%m [%p] %q%a '"
		echo "lc_messages = 'C'"
		for line in "$@"; do
			echo "$line"
		done
	} >>"$PGDATA/postgresql.conf"

	if ! (cd "$dir" && as_postgres "$bindir/pg_ctl" -D "$PGDATA" -l "$BTJIT_CLUSTER_LOG" \
		-w -t 120 start) >"$dir/pg_ctl.log" 2>&1; then
		cat "$dir/pg_ctl.log" >&2
		echo "---- server log ----" >&2
		tail -n 40 "$BTJIT_CLUSTER_LOG" >&2 || true
		btjit_die "server did not start (conf extras: ${*:-none})"
	fi

	export PGHOST=$dir/sock PGPORT=$port PGUSER=postgres PGDATABASE=postgres
	if ! "$bindir/pg_isready" -q -t 30; then
		btjit_die "server started but pg_isready fails on $PGHOST:$PGPORT"
	fi
	btjit_log "cluster up: $dir port $port preload='$preload'${*:+ extra: $*}"
}

# Stop the current cluster and remove its dir.  Copy $BTJIT_CLUSTER_LOG
# first if you still need it.
cluster_stop() {
	_btjit_teardown 0
}

# --- build -------------------------------------------------------------------

# Build and install the module into the server of $PG_CONFIG (as root).
build_and_install() {
	local jobs
	jobs=$(nproc 2>/dev/null || echo 2)
	[[ -x $(command -v "$PG_CONFIG") ]] || btjit_die "pg_config not found ($PG_CONFIG): run test/deps.sh"
	btjit_log "building btree_jit in $BTJIT_ROOT with $PG_CONFIG"
	make -C "$BTJIT_ROOT" PG_CONFIG="$PG_CONFIG" -j"$jobs" ||
		btjit_die "build failed (make -C $BTJIT_ROOT)"
	make -C "$BTJIT_ROOT" PG_CONFIG="$PG_CONFIG" install ||
		btjit_die "install failed (make -C $BTJIT_ROOT install)"
	[[ -f $(pg_pkglibdir)/btree_jit.so ]] ||
		btjit_die "make install did not put btree_jit.so into $(pg_pkglibdir)"
	btjit_log "installed $(pg_pkglibdir)/btree_jit.so"
}
