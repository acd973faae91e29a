#!/bin/bash
# tests/test_man.sh SRCDIR PAGE... - the man pages render without a warning from man(1), each has its
# NAME and SEE ALSO sections, the tools' pages a SYNOPSIS and OPTIONS, and uvmalloc(7) documents
# every UVM_* setting of the option table.
set -euo pipefail
src=$1
shift
fail() { echo "FAIL: $*"; exit 1; }
for page in "$@"; do
	name=$(basename "$page")
	err=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || fail "man -l $name failed: $err"
	[ -z "$err" ] || fail "man -l $name warns: $err"
	text=$(MANWIDTH=80 man -l "$page" 2>/dev/null)
	for section in NAME "SEE ALSO"; do
		grep -q "^$section" <<<"$text" || fail "$name has no $section section"
	done
	case $name in *.1)
		for section in SYNOPSIS OPTIONS; do grep -q "^$section" <<<"$text" || fail "$name has no $section"; done ;;
	esac
	case $name in uvmalloc.7)
		for setting in $(grep -o '"UVM_[A-Z][A-Z_]*"' "$src/lib/base/options.c" | tr -d '"'); do
			grep -q "^ *$setting " <<<"$text" || fail "uvmalloc(7) does not document $setting"
		done ;;
	esac
	echo "man: $name ok"
done
