# test/lib/steps.sh - the steps of a suite that runs several checks in a
# row and reports each (the version matrix inside a chroot, the zoo's
# checks of one build): a step's output is shown and kept, and its exit
# status and time recorded for the suite's table.  Source it, then set
#   STEP_LABEL    what the steps are of, in the headers ("PostgreSQL 18.6")
#   STEP_LOGDIR   where NAME.log goes
#   STEP_RESULT   the KEY=VALUE file NAME_rc and NAME_secs are appended to

# step_run NAME CMD... - run CMD (stdin closed) as step NAME; returns its
# exit status
step_run() {
	local name=$1 rc=0 t0=$SECONDS
	shift
	echo
	echo "=== [$STEP_LABEL] $name: $* ==="
	set +e
	"$@" </dev/null 2>&1 | tee "$STEP_LOGDIR/$name.log"
	rc=${PIPESTATUS[0]}
	set -e
	echo "${name}_rc=$rc" >>"$STEP_RESULT"
	echo "${name}_secs=$((SECONDS - t0))" >>"$STEP_RESULT"
	echo "--- [$STEP_LABEL] $name: exit $rc ($((SECONDS - t0)) s)"
	return "$rc"
}
