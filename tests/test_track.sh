#!/bin/bash
# tests/test_track.sh - tracking builds (lib/base/track.h): the library built with -Dtrack=valgrind and with
# -Dtrack=asan, and tests/track_bugs.c's errors in uvmalloc's blocks. memcheck must report each one at its
# line (overflows of a small block and of an area, a use after free, a double free, a branch on undefined
# bytes, 5 blocks definitely lost) and nothing in the clean run; so must memcheck with the preload library
# under a real program (sort) and a malloc overflow. AddressSanitizer must report the overflows and the use
# after free. Skipped (77) where valgrind or libasan is missing.
. "$(dirname "$0")/common.sh"
command -v valgrind >/dev/null || { echo "test_track: no valgrind"; exit 77; }
src=$root/tests/track_bugs.c

build() { # track -> build dir with the library only
	meson setup "$out/$1" "$root" -Dtrack="$1" -Dtools=disabled -Dtests=disabled -Dman=disabled -Dvmtrace=disabled \
		>"$out/$1.log" 2>&1 || fail "-Dtrack=$1 does not configure: $(tail -5 "$out/$1.log")"
	meson compile -C "$out/$1" >>"$out/$1.log" 2>&1 || fail "-Dtrack=$1 does not build: $(tail -20 "$out/$1.log")"
}
line_of() { grep -n "@$1 \*/" "$src" | cut -d: -f1; }

build valgrind
gcc -g -O1 -o "$out/bugs-vg" "$src" -I"$root/lib" -L"$out/valgrind/lib" -luvmalloc -Wl,-rpath,"$out/valgrind/lib"
memcheck() { valgrind --leak-check=full --error-exitcode=9 "$@" 2>&1; }

log=$(memcheck "$out/bugs-vg" clean) || fail "memcheck reports errors in the clean run: $log"
grep -q "ERROR SUMMARY: 0 errors" <<<"$log" || fail "clean run: $log"
grep -q "All heap blocks were freed" <<<"$log" || fail "clean run: memcheck saw blocks left: $log"
! grep -q "WARNING" <<<"$log" || fail "clean run: memcheck warns: $log"
expect() { # case, what memcheck must say at the case's line
	local log line
	line=$(line_of "$1")
	log=$(memcheck "$out/bugs-vg" "$1") && fail "$1: memcheck found no error"
	grep -A1 "$2" <<<"$log" | grep -q "track_bugs.c:$line)" || fail "$1: no '$2' at line $line: $log"
	grep -q "ERROR SUMMARY: 1 errors from 1 contexts" <<<"$log" || fail "$1: not exactly one error: $log"
}
expect overflow "Invalid write of size 1"
expect big-overflow "Invalid write of size 1"
expect use-after-free "Invalid read of size 1"
expect uninit "Conditional jump or move depends on uninitialised value"
log=$(memcheck "$out/bugs-vg" double-free) && fail "double-free: no error"
grep -A5 "Invalid free" <<<"$log" | grep -q "track_bugs.c:$(line_of double-free))" || fail "double-free: $log"
grep -q "uvmalloc: free(): double free or invalid pointer\|uvmalloc: .*0x" <<<"$log" ||
	fail "double-free: uvmalloc's own abort naming the pointer is missing: $log"
log=$(memcheck "$out/bugs-vg" leaks) && fail "leaks: no error"
grep -q "definitely lost: 50,400 bytes in 5 blocks" <<<"$log" || fail "leaks: $log"
grep -q "indirectly lost: 0 bytes\|possibly lost: 0 bytes" <<<"$log" || fail "leaks: $log"

# The preload library: memcheck must be told to keep our malloc (--soname-synonyms), and then sees its blocks.
pre=$out/valgrind/preload/libuvmalloc-preload.so
seq 1 3000 | shuf --random-source=<(yes) >"$out/nums"
want=$(sort -n "$out/nums" | md5sum)
got=$(LD_PRELOAD=$pre valgrind -q --soname-synonyms=somalloc=nouserintercepts --error-exitcode=9 sort -n "$out/nums" |
	md5sum) || fail "memcheck reports errors in sort under the preload library"
[ "$got" = "$want" ] || fail "sort's output differs under memcheck and the preload library"
log=$(LD_PRELOAD=$pre valgrind --soname-synonyms=somalloc=nouserintercepts --error-exitcode=9 "$out/bugs-vg" \
	malloc-overflow 2>&1) && fail "malloc-overflow: memcheck found no error under the preload library"
grep -A1 "Invalid write of size 1" <<<"$log" | grep -q "track_bugs.c:$(line_of malloc-overflow))" ||
	fail "malloc-overflow: $log"
echo "track: memcheck reports every error of track_bugs.c at its line, leaks exactly, and none in clean runs"

asan=$(gcc -print-file-name=libasan.so)
[ -e "$asan" ] || { echo "test_track: no libasan"; exit 77; }
build asan
gcc -g -O1 -fsanitize=address -o "$out/bugs-asan" "$src" -I"$root/lib" -L"$out/asan/lib" -luvmalloc \
	-Wl,-rpath,"$out/asan/lib"
log=$("$out/bugs-asan" clean 2>&1) || fail "ASan reports errors in the clean run: $log"
for c in overflow big-overflow use-after-free; do
	log=$("$out/bugs-asan" $c 2>&1) && fail "$c: ASan found no error"
	grep -q "ERROR: AddressSanitizer: use-after-poison" <<<"$log" || fail "$c: $log"
	grep -A1 "use-after-poison" <<<"$log" | grep -q "track_bugs.c:$(line_of $c)" || fail "$c: not at its line: $log"
done
echo "track: AddressSanitizer reports the overflows and the use after free at their lines"
