#!/bin/sh
# tests/tsan.sh [BUILD_DIR] - the library under ThreadSanitizer (default build-tsan/): builds it, then
# runs tests/tsan_churn.c against it, again at UVM_SLAB_MAX=8K (the map classes), then with the heap profile sampling every 4 KiB (samples,
# their frees by other threads, the unwinder found by the first sample racing others); any race
# report outside tests/tsan.supp fails.  .ci/run runs it.  The profiled run uses libgcc's unwinder:
# libunwind's thread-exit destructor locks a mutex after ThreadSanitizer has finished the thread, and
# the interceptor crashes (a sanitizer teardown order; the same run without ThreadSanitizer passes).
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-tsan}
.ci/setup "$dir" -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debugoptimized
ninja -C "$dir" lib/libuvmalloc.so.0.1.0 >/dev/null
# history_size=7 (the most): a suppression matches a frame of either access, and with the default
# history the earlier access's stack was sometimes lost ("failed to restore the stack"), and a write
# of an area's flags by its owner's area_pop was reported against that unknown read: the by-design
# page-map read of a recycled area (slab_at, suppressed) is the one other thread that reads them
# there.  2 runs in about 30 failed so, one of them in CI; none since in 3.
opts="suppressions=$PWD/tests/tsan.supp halt_on_error=1 exitcode=66 history_size=7"
cc -O1 -g -fsanitize=thread -Ilib tests/tsan_churn.c -o "$dir/tsan_churn" "$dir/lib/libuvmalloc.so.0.1.0" \
	-Wl,-rpath,"$(cd "$dir" && pwd)/lib" -pthread
TSAN_OPTIONS="$opts" "$dir/tsan_churn"
# The map classes (4-8 KiB objects in slabs, their free state in the headers): by default the churn's blocks of 4097-7168
# bytes are, and at UVM_SLAB_MAX=8K all of 4000-7999.
UVM_SLAB_MAX=8K TSAN_OPTIONS="$opts" "$dir/tsan_churn"
UVM_PROF_SAMPLE=4K UVM_PROF_UNWIND=libgcc TSAN_OPTIONS="$opts" "$dir/tsan_churn"
