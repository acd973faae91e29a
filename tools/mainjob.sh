#!/bin/sh
# The README's main job: Debian's python3, unchanged, on uvmalloc through LD_PRELOAD.  Halfway through
# its workload, with its data live, vminfo reads its allocator from outside; then it finishes and
# UVM_STATS=1 prints the allocator's own summary at exit.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
fifo=$(mktemp -u)
mkfifo "$fifo"
trap 'rm -f "$fifo"' EXIT
UVM_STATS=1 LD_PRELOAD="$build/preload/libuvmalloc-preload.so" /usr/bin/python3 "$top/tests/programs/workload.py" "$fifo" &
pid=$!
read -r _ < "$fifo"
"$build/tools/vminfo/vminfo" --top 5 "$pid" > "$fifo.out"
echo "== vminfo $pid: $(grep -c ' vmalloc' "$fifo.out") live areas; the first 10, the unpurged count, the summary:"
grep ' vmalloc' "$fifo.out" | head -n 10
echo "   ... $(grep -c 'unpurged' "$fifo.out") unpurged areas"
sed -n '/^summary:/,$p' "$fifo.out"
rm -f "$fifo.out"
echo "== python3 goes on; its output and, at exit, UVM_STATS:"
echo go > "$fifo"
wait "$pid"
