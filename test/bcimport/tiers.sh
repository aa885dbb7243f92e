#!/bin/bash
# test/bcimport/tiers.sh - which comparison procs of the server's B-tree
# operator classes are compared inline (a hand-written kind, keyshape.c),
# imported from the server's bitcode (bcimport.c's rules, applied by
# test_bcimport --server to the installed server's bitcode), or called, and
# why.  Starts a throwaway cluster of the installed server (PG_CONFIG), so
# run it where the module is built and installed (e.g. in a chroot):
#
#   make test/bcimport/test_bcimport && bash test/bcimport/tiers.sh
#
# Prints one line per proc (tier, proc, language/symbol, verdict) and a
# count per tier.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/cluster.sh
source "$here/../lib/cluster.sh"
root=$(cd "$here/../.." && pwd)

work=$(mktemp -d)
cluster_on_exit "rm -rf '$work'"
cluster_start ""
exports=$work/exports.txt
# what dlsym() finds in the server: its own exports and its libraries'
{
	nm -D --defined-only "$(pg_bindir)/postgres"
	ldd "$(pg_bindir)/postgres" | awk '$3 ~ /^\// {print $3}' |
		while read -r lib; do nm -D --defined-only "$lib"; done
} | awk 'NF >= 3 {sub(/@.*/, "", $3); print $3}' | sort -u >"$exports"
chmod a+r "$exports"

# the procs with a hand-written inline kind: keyshape.c's table
inline_names=$(grep -o '{F_[A-Z0-9_]*' "$root/src/runtime/keyshape.c" | sed 's/{F_//' | sort -u | tr '\n' ' ')

# every BTORDER_PROC (support function 1) of a btree operator family
psql_as -At -F '|' -d postgres -c "
  SELECT DISTINCT p.oid, p.proname, l.lanname, p.prosrc
    FROM pg_amproc ap
    JOIN pg_opfamily f ON f.oid = ap.amprocfamily
    JOIN pg_am a ON a.oid = f.opfmethod AND a.amname = 'btree'
    JOIN pg_proc p ON p.oid = ap.amproc
    JOIN pg_language l ON l.oid = p.prolang
   WHERE ap.amprocnum = 1
   ORDER BY p.proname" >"$work/procs.txt.tmp"
mv "$work/procs.txt.tmp" "$work/procs.txt"
cluster_stop

internal=()
while IFS='|' read -r oid proname lang prosrc; do
	[[ $lang == internal ]] && internal+=("$prosrc")
done <"$work/procs.txt"
"$root/test/bcimport/test_bcimport" --server "$(pg_pkglibdir)/bitcode" "$exports" \
	"${internal[@]}" >"$work/verdicts.txt"

n_inline=0 n_bitcode=0 n_called=0
while IFS='|' read -r oid proname lang prosrc; do
	upper=${proname^^}
	if [[ " $inline_names " == *" $upper "* ]]; then
		tier=inline
		why="hand-written kind (keyshape.c)"
		# collatable procs are inline only in C/POSIX collations
		case $proname in
			bttextcmp | bpcharcmp | btnamecmp | btnametextcmp | bttextnamecmp)
				v=$(grep -m1 "^$prosrc " "$work/verdicts.txt" || true)
				if [[ $v == "$prosrc bitcode"* ]]; then
					why="$why in C/POSIX; other collations: bitcode"
				else
					why="$why in C/POSIX; other collations: called, ${v#"$prosrc refused "}"
				fi
				;;
		esac
		n_inline=$((n_inline + 1))
	elif [[ $lang != internal ]]; then
		tier=called
		why="language $lang, not a built-in function"
		n_called=$((n_called + 1))
	else
		v=$(grep -m1 "^$prosrc " "$work/verdicts.txt" || true)
		if [[ $v == "$prosrc bitcode"* ]]; then
			tier=bitcode
			why=${v#"$prosrc bitcode "}
			why="$why instructions"
			n_bitcode=$((n_bitcode + 1))
		else
			tier=called
			why=${v#"$prosrc refused "}
			n_called=$((n_called + 1))
		fi
	fi
	printf '%-8s %-28s %s\n' "$tier" "$proname" "$why"
done <"$work/procs.txt"
echo "inline $n_inline, bitcode $n_bitcode, called $n_called"
