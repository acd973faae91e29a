# tests/common.sh - what the shell tests share, sourced first: strict mode, $root (the checkout),
# $out (a scratch directory, removed at exit) and fail.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
