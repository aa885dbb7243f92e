# test/lib/check.sh - the assertions every test suite uses (bash; source
# it, set -euo pipefail is fine).  It counts passes and failures and prints
# the suite's last line:
#
#   ok WHAT                  count a pass:      "ok   - WHAT"
#   bad WHAT [DETAIL]        count a failure:   "FAIL - WHAT", then the first
#                            20 lines of DETAIL indented; summary lists it again
#   check WHAT CMD...        run CMD: exit status 0 passes, anything else fails
#   check_rc WHAT CMD...     check, returning 1 when CMD failed (0 when it
#                            passed), for `check_rc ... || return 1` in a
#                            function; check itself returns 0 either way,
#                            so a bare check does not end a set -e suite
#   expect_eq WHAT GOT WANT  passes when the strings GOT and WANT are equal,
#                            else fails showing both
#   eq GOT WANT              a command for check: true when GOT == WANT, else
#                            prints "got '...', want '...'" to stderr and is
#                            false (check "what" eq "$got" want)
#   wait_until SECS CMD...   run CMD every 0.2 s until it succeeds, for up
#                            to SECS seconds (false if it never did): a
#                            deadline, not a count of tries, so that a busy
#                            machine only makes a test wait longer
#   summary                  the failed checks listed again, then
#                            "N passed, M failed"; returns 1 on any failure,
#                            so a suite ends with `summary` (its exit status)
#
# check_passed and check_failed hold the counts (e.g. for an exit hook that
# keeps files of a failed run: [[ $check_failed -gt 0 ]]).

if [[ -n ${_BTJIT_CHECK_SH:-} ]]; then
	return 0
fi
_BTJIT_CHECK_SH=1

check_passed=0
check_failed=0
_check_failed_list=()

ok() {
	check_passed=$((check_passed + 1))
	printf 'ok   - %s\n' "$1"
}

bad() {
	check_failed=$((check_failed + 1))
	_check_failed_list+=("$1")
	printf 'FAIL - %s\n' "$1"
	if [[ -n ${2:-} ]]; then
		printf '%s\n' "$2" | head -n 20 | sed 's/^/       /'
	fi
}

check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

check_rc() {
	local what=$1
	shift
	if "$@"; then
		ok "$what"
	else
		bad "$what"
		return 1
	fi
}

expect_eq() {
	if [[ "$2" == "$3" ]]; then
		ok "$1"
	else
		bad "$1" "got:  $2
want: $3"
	fi
}

eq() {
	[[ $1 == "$2" ]] || {
		echo "       got '$1', want '$2'" >&2
		return 1
	}
}

wait_until() {
	local deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[[ $(date +%s) -ge $deadline ]] && return 1
		sleep 0.2
	done
}

summary() {
	if [[ $check_failed -gt 0 ]]; then
		echo
		echo "failed checks:"
		printf '  - %s\n' "${_check_failed_list[@]}"
	fi
	echo "$check_passed passed, $check_failed failed"
	[[ $check_failed -eq 0 ]]
}
