#!/bin/bash
# tests/test_exports.sh BUILD - the library shows a program its public names only: every global
# symbol that libuvmalloc.so exports and that libuvmalloc.a defines is uvm_* (or uvm__*), and the
# preload libraries add the malloc family and C++ operator new/delete, nothing else; the preload
# library's plain entry points are the uvm_ functions' own addresses. A program with
# functions named like our internals (slab_alloc, numa_setup, rb_insert) links statically with
# libuvmalloc.a and calls both.
. "$(dirname "$0")/common.sh"
build=$(cd "$1" && pwd)

public='^uvm_'
malloc_family='^(malloc|free|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|malloc_trim|mallinfo2?|malloc_stats|mallopt|malloc_info|cfree|__libc_(malloc|free|calloc|realloc|memalign|valloc|pvalloc|mallinfo|mallopt)|_Z(nw|na|dl|da)[a-zA-Z0-9_]*)$'

# name KIND FILE ALLOWED: the defined global symbols of FILE that ALLOWED (an ERE) does not match
stray() {
	local syms
	if [ "$1" = so ]; then syms=$(nm -D --defined-only "$2"); else syms=$(nm -g --defined-only "$2"); fi
	awk 'NF == 3 { print $3 }' <<<"$syms" | grep -Ev "$3" | sort -u || true
}
check() { # KIND FILE ALLOWED
	[ -e "$2" ] || fail "$2 not built"
	local s
	s=$(stray "$1" "$2" "$3")
	[ -z "$s" ] || fail "$(basename "$2") exports names that are not public: $(tr '\n' ' ' <<<"$s")"
	echo "exports: $(basename "$2") ok"
}
check so "$build/lib/libuvmalloc.so" "$public"
check a "$build/lib/libuvmalloc.a" "$public"
check so "$build/preload/libuvmalloc-preload.so" "$public|$malloc_family"

# The preload library holds the allocator itself, and its malloc is uvm_malloc under a second name (no
# jump between a program's call and the allocator): the same address, for each entry point that only
# passes its arguments on (preload/meson.build).
pre=$build/preload/libuvmalloc-preload.so
! readelf -d "$pre" | grep -q 'NEEDED.*libuvmalloc' || fail "libuvmalloc-preload.so needs libuvmalloc.so: a second copy"
addr() { readelf --dyn-syms -W "$pre" | awk -v s="$1" '$8 == s { print $2 }'; }
for f in malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign malloc_usable_size; do
	[ -n "$(addr "$f")" ] && [ "$(addr "$f")" = "$(addr "uvm_$f")" ] || fail "libuvmalloc-preload.so's $f is not uvm_$f"
done
# glibc's own names for them too (override.c): __libc_malloc is uvm_malloc, cfree is uvm_free.
for pair in __libc_malloc:malloc __libc_free:free cfree:free __libc_calloc:calloc __libc_realloc:realloc \
	__libc_memalign:memalign; do
	[ -n "$(addr "${pair%%:*}")" ] && [ "$(addr "${pair%%:*}")" = "$(addr "uvm_${pair#*:}")" ] ||
		fail "libuvmalloc-preload.so's ${pair%%:*} is not uvm_${pair#*:}"
done
for f in __libc_valloc __libc_pvalloc __libc_mallinfo __libc_mallopt mallopt malloc_info; do
	[ -n "$(addr "$f")" ] || fail "libuvmalloc-preload.so does not define $f"
done
for f in $(readelf --dyn-syms -W "$pre" | awk '$8 ~ /^_Zd[la]Pv/ { print $8 }'); do
	[ "$(addr "$f")" = "$(addr uvm_free)" ] || fail "libuvmalloc-preload.so's $f (a delete) is not uvm_free"
done
echo "exports: libuvmalloc-preload.so's malloc family is the allocator's own entry points"
check a "$build/preload/libuvmalloc-preload.a" "$public|$malloc_family"

cat >"$out/clash.c" <<'C'
#include <stdio.h>
#include "uvmalloc.h"
/* Names the library uses inside: a program may have its own. */
int slab_alloc(void) { return 1; }
int numa_setup(void) { return 2; }
int rb_insert(void) { return 3; }
int main(void)
{
	void *p = uvm_vmalloc(4096);
	int ok = p && slab_alloc() + numa_setup() + rb_insert() == 6;
	uvm_vfree(p);
	puts(ok ? "both" : "wrong");
	return !ok;
}
C
cc -static -o "$out/clash" "$out/clash.c" -I"$root/lib" "$build/lib/libuvmalloc.a" -pthread -ldl \
	2>"$out/ld.err" || fail "a program with names like our internals does not link with libuvmalloc.a: $(cat "$out/ld.err")"
[ "$("$out/clash")" = both ] || fail "the clash program got the wrong functions"
echo "exports: a program's slab_alloc, numa_setup and rb_insert link beside libuvmalloc.a"
