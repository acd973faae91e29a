#!/bin/bash
# tests/test_subproject.sh VERSION - uvmalloc as a meson subproject: tests/subproject, a tiny parent, gets this
# checkout as subprojects/uvmalloc, configures with no option of ours and links dependency('uvmalloc')
# and dependency('uvmalloc-override'). Its programs must run on uvmalloc, and the subproject must have
# built its libraries only (no tools, no tests, so neither Criterion, BPF nor Chromium is needed).
. "$(dirname "$0")/common.sh"
version=$1

cp -r "$root/tests/subproject" "$out/parent"
mkdir "$out/parent/subprojects"
# The checkout without its build directories: meson refuses a source tree that holds a build of its own.
tar -C "$root" --exclude='./build*' --exclude=./.git -cf - . | (mkdir "$out/parent/subprojects/uvmalloc" &&
	tar -C "$out/parent/subprojects/uvmalloc" -xf -)
meson setup "$out/build" "$out/parent" >"$out/setup.log" 2>&1 || fail "the parent does not configure: $(tail -20 "$out/setup.log")"
meson compile -C "$out/build" >"$out/compile.log" 2>&1 || fail "the parent does not build: $(tail -20 "$out/compile.log")"
targets=$(meson introspect --targets "$out/build")
for unwanted in vminfo vmbench test_api vmtrace; do
	! grep -q "\"name\": \"$unwanted\"" <<<"$targets" || fail "the subproject built $unwanted, which its parent did not ask for"
done
api=$("$out/build/parent_api") || fail "parent_api failed"
[ "$api" = "api $version" ] || fail "parent_api printed: $api"
err=$("$out/build/parent_override" 2>&1 >/dev/null) || fail "parent_override failed"
grep -q '^uvmalloc: objects' <<<"$err" || fail "parent_override's malloc is not uvmalloc's: $err"
echo "subproject: dependency('uvmalloc') and dependency('uvmalloc-override') work from a parent; libraries only"
