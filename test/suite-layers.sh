#!/bin/bash
# test/suite-layers.sh - the source tree's structure, checked on the built
# objects and the sources (src/README, "The layers"):
#   links      no two object files reference each other's symbols both
#              ways, no longer cycle, no reference from a lower layer to a
#              higher one, and the compiler library references nothing of
#              the module (test/lib/link_cycles.py, over nm)
#   headers    no project header reaches every C file, and no header
#              includes one of a higher layer (test/lib/include_reach.py)
#   lengths    no function over 120 lines but the one-switch functions
#              (flow_step), in src/ and the template (llvm-ir/); an allowed
#              one must be one switch (test/lib/function_lengths.py)
#   binpatch   no nbtree function named anywhere in src/binpatch/: the
#              analysis is told names and addresses by the locator
#              (src/locate/), whose policy they are
# Builds the module first if it is not built (test/run has built it).
# Prints "N passed, M failed"; exits non-zero on any failure.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}
PY=$(command -v python3) || { echo "suite-layers: python3 not found"; exit 1; }

make -s -C "$root" PG_CONFIG="$PG_CONFIG" >/dev/null ||
	{ echo "suite-layers: build failed"; echo "0 passed, 1 failed"; exit 1; }

# shellcheck source=lib/check.sh
source "$root/test/lib/check.sh"

check "links: no cycle, no upward reference" \
	"$PY" "$root/test/lib/link_cycles.py" "$root"
check "headers: none everywhere, none upward" \
	"$PY" "$root/test/lib/include_reach.py" "$root"
check "lengths: no function over 120 lines but the one-switch ones" \
	"$PY" "$root/test/lib/function_lengths.py" "$root" --list 5 \
	--allow flow_step
nbtree_in_binpatch=$(grep -rnoE '\b_bt_[a-z_]+|\bnbt[a-z]+\.c\b' \
	--include='*.c' --include='*.h' "$root/src/binpatch" || true)
if [[ -z $nbtree_in_binpatch ]]; then
	ok "binpatch: names no nbtree function"
else
	bad "binpatch: names no nbtree function" "$nbtree_in_binpatch"
fi
summary
