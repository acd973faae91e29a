#!/bin/sh
# localize.sh IN.a OUT.a - an installed static archive: IN's objects linked into one (ld -r) whose
# hidden symbols are then made local, so that a program linked with it sees the public names only
# (uvm_*, and for the override malloc & co.), as it does with the shared library, where hidden
# symbols are not exported. Internal names such as slab_alloc or numa_setup cannot clash with the
# program's or another library's (libnuma has numa_* names of its own).
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ld -r --whole-archive "$1" -o "$tmp/all.o"
objcopy --localize-hidden "$tmp/all.o"
rm -f "$2"
ar rcs "$2" "$tmp/all.o"
