#!/bin/bash
# test/suite-stress.sh - btree_jit under concurrency, DDL, faults and bad
# input, on a throwaway cluster with the module preloaded and
# btree_jit.verify = on everywhere (a compiled search that differs from the
# server's is an ERROR in whichever session hits it).
#
#   test/suite-stress.sh [--minutes M] [--seed N] [SECTION...]
#   test/suite-stress.sh --list
#
#   --minutes M  length of the concurrency phase (default 0.75, or
#                $BTJIT_STRESS_MINUTES)
#   --seed N     seed for the random choices of setup (default: new, printed)
#   SECTION      run only these sections, by number (3, 03) or name
#                (memory, 03-memory); default every section
#   --list       the sections, one a line
#
# Each section is a file test/stress/NN-name.sh (its header says what it
# checks), sourced in order by this script after test/stress/lib.sh (the
# shared set-up and helpers):
#   01-bad-input       every SQL function and GUC given bad input: a clear
#                      error with the expected SQLSTATE, never a crash
#   02-templates       a missing, garbage, truncated or foreign bitcode
#                      template; faults inside the LLVM error guard
#   03-memory          one backend, 2000 indexes, hundreds of key shapes:
#                      memory stays bounded, max_signatures holds
#   04-cancel          statement_timeout, pg_cancel_backend and
#                      pg_terminate_backend during compile-heavy sessions
#   05-object-cache    corrupted, truncated and swapped cached objects
#   06-compile-worker  (compile_mode = background) no query waits; a killed
#                      compile child, a failing shape, an unwritable cache
#   07-concurrency     readers, writers, pgbench -S and a DDL session for
#                      --minutes; errors classified
#   08-final           amcheck, on/off comparison, server log and
#                      postmaster start time of the first cluster
#   09-worker-cluster  a second cluster (compile_queue_size = 1): a full
#                      queue, the worker killed, warm start
#   10-compile-queue   fresh clusters (verify off): a continuously searched
#                      index is compiled before shapes nobody searches any
#                      more, within three compiles of its first search
# Sections 01-08 share the first cluster, in that order; a section's
# "# needs:" header line names earlier sections whose tables it uses (they
# run first when it is picked), and 08-final runs after any section of the
# first cluster.  09 and 10 start their own clusters.
#
# Add a section: a file test/stress/NN-name.sh with a header comment saying
# what it checks, "# cluster: first" (or "own" when it starts its own
# cluster) and, if it uses another section's tables, "# needs: NN ...";
# assertions with test/lib/check.sh's ok/bad/check/expect_eq.
#
# Ends with "N passed, M failed"; exit status 1 on any failure.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/cluster.sh
source "$here/lib/cluster.sh"
# shellcheck source=differential/common.sh
source "$here/differential/common.sh"
# shellcheck source=stress/lib.sh
source "$here/stress/lib.sh"

all_sections=("$here"/stress/[0-9][0-9]-*.sh)
section_name() { basename "$1" .sh; }
# header_field FILE KEY -> the value of the section's "# KEY: ..." line
header_field() { sed -n "s/^# $2: //p" "$1" | head -n 1; }

minutes=${BTJIT_STRESS_MINUTES:-0.75}
seed=${BTJIT_STRESS_SEED:-}
picked=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--minutes) minutes=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--list)
		for f in "${all_sections[@]}"; do section_name "$f"; done
		exit 0
		;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) btjit_die "unknown argument $1 (see --help)" ;;
	*) picked+=("$1"); shift ;;
	esac
done

# section_file SELECTOR -> the section's file (number or name)
section_file() {
	local f n sel=$1
	for f in "${all_sections[@]}"; do
		n=$(section_name "$f")
		if [[ $sel =~ ^[0-9]+$ && $((10#$sel)) == $((10#${n%%-*})) ]] ||
			[[ $sel == "$n" || $sel == "${n#*-}" ]]; then
			echo "$f"
			return 0
		fi
	done
	btjit_die "no stress section '$sel' (sections: $(for f in "${all_sections[@]}"; do printf '%s ' "$(section_name "$f")"; done))"
}

# The sections to run, in file order: all of them, or the picked ones
# with the earlier sections they need and, after a section of the first
# cluster, its final checks.
declare -A run_it=()
if [[ ${#picked[@]} -eq 0 ]]; then
	for f in "${all_sections[@]}"; do run_it[$f]=1; done
else
	for sel in "${picked[@]}"; do
		f=$(section_file "$sel")
		run_it[$f]=1
		for dep in $(header_field "$f" needs); do
			run_it[$(section_file "$dep")]=1
		done
	done
	for f in "${!run_it[@]}"; do
		if [[ $(header_field "$f" cluster) == first* ]]; then
			for g in "${all_sections[@]}"; do
				[[ $(header_field "$g" cluster) == *final* ]] && run_it[$g]=1
			done
			break
		fi
	done
fi
sections=()
first_cluster=0
for f in "${all_sections[@]}"; do
	[[ -n ${run_it[$f]:-} ]] || continue
	sections+=("$f")
	[[ $(header_field "$f" cluster) == first* ]] && first_cluster=1
done

if [[ -z $seed ]]; then
	seed=$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 ))
fi
fseed=$(awk -v s="$seed" 'BEGIN { printf "%.6f", (s % 1000000) / 1000000 }')
conc_secs=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')

t_start=$(now)
echo "== suite-stress: seed $seed, concurrency phase ${conc_secs}s (replay: test/suite-stress.sh --seed $seed --minutes $minutes${picked[*]:+ ${picked[*]}})"
if [[ ${#picked[@]} -gt 0 ]]; then
	echo "== sections: $(for f in "${sections[@]}"; do printf '%s ' "$(section_name "$f")"; done)"
fi
[[ -f $(pg_pkglibdir)/btree_jit.so ]] || build_and_install

if [[ $first_cluster == 1 ]]; then
	stress_first_cluster
fi
# (the sections run in this shell: they share the cluster, its tables and
# variables, and their loops may reuse any name but _section)
for _section in "${sections[@]}"; do
	echo
	# shellcheck source=/dev/null
	source "$_section"
done

echo "wall time $(elapsed "$t_start")s (seed $seed)"
summary
