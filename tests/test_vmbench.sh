#!/bin/bash
# tests/test_vmbench.sh VMBENCH PRELOAD - vmbench runs every case on both back ends (malloc also under
# our preload library): every case passes but align_shift, which is expected to fail; the Summary and
# "All test took" lines have test_vmalloc's shape; --json parses; a bad argument is refused.
set -euo pipefail
vmbench=$1 preload=$2
fail() { echo "FAIL: $*"; exit 1; }

check_text() {
	local out=$1 what=$2
	[ "$(grep -c '^Summary: ' <<<"$out")" = 11 ] || fail "$what: expected 11 Summary lines"$'\n'"$out"
	grep -q '^Summary: align_shift_alloc_test passed: 0 failed: 0 xfailed: 2 repeat: 2 loops: 200 avg: [0-9]* usec$' <<<"$out" ||
		fail "$what: align_shift is not an expected failure"$'\n'"$out"
	[ "$(grep -Ec '^Summary: [a-z0-9_]+ passed: 2 failed: 0 xfailed: 0 repeat: 2 loops: 200 avg: [0-9]+ usec$' <<<"$out")" = 10 ] ||
		fail "$what: not every case passed twice"$'\n'"$out"
	grep -Eq '^All test took worker0=[0-9]+ cycles$' <<<"$out" || fail "$what: no cycles line"
}

args=(test_loop_count=200 test_repeat_count=2)
check_text "$("$vmbench" "${args[@]}")" "uvm"
check_text "$("$vmbench" --api=malloc "${args[@]}")" "malloc (glibc)"
check_text "$(LD_PRELOAD=$preload "$vmbench" --api=malloc "${args[@]}")" "malloc (uvmalloc preloaded)"
check_text "$("$vmbench" use_huge=1 nr_pages=600 "${args[@]}")" "uvm, huge"

out=$("$vmbench" nr_threads=3 run_test_mask=9 test_loop_count=100)
[ "$(grep -c '^All test took worker' <<<"$out")" = 3 ] || fail "three workers expected"$'\n'"$out"
[ "$(grep -c '^Summary: ' <<<"$out")" = 6 ] || fail "mask 9 = 2 cases per worker"$'\n'"$out"

"$vmbench" --json run_test_mask=1 test_loop_count=100 nr_threads=2 | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "uvmalloc.vmbench/1" and d["api"] == "uvm", d
assert d["params"]["run_test_mask"] == 1 and len(d["workers"]) == 2, d
t = d["workers"][0]["tests"]
assert len(t) == 1 and t[0]["name"] == "fix_size_alloc_test" and t[0]["passed"] == 1, t
' || fail "--json"

# Refusals name what is wrong, exit 2 (getopt_long for the options, name=value for test_vmalloc's parameters).
for bad in "bogus=1:unknown parameter bogus" "nr_pages=x:nr_pages needs a number" "stray:unexpected argument stray" \
	"--api=x:--api takes uvm or malloc" "--bogus:unknown option --bogus" "--api:--api needs a value"; do
	args=${bad%%:*} want=${bad#*:}
	out=$("$vmbench" $args 2>&1 >/dev/null) && fail "vmbench $args was accepted"
	[ $? -eq 2 ] || fail "vmbench $args: not a usage error (2)"
	grep -qF -- "$want" <<<"$out" || fail "vmbench $args: $out (wanted: $want)"
done
"$vmbench" run_test_mask=1024 > /dev/null 2>&1 && fail "a mask of no case ran nothing and passed"
[ $? -eq 2 ] || fail "a mask of no case is not a usage error (2)"
echo "vmbench: ok"
