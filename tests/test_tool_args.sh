#!/bin/bash
# tests/test_tool_args.sh VERSION UVMDEMO TOOL... - uvmdemo's numbers are strict: a negative, a word,
# trailing junk or one past the limit is named on stderr with exit status 2 and nothing runs; a good one
# runs.  So are allocwork's (one of TOOL...), with its long forms.  Every tool answers --version with
# the project's version.  vminfo's and vmtrace's heap-profile arguments are refused the same way.
set -u
version=$1 uvmdemo=$2
shift 2
fail() { echo "FAIL: $*"; exit 1; }
for bad in "--rounds -1" "--rounds abc" "--rounds 5x" "--rounds 1000001" "--lines -3" "--lines ''" "stray"; do
	out=$(eval timeout 10 "$uvmdemo" $bad 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] || fail "uvmdemo $bad exited $rc, not 2"
	case $bad in stray) word=stray ;; *) word=${bad%% *} ;; esac
	echo "$out" | grep -q -- "$word" || fail "uvmdemo $bad: the message does not name $word: $out"
done
timeout 60 "$uvmdemo" --rounds 2 --lines 5 > /dev/null || fail "uvmdemo --rounds 2 --lines 5 failed"
# refuses TOOL "ARGS:WANTED"...: each ARGS exits 2 with WANTED in its message.
refuses() {
	local tool=$1 bad args want out rc
	shift
	for bad in "$@"; do
		args=${bad%%:*} want=${bad#*:}
		out=$(timeout 10 "$tool" $args 2>&1 >/dev/null); rc=$?
		[ $rc -eq 2 ] || fail "$(basename "$tool") $args exited $rc, not 2"
		grep -qF -- "$want" <<<"$out" || fail "$(basename "$tool") $args: $out (wanted: $want)"
	done
}
# allocwork (getopt_long): each refusal names what is wrong, exit 2; long forms work.
for tool in "$@"; do case $tool in *allocwork) allocwork=$tool ;; *vminfo) vminfo=$tool ;; *vmtrace) vmtrace=$tool ;; *progrun) progrun=$tool ;; *redisrun) redisrun=$tool ;; esac; done
refuses "$allocwork" "-t 0 larson:-t needs" "-t x larson:-t needs" "--scale 5000 larson:-s needs" "-s:-s needs a value" \
	"--bogus larson:unknown option --bogus" "nosuch:unknown workload nosuch" ":a workload is needed" \
	"larson mixed:one workload at a time"
timeout 60 "$allocwork" --threads=1 --scale 1 --json frag > /dev/null || fail "allocwork --threads=1 --scale 1 --json frag failed"
# -w writes every byte of stress's blocks: the same work, so the same checksum, and the JSON says so.
plain=$(timeout 60 "$allocwork" --json stress) || fail "allocwork --json stress failed"
whole=$(timeout 60 "$allocwork" --write-all --json stress) || fail "allocwork --write-all --json stress failed"
grep -q '"write_all":false' <<<"$plain" && grep -q '"write_all":true' <<<"$whole" || fail "allocwork's write_all: $plain / $whole"
[ "$(grep -o '"checksum":"[0-9a-f]*"' <<<"$plain")" = "$(grep -o '"checksum":"[0-9a-f]*"' <<<"$whole")" ] ||
	fail "allocwork -w changed stress's checksum: $plain / $whole"
# progrun (vmcompare's runner of programs): a bad option or no program is refused; a program's failure is its status.
refuses "$progrun" "--bogus true:unknown option --bogus" ":a program to run is needed" "--stdin:a value is needed"
out=$(printf 'b\na\n' | "$progrun" --stdin /dev/stdin -- sort) || fail "progrun -- sort failed"
grep -q '"checksum": "[0-9a-f]\{16\}", "corrupt": false' <<<"$out" || fail "progrun's report: $out"
"$progrun" -- false 2>/dev/null && fail "progrun -- false exited 0"
# redisrun (vmcompare's runner of Redis): bad numbers are refused; a small run reports the server and finds its data whole.
refuses "$redisrun" "--keys 0:--keys needs" "--keys x:invalid int value" "--bogus:unrecognized arguments: --bogus"
out=$(timeout 60 "$redisrun" --keys 300) || fail "redisrun --keys 300 failed"
grep -Eq '"keys": 300, "seconds": [0-9.]+, .*"peak_rss_kib": [1-9][0-9]*, .*"checksum": "[0-9a-f]{16}", "corrupt": false' <<<"$out" ||
	fail "redisrun's report: $out"
"$redisrun" --keys 300 --server false 2>/dev/null && fail "redisrun with a server that exits at once exited 0"
# vminfo's heap flags and vmtrace's heap arguments (when built): refused before any process is read.
[ -z "${vminfo:-}" ] || refuses "$vminfo" "--folded 1:--folded needs --heap" "--since x 1:--since needs --heap" \
	"--heap --summary 1:takes no --summary" "--heap --folded --json 1:choose one"
[ -z "${vmtrace:-}" ] || refuses "$vmtrace" "--heap-sample 0:--heap-sample needs" "--heap-sample 5Q:--heap-sample needs" \
	"--heap-sample 2T:--heap-sample needs" "-o:-o needs a value"
for tool in "$uvmdemo" "$@"; do
	out=$("$tool" --version) || fail "$tool --version failed"
	case $out in *"(uvmalloc) $version"*) ;; *) fail "$tool --version says: $out" ;; esac
done
echo "tool arguments: ok"
