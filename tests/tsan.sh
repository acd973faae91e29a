#!/bin/sh
# tests/tsan.sh [BUILD_DIR] - the library under ThreadSanitizer (default build-tsan/): builds it, then
# runs tests/tsan_churn.c against it; any race report outside tests/tsan.supp fails.  .ci/run runs it.
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-tsan}
.ci/setup "$dir" -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debugoptimized
ninja -C "$dir" lib/libuvmalloc.so.0.1.0 >/dev/null
cc -O1 -g -fsanitize=thread -Ilib tests/tsan_churn.c -o "$dir/tsan_churn" "$dir/lib/libuvmalloc.so.0.1.0" \
	-Wl,-rpath,"$(cd "$dir" && pwd)/lib" -pthread
TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 exitcode=66" "$dir/tsan_churn"
