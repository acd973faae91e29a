# tests/common.sh - what the shell tests share, sourced first: strict mode, $root (the checkout),
# $out (a scratch directory, removed at exit) and fail.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# For the servers' tests (test_postgres.sh, test_mariadb.sh), which run as a service user when we are
# root.  preload_copy PRELOAD: the preload library (which holds the whole allocator) copied under
# $out where that user can read it (a build directory under /root is not); sets $preload_copy to the copy.
preload_copy() {
	mkdir -p "$out/preload"
	cp "$1" "$out/preload/"
	chmod -R a+rX "$out"
	preload_copy=$out/preload/$(basename "$1")
}
# vminfo_busy VMINFO PID: vminfo's summary of PID, in $out/vminfo.out, must show busy areas.
vminfo_busy() {
	"$1" --summary "$2" > "$out/vminfo.out" 2>&1 || { cat "$out/vminfo.out"; fail "vminfo on $2"; }
	grep -Eq "busy +[0-9.]+ [KMG]?i?B in [1-9][0-9]* areas" "$out/vminfo.out" ||
		{ cat "$out/vminfo.out"; fail "vminfo shows no busy areas in $2"; }
}
# uvm_stats_clean STATS LOG...: STATS holds a UVM_STATS report of allocations made through us, and
# neither it nor any LOG reports a bad pointer.
uvm_stats_clean() {
	grep -q "^uvmalloc: objects [1-9]" "$1" || { cat "$1"; fail "$1: UVM_STATS shows no allocation"; }
	! grep -E "uvmalloc: .*(invalid|double free|corrupt)" "$@" || fail "uvmalloc reported a bad pointer"
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
