#!/bin/sh
# tests/tsan.sh [BUILD_DIR] - the library under ThreadSanitizer (default build-tsan/): builds it, then
# runs tests/tsan_churn.c against it, then again with the heap profile sampling every 4 KiB (samples,
# their frees by other threads, the unwinder found by the first sample racing others); any race
# report outside tests/tsan.supp fails.  .ci/run runs it.  The profiled run uses libgcc's unwinder:
# libunwind's thread-exit destructor locks a mutex after ThreadSanitizer has finished the thread, and
# the interceptor crashes (a sanitizer teardown order; the same run without ThreadSanitizer passes).
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-tsan}
.ci/setup "$dir" -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debugoptimized
ninja -C "$dir" lib/libuvmalloc.so.0.1.0 >/dev/null
cc -O1 -g -fsanitize=thread -Ilib tests/tsan_churn.c -o "$dir/tsan_churn" "$dir/lib/libuvmalloc.so.0.1.0" \
	-Wl,-rpath,"$(cd "$dir" && pwd)/lib" -pthread
TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 exitcode=66" "$dir/tsan_churn"
UVM_PROF_SAMPLE=4K UVM_PROF_UNWIND=libgcc TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 exitcode=66" "$dir/tsan_churn"
