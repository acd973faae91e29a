# tests/common.sh - what the shell tests share, sourced first: strict mode, $root (the checkout),
# $out (a scratch directory, removed at exit) and fail.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# For the servers' tests (test_postgres.sh, test_mariadb.sh), which run as a service user when we are
# root.  preload_copy PRELOAD: the preload library and the libuvmalloc.so.0 it loads, copied under
# $out where that user can read them (a build directory under /root is not), in the build tree's
# layout (its RUNPATH is $ORIGIN/../lib); sets $preload_copy to the copy.
preload_copy() {
	mkdir -p "$out/preload" "$out/lib"
	cp "$1" "$out/preload/"
	cp -L "$(dirname "$1")/../lib/libuvmalloc.so.0" "$out/lib/"
	chmod -R a+rX "$out"
	preload_copy=$out/preload/$(basename "$1")
}
# as_user USER CMD...: CMD as USER when we are root (setpriv, util-linux), else as ourselves.
as_user() {
	local user=$1
	shift
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid="$user" --regid="$user" --init-groups -- env HOME="$out" "$@"
	else
		"$@"
	fi
}
