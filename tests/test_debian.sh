#!/bin/bash
# tests/test_debian.sh - the Debian packages: dpkg-buildpackage builds libuvmalloc0, libuvmalloc-dev and
# uvmalloc-tools from a clean clone of HEAD; every symbol of debian/libuvmalloc0.symbols is exported,
# lintian finds no error, and the packages installed with dpkg run: Debian's python3 preloaded from
# /usr/lib, uvmdemo, vminfo reading it, a program built against the installed -dev package; then they
# are removed again. Changes the system's packages, so CI runs it (.ci/run), not meson test.
. "$(dirname "$0")/common.sh"
command -v dpkg-buildpackage >/dev/null || { echo "SKIP: no dpkg-buildpackage (dpkg-dev, debhelper)"; exit 77; }
git clone -q "$root" "$out/src/uvmalloc"
(cd "$out/src/uvmalloc" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
	fail "dpkg-buildpackage failed: $(tail -30 "$out/build.log")"
# Every symbol debian/libuvmalloc0.symbols promises is still exported by the packaged library.
dpkg -x "$out"/src/libuvmalloc0_*.deb "$out/x"
exported=$(nm -D --defined-only "$out"/x/usr/lib/*/libuvmalloc.so.0 | awk '{print $3}')
for sym in $(awk '/^ / {sub(/@.*/, "", $1); print $1}' "$root/debian/libuvmalloc0.symbols"); do
	grep -qx "$sym" <<<"$exported" || fail "libuvmalloc.so.0 no longer exports $sym (debian/libuvmalloc0.symbols)"
done
lintian --fail-on error "$out"/src/*.changes >"$out/lintian.log" 2>&1 || fail "lintian: $(grep '^E:' "$out/lintian.log")"
debs=("$out"/src/libuvmalloc0_*.deb "$out"/src/libuvmalloc-dev_*.deb "$out"/src/uvmalloc-tools_*.deb)
dpkg -i "${debs[@]}" >"$out/install.log" 2>&1 || fail "dpkg -i failed: $(tail -10 "$out/install.log")"
trap 'dpkg -r uvmalloc-tools libuvmalloc-dev libuvmalloc0 >/dev/null 2>&1; rm -rf "$out"' EXIT
lib=$(dpkg -L libuvmalloc0 | grep '/libuvmalloc-preload.so$')
[ -n "$lib" ] || fail "libuvmalloc0 has no libuvmalloc-preload.so"
err=$(UVM_STATS=1 LD_PRELOAD=$lib python3 -c 'print(sum(len(str(i)) for i in range(100000)))' 2>&1 >"$out/py.out") ||
	fail "python3 under the installed preload library failed: $err"
grep -q '^488890$' "$out/py.out" || fail "python3 printed: $(cat "$out/py.out")"
grep -q '^uvmalloc: ' <<<"$err" || fail "python3's malloc was not the installed uvmalloc: $err"
/usr/bin/uvmdemo --rounds 2 --lines 2 >/dev/null || fail "the installed uvmdemo failed"
# vminfo reads python3 once its blocks are live (it says so), not after a fixed sleep: on a loaded
# machine python3 had not started allocating a second after its launch.
LD_PRELOAD=$lib python3 -c 'import time; x = [bytearray(10000) for i in range(500)]; print("live", flush=True); time.sleep(5)' \
	>"$out/live" & pid=$!
for _ in $(seq 100); do grep -q live "$out/live" && break; sleep 0.1; done
/usr/bin/vminfo --summary "$pid" >"$out/vminfo.out" 2>&1 && grep -q '^  reserved' "$out/vminfo.out" ||
	fail "the installed vminfo could not read a preloaded python3: $(cat "$out/vminfo.out")"
wait $pid
printf '#include <uvmalloc.h>\n#include <stdio.h>\nint main(void) { void *p = uvm_vmalloc(1 << 20); printf("%%s\\n", uvm_version()); uvm_vfree(p); return !p; }\n' >"$out/app.c"
cc "$out/app.c" -o "$out/app" $(pkg-config --cflags --libs uvmalloc) || fail "no build against the installed libuvmalloc-dev"
want=$(dpkg-query -W -f='${Version}' libuvmalloc0)
[ "$("$out/app")" = "$want" ] || fail "the program built against the -dev package printed: $("$out/app"), not $want"
echo "debian: 3 packages build, pass lintian of errors, install and run (python3 preloaded, uvmdemo, vminfo, an app)"
