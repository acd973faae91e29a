#!/bin/bash
# tests/test_cmake.sh BUILD VERSION - uvmalloc for CMake users: meson installs the build into a scratch
# root, and tests/cmake, a CMake project, find_package(uvmalloc)s it there (the relocatable
# uvmallocConfig.cmake), links uvmalloc::uvmalloc and uvmalloc::override, and its programs run on
# uvmalloc; the installed uvmalloc-descriptor.h compiles alone. Skipped (77) where cmake is not installed.
. "$(dirname "$0")/common.sh"
build=$(cd "$1" && pwd) version=$2
command -v cmake >/dev/null || { echo "SKIP: no cmake"; exit 77; }

meson install -C "$build" --destdir "$out/root" --no-rebuild >"$out/install.log" 2>&1 ||
	fail "meson install failed: $(tail -5 "$out/install.log")"
prefix=$(meson introspect --buildoptions "$build" | python3 -c 'import json, sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
cmake -S "$root/tests/cmake" -B "$out/b" -DCMAKE_PREFIX_PATH="$out/root$prefix" >"$out/cmake.log" 2>&1 ||
	fail "find_package(uvmalloc) failed: $(tail -20 "$out/cmake.log")"
cmake --build "$out/b" >"$out/build.log" 2>&1 || fail "the CMake project does not build: $(tail -20 "$out/build.log")"
api=$("$out/b/cmake_api") || fail "cmake_api failed"
[ "$api" = "api $version" ] || fail "cmake_api printed: $api"
err=$("$out/b/cmake_override" 2>&1 >/dev/null) || fail "cmake_override failed"
grep -q '^uvmalloc: objects' <<<"$err" || fail "cmake_override's malloc is not uvmalloc's: $err"
# The descriptor's header is installed and stands alone: a reader of other processes compiles with it only.
printf '#include <uvmalloc-descriptor.h>\nint main(void) { return sizeof(struct uvm_descriptor) < 64; }\n' > "$out/reader.c"
cc -I"$out/root$prefix/include" -o "$out/reader" "$out/reader.c" 2>"$out/reader.log" && "$out/reader" ||
	fail "uvmalloc-descriptor.h is not installed or does not compile alone: $(cat "$out/reader.log")"
echo "cmake: find_package(uvmalloc), uvmalloc::uvmalloc and uvmalloc::override work; uvmalloc-descriptor.h is installed"
