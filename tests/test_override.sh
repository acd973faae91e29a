#!/bin/bash
# tests/test_override.sh BUILD - uvmalloc as a program's malloc by linking, as a user links it: the
# flags `pkg-config uvmalloc-override` gives (the build tree's uninstalled .pc), a C and a C++ program,
# each linked dynamically and with -static, no LD_PRELOAD. Each must allocate through uvmalloc
# (malloc_stats prints uvmalloc's summary, with the program's 1000 objects, and malloc_info our committed
# span) and not through glibc.
. "$(dirname "$0")/common.sh"
build=$(cd "$1" && pwd)

export PKG_CONFIG_PATH=$build/meson-uninstalled
flags=$(pkg-config --cflags --libs uvmalloc-override) || fail "no uvmalloc-override pkg-config module"
static=$(pkg-config --static --cflags --libs uvmalloc-override)
rpath=-Wl,-rpath,$build/preload:$build/lib

check() { # name
	local err
	env -u LD_PRELOAD "$out/$1" >"$out/$1.out" 2>"$out/$1.err" || fail "$1 exited $?: $(cat "$out/$1.err")"
	err=$(cat "$out/$1.err")
	grep -q '^<system type="current" size="[1-9]' "$out/$1.out" || fail "$1: malloc_info is not uvmalloc's: $(cat "$out/$1.out")"
	grep -q '^uvmalloc: objects' <<<"$err" || fail "$1: malloc_stats is not uvmalloc's: $err"
	! grep -q 'Arena 0' <<<"$err" || fail "$1: glibc's malloc answered: $err"
	local n
	n=$(sed -n 's/^uvmalloc: objects \([0-9]*\) allocated.*/\1/p' <<<"$err")
	[ "${n:-0}" -ge 1000 ] || fail "$1: $n objects through uvmalloc, the program made 1000: $err"
	if [[ $1 != *static* ]]; then
		# Not a pipe into grep -q: its early exit would fail ldd with SIGPIPE under pipefail, now and then.
		grep -q libuvmalloc-preload <<<"$(ldd "$out/$1")" || fail "$1 does not link libuvmalloc-preload.so"
	fi
	echo "override: $1 ok ($n objects)"
}

cc -O1 -o "$out/c" "$root/tests/override_prog.c" $flags $rpath || fail "cc with uvmalloc-override"
check c
cc -O1 -static -o "$out/c-static" "$root/tests/override_prog.c" $static 2>"$out/ld.err" ||
	fail "cc -static with uvmalloc-override: $(cat "$out/ld.err")"
check c-static
c++ -O1 -o "$out/cxx" "$root/tests/override_prog.cc" $flags $rpath || fail "c++ with uvmalloc-override"
check cxx
c++ -O1 -static -o "$out/cxx-static" "$root/tests/override_prog.cc" $static 2>"$out/ld.err" ||
	fail "c++ -static with uvmalloc-override: $(cat "$out/ld.err")"
check cxx-static
