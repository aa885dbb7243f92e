#!/usr/bin/env python3
"""test/lib/fingerprint.py - fingerprints of the server functions the module
reproduces, and their check against src/include/mirrorlist.h.

A fingerprint is the first 16 hex digits of the SHA-256 of a function's
definition in a source tree (from the line that starts with its name to the
closing brace in column 0), with comments removed and every run of white
space made one space: a change of its code changes it, a change of its
comments or layout does not.

  fingerprint.py print SRCDIR FILE FUNCTION...    print the fingerprints
  fingerprint.py check MAJOR SRCDIR [MIRRORLIST]  compare every BTJIT_MIRROR
                                                  row of MAJOR with SRCDIR's

check prints one line per function and exits 1, naming each function whose
fingerprint differs or that is missing, if any does.
"""
import hashlib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LIST = os.path.join(HERE, "..", "..", "src", "include", "mirrorlist.h")


def strip_comments(text):
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def definition(path, function):
    """The text of FUNCTION's definition in PATH, or None."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    start = re.compile(r"^" + re.escape(function) + r"\(")
    for i, line in enumerate(lines):
        if not start.match(line):
            continue
        # a prototype ends with ";" before any body opens
        for j in range(i, len(lines)):
            if lines[j].startswith("{"):
                break
            if lines[j].rstrip().endswith(";"):
                j = None
                break
        if j is None:
            continue
        for k in range(j, len(lines)):
            if lines[k].startswith("}"):
                return "\n".join(lines[i:k + 1])
    return None


def fingerprint(path, function):
    text = definition(path, function)
    if text is None:
        return None
    norm = " ".join(strip_comments(text).split())
    return hashlib.sha256(norm.encode()).hexdigest()[:16]


ROW = re.compile(r'^BTJIT_MIRROR\(\s*(\w+)\s*,\s*(\d+)\s*,\s*"([^"]+)"\s*,\s*"([^"]+)"\s*,\s*"([0-9a-f]+)"\s*\)')


def mirror_rows(listpath, major):
    rows = []
    with open(listpath) as f:
        for line in f:
            m = ROW.match(line.strip())
            if m and int(m.group(2)) == major:
                rows.append((m.group(1), m.group(3), m.group(4), m.group(5)))
    return rows


def main(argv):
    if len(argv) >= 4 and argv[1] == "print":
        srcdir, file = argv[2], argv[3]
        status = 0
        for fn in argv[4:]:
            fp = fingerprint(os.path.join(srcdir, file), fn)
            print(f"{fn}\t{fp or 'MISSING'}")
            status |= fp is None
        return status
    if len(argv) in (4, 5) and argv[1] == "check":
        major, srcdir = int(argv[2]), argv[3]
        listpath = argv[4] if len(argv) == 5 else DEFAULT_LIST
        rows = mirror_rows(listpath, major)
        if not rows:
            print(f"no BTJIT_MIRROR rows for PostgreSQL {major} in {listpath}")
            return 1
        changed = []
        for target, file, fn, want in rows:
            got = fingerprint(os.path.join(srcdir, file), fn)
            if got == want:
                verdict = "same"
            else:
                verdict = "MISSING" if got is None else f"CHANGED (now {got})"
                changed.append(f"{fn} ({target})")
            print(f"  {target:<10} {fn:<24} {file:<40} {want} {verdict}")
        if changed:
            print(f"changed since the module's copies were checked: {', '.join(changed)}")
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
