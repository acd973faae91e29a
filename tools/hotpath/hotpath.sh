#!/bin/sh
# Instructions per allocate+free pair on a cache hit, counted by callgrind
# (exact and repeatable, unlike time on a shared machine): two runs of
# tools/hotpath that differ only in their loop count, the difference of
# their totals divided by the difference of the counts.
#
#   tools/hotpath/hotpath.sh [BUILD_DIR]
#
# Prints one line per row: the uvm_* API at 1, 16 and 64 pages (bins) and 256
# (an order list), uvm_malloc at 16..1024 bytes, and plain malloc of 64 B,
# 4 KiB, 64 KiB and 1 MiB under each installed allocator (LD_PRELOAD), and
# the other entry points at 64 B under each: calloc, aligned_alloc(64),
# malloc+realloc to 128 B (a triple) and malloc+malloc_usable_size, each
# through a function of hotpath's (its call counted), and C++'s operator
# new+delete of 64 B and 4 KiB under each allocator but glibc.  Three columns: all instructions per
# pair, the allocator's own (less the loop's, measured with a null
# allocator: a call that returns a static buffer and one that does
# nothing), and nanoseconds per pair, all of them: the median of five runs
# of HOTPATH_LOOPS pairs (default 20 000 000) outside callgrind, which is
# time on a noisy machine, but shows what instructions cannot (a
# loop-carried chain through memory).
set -eu
build=${1:-build}
bin=$build/tools/hotpath/hotpath
[ -x "$bin" ] || { echo "hotpath.sh: $bin not built (meson compile -C $build)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "hotpath.sh: needs valgrind" >&2; exit 2; }
lo=20000 hi=120000

total() { # preload kind size loops -> instructions
	out=$(mktemp)
	env ${1:+LD_PRELOAD=$1} valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$2" "$3" "$4" >/dev/null 2>&1
	n=$(awk '/^summary:/ { print $2 }' "$out")
	rm -f "$out"
	[ -n "$n" ] || { echo "hotpath.sh: callgrind failed on $2 $3 ${1:+under $1}" >&2; exit 1; }
	echo "$n"
}

per_pair() { # preload kind size
	a=$(total "$1" "$2" "$3" $lo) || exit 1
	b=$(total "$1" "$2" "$3" $hi) || exit 1
	echo $(( (b - a) / (hi - lo) ))
}

timed=${HOTPATH_LOOPS:-20000000}
case $timed in '' | *[!0-9]*) echo "hotpath.sh: HOTPATH_LOOPS must be a number of pairs" >&2; exit 2 ;; esac

ns() { # preload kind size -> median ns per pair of five runs
	for i in 1 2 3 4 5; do env ${1:+LD_PRELOAD=$1} "$bin" "$2" "$3" "$timed" || exit 1; done | sort -n | sed -n 3p
}

loop=$(per_pair '' null 64) || exit 1
row() { # label count preload kind size
	[ -n "$2" ] || exit 1
	t=$(ns "$3" "$4" "$5") || exit 1
	printf '%-28s %8s %8s %8s\n' "$1" "$2" $(($2 - loop)) "$t"
}

lib=/usr/lib/x86_64-linux-gnu
printf '%-28s %8s %8s %8s\n' row all own ns
for p in 1 16 64 256; do row "uvm_vmalloc ${p}p" "$(per_pair '' uvm $p)" '' uvm $p; done
for s in 16 64 256 1024; do row "uvm_malloc ${s}B" "$(per_pair '' slab $s)" '' slab $s; done
for a in "uvmalloc:$build/preload/libuvmalloc-preload.so" "glibc:" "jemalloc:$lib/libjemalloc.so.2" \
	 "mimalloc:$lib/libmimalloc.so.2" "tcmalloc:$lib/libtcmalloc_minimal.so.4"; do
	name=${a%%:*} so=${a#*:}
	[ -z "$so" ] || [ -e "$so" ] || continue
	for s in 64 4096 65536 1048576; do row "malloc ${s}B $name" "$(per_pair "$so" malloc $s)" "$so" malloc $s; done
	for k in calloc aligned realloc usable; do row "$k 64B $name" "$(per_pair "$so" $k 64)" "$so" $k 64; done
	# C++'s operator new: glibc's is libstdc++'s, which hotpath (C) does not load.
	[ -z "$so" ] || for s in 64 4096; do row "new ${s}B $name" "$(per_pair "$so" new $s)" "$so" new $s; done
done
