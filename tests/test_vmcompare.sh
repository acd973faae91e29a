#!/bin/bash
# tests/test_vmcompare.sh BUILD - vmcompare's smoke run (--quick, 1 rep) on a few rows: every allocator
# that is installed gets a column, uvmalloc's cells carry a ratio to the best peer, the targets and
# scaling sections are there (with the large-block row's own target), results.json parses with a verdict per row and the SVG is well-formed.
# .ci/setup installs the three peers (the README's test command runs it), so all four must be present.
set -euo pipefail
build=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/vmcompare/vmcompare" --build "$build" --quick --reps 1 --out "$out" \
	--only "fix_size p:1 h:0,random_size,larson,realloc,large,stress,local,refill" >"$out/stdout" 2>"$out/stderr" ||
	fail "vmcompare failed: $(cat "$out/stderr")"
md=$out/results.md
[ -s "$md" ] || fail "no results.md"
cmp -s "$md" "$out/stdout" || fail "stdout is not the table"
header=$(grep -m1 '^| workload | glibc' "$md") || fail "no table header"$'\n'"$(cat "$md")"
for peer in glibc jemalloc mimalloc tcmalloc; do
	grep -q "| $peer |" <<<"$header" || fail "$peer has no column (is its package installed? .ci/setup)"
done
grep -q '| uvmalloc | uvmalloc API |$' <<<"$header" || fail "no uvmalloc columns: $header"
for row in "fix_size p:1 h:0" "random_size" "random_size t:N" "fix_size p:1 h:0 t:N" "larson t:N" "realloc t:1" "large t:1" \
	"stress t:N" "local t:N" "refill t:1"; do
	line=$(grep -m1 "^| $row |" "$md") || fail "row $row missing"
	grep -Eq '[0-9.]+ ms \([0-9.]+x\)' <<<"$line" || fail "row $row has no ratio: $line"
done
for section in "### Targets (issues 7, 13 and 14)" "### Scaling" "### Peak RSS (MiB)" "### Minor page faults" "### Syscalls" "### What each row stresses"; do
	grep -qF "$section" "$md" || fail "section $section missing"
done
grep -q '^| fix_size p:1 h:0 | API ≤ 0.5x' "$md" || fail "no target verdict for fix_size"
grep -q '^| large t:1 | time ≤ 1x best, peak RSS ≤ 1.2x lowest | ' "$md" || fail "no target verdict for large"
/usr/bin/python3 - "$out" <<'PY' || fail "results.json or ratios.svg"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1] + "/results.json"))
assert d["schema"] == "uvmalloc.vmcompare/1" and d["quick"], d.keys()
rows = {r["label"]: r for r in d["rows"]}
assert rows["fix_size p:1 h:0"]["verdict"].startswith(("met", "missed")), rows["fix_size p:1 h:0"]
assert "uvmalloc API" in rows["random_size"]["results"] and "uvmalloc API" not in rows["larson t:N"]["results"]
for r in d["rows"]:
    for name, c in r["results"].items():
        assert c["seconds"] > 0 and c["peak_rss_kib"] > 0, (r["label"], name, c)
svg = ET.parse(sys.argv[1] + "/ratios.svg").getroot()
assert svg.tag.endswith("svg") and len(svg.findall(".//{http://www.w3.org/2000/svg}rect")) > 10
PY
# Bad arguments are refused.
if "$root/tools/vmcompare/vmcompare" --build "$build" --only nothing-matches --out "$out/x" 2>/dev/null; then
	fail "--only with no match was accepted"
fi
echo "vmcompare: ok"
