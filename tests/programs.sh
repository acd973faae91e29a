#!/bin/bash
# tests/programs.sh PRELOAD MT - real programs under libuvmalloc-preload.so:
# each runs twice, with glibc's malloc and with ours, and the outputs must be
# equal; UVM_STATS=1 must show that ours did the allocating.
set -euo pipefail
preload=$(realpath "$1") mt=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail=0

# compare NAME CMD...: run CMD plain and preloaded; outputs (stdout) must match.
compare() {
	local name=$1; shift
	"$@" > plain.out 2> plain.err || { echo "FAIL $name: failed without the preload"; cat plain.err; fail=1; return; }
	LD_PRELOAD=$preload UVM_STATS=1 "$@" > ours.out 2> ours.err || {
		echo "FAIL $name: failed under the preload"; tail -20 ours.err; fail=1; return; }
	if ! cmp -s plain.out ours.out; then
		echo "FAIL $name: output differs"; diff plain.out ours.out | head -10; fail=1; return
	fi
	if ! grep -q "^uvmalloc: objects [1-9]" ours.err; then
		echo "FAIL $name: UVM_STATS shows no allocation: was the preload used?"; cat ours.err; fail=1; return
	fi
	echo "ok   $name ($(wc -c < ours.out) bytes of output; $(grep '^uvmalloc: objects' ours.err | head -1 | cut -d' ' -f3) objects)"
}

compare python3 /usr/bin/python3 "$here/programs/workload.py"
compare perl perl "$here/programs/workload.pl"

awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) printf "%d %s\n", int(rand() * 1e9), substr("abcdefghij", i % 10 + 1) }' > lines.txt
compare sort sort lines.txt
compare sort-numeric-parallel sort -n -S 64M --parallel=2 lines.txt

# gcc: three translation units and a link; the objects and the program's output must be the same.
for i in 1 2 3; do
	{
		echo "#include <stdio.h>"
		echo "int f$i(int n) { int s = 0; for (int k = 0; k < n; k++) s += k * $i; return s; }"
	} > u$i.c
done
echo 'int f1(int), f2(int), f3(int); int printf(const char *, ...); int main(void) { printf("%d\n", f1(10) + f2(20) + f3(30)); return 0; }' > main.c
gcc_all() { gcc -O2 -c u1.c u2.c u3.c main.c && gcc -o prog u1.o u2.o u3.o main.o && ./prog && md5sum u1.o u2.o u3.o main.o; }
compare gcc gcc_all

# git: the same commits, with fixed dates, must get the same hashes; gc and fsck must pass.
git_all() {
	rm -rf repo && mkdir repo && cd repo
	export GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
	git init -q -b main .
	for c in 1 2 3 4 5; do
		for f in $(seq 1 60); do seq 1 $((f * c)) > "f$f.txt"; done
		git add -A && git -c user.name=t -c user.email=t@e commit -qm "commit $c"
	done
	git log --format='%H %s'
	git gc -q && git fsck --no-progress && git count-objects -v | grep -v size
	cd ..
}
compare git git_all

compare mt "$mt"

# A C program under the preload library loads no C++ runtime (new and delete are defined in C).
if LD_PRELOAD=$preload cat /proc/self/maps | grep -Eq 'libstdc\+\+|libgcc_s|libm\.so'; then
	echo "FAIL a preloaded C program maps a C++ runtime:"; LD_PRELOAD=$preload cat /proc/self/maps | grep -E 'libstdc|libgcc_s|libm\.so'; fail=1
else
	echo "ok   a preloaded C program maps no libstdc++, libgcc_s or libm"
fi

# Settings: a typo is named, a refused value says what the setting takes (a page count takes no
# K/M/G suffix, which would read as bytes), and the program runs on.  The settings are read at the
# first malloc, which /bin/true never makes: ls makes some.
if ! UVM_STAT=1 UVM_SLAB_MAX=16K UVM_THP=sometimes UVM_LAZY_MAX=1M LD_PRELOAD=$preload ls / > /dev/null 2> settings.err; then
	echo "FAIL a program with bad settings did not run"; fail=1
elif ! grep -q "unknown setting UVM_STAT," settings.err || ! grep -q "UVM_SLAB_MAX=16K: it takes a whole number from 0 to 8192" settings.err ||
     ! grep -q "UVM_THP=sometimes: it takes one of never, huge-only, always, auto" settings.err ||
     ! grep -q "UVM_LAZY_MAX=1M: it takes a whole number of pages from 0 to" settings.err; then
	echo "FAIL bad settings are not explained:"; cat settings.err; fail=1
else
	echo "ok   a typo'd setting is named, refused values say what they take"
fi

# UVM_STATS=json: one JSON object at exit, its fragmentation figures consistent with its counters, UVM_THP=auto's verdict in it.
if LD_PRELOAD=$preload UVM_STATS=json sort lines.txt > /dev/null 2> stats.json &&
   python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["frag"]
assert d["schema"] == "uvmalloc.stats/1" and d["allocs"] > 0, d
assert f["span_free_bytes"] <= f["span_bytes"] and f["span_largest_free"] <= f["span_free_bytes"], f
assert f["overhead_bytes"] == max(f["resident_bytes"] - f["live_bytes"], 0), f
assert f["requested_bytes"] <= f["handed_bytes"], f
assert all(sum(c["occupancy"]) == c["slabs"] for c in f["classes"]), f["classes"]
if "[never]" not in open("/sys/kernel/mm/transparent_hugepage/enabled").read():
    t = d["thp"]  # the buffers of sort are huge areas: UVM_THP=auto timed the first page of one
    assert t["samples"] >= 1 and t["huge_ns"] > 0 and t["small_ns"] > 0 and t["pays"] in (True, False), t
' stats.json; then
	echo "ok   UVM_STATS=json parses and its figures agree"
else
	echo "FAIL UVM_STATS=json:"; head -c 2000 stats.json; fail=1
fi

# Address-space limits (issue 12): start-up under a tight ulimit -v, where glibc's malloc runs these
# programs, and no cap on regions when each is small.
for prog in /bin/true "ls /" "/usr/bin/python3 -c print(1)"; do
	if ! (ulimit -v 70000 && LD_PRELOAD=$preload $prog > /dev/null 2> limit.err); then
		echo "FAIL ulimit -v 70000: $prog"; cat limit.err; fail=1
	fi
done
echo '#include <stdlib.h>
int main(void) { for (int i = 0; i < 6000; i++) if (!malloc(1 << 20)) return 1; return 0; }' > many.c
gcc -O1 -o many many.c
if ! UVM_ARENA_SIZE=64M LD_PRELOAD=$preload ./many; then
	echo "FAIL UVM_ARENA_SIZE=64M: 6000 blocks of 1 MiB (more than 64 regions of 64 MiB) refused"; fail=1
fi
# A request that cannot fit (more than the limit itself: 900 MiB fitted once no library mapped itself
# beside us) fails cheaply when it is made again: no purge, no new reservation each time.
echo '#include <stdlib.h>
int main(void) { for (int i = 0; i < 1000; i++) if (malloc((size_t)1000 << 20)) return 1; return 0; }' > fails.c
gcc -O1 -o fails fails.c
if ! (ulimit -v 1000000 && UVM_STATS=1 LD_PRELOAD=$preload ./fails 2> fails.err); then
	echo "FAIL ulimit -v 1000000: 1000 MiB was served, or the program failed"; cat fails.err; fail=1
fi
mmaps=$(sed -n 's/.*syscalls [0-9]* (mmap \([0-9]*\).*/\1/p' fails.err)
if [ -z "$mmaps" ] || [ "$mmaps" -gt 100 ]; then
	echo "FAIL 1000 impossible requests made ${mmaps:-?} mmap calls"; cat fails.err; fail=1
fi
# Regions no area lives in go back when the limit is reached: fill with 8 MiB blocks, free them all,
# then one block of 75 % of what was held must fit (it needs the space of the emptied regions).
echo '#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	static void *p[4096];
	size_t n = 0;
	while (n < 4096 && (p[n] = malloc(8 << 20)))
		n++;
	for (size_t i = 0; i < n; i++)
		free(p[i]);
	void *q = malloc(n * (8 << 20) / 4 * 3);
	printf("held %zu MiB, then %s\n", n * 8, q ? "75 %: ok" : "75 %: NULL");
	return !q;
}' > refill.c
gcc -O1 -o refill refill.c
if ! (ulimit -v 1000000 && LD_PRELOAD=$preload ./refill > refill.out); then
	echo "FAIL ulimit -v 1000000: freed regions not given back: $(cat refill.out)"; fail=1
fi
[ $fail = 1 ] || echo "ok   address-space limits (ulimit -v 70000; 6000 MiB in 64 MiB regions; 1000 failures, $mmaps mmaps; $(cat refill.out))"
exit $fail
