#!/bin/bash
# tests/test_mariadb.sh PRELOAD VMINFO - a threaded database server under libuvmalloc-preload.so:
# Debian's MariaDB, one process with a thread per connection, its InnoDB threads beside them.
#  - tests/programs/workload-mariadb.sql through one connection: its digests must equal a run on
#    glibc's malloc;
#  - sysbench's oltp_read_write from 16 connection threads, 4 000 transactions, while vminfo reads
#    the server: every transaction done, each table still holds its rows (every delete is undone by
#    an insert of the same id in its transaction), CHECK TABLE finds every table and index sound;
#  - the server's UVM_STATS at exit shows it allocated through us, and no bad pointer was reported.
# As root, the server runs as the mysql user (mariadbd's own --user); as anyone else, as them.
. "$(dirname "$0")/common.sh"
vminfo=$(realpath "$2")
trap 'status=$?; [ $status = 0 ] || tail -20 "$out/server.log" 2>/dev/null; stop; rm -rf "$out"' EXIT
preload_copy "$(realpath "$1")"
# As root, the server's files and process are the mysql user's; as anyone else, our own.
as_mysql=()
[ "$(id -u)" != 0 ] || { chown mysql "$out"; as_mysql=(--user=mysql); }
uvm=(env LD_PRELOAD="$preload_copy" UVM_STATS=1)
sql() { mariadb --no-defaults -S "$out/sock" -N -B "$@"; }
sysbench_run() {
	sysbench --db-driver=mysql --mysql-socket="$out/sock" --mysql-user=root --mysql-db=sbtest --tables=4 \
		--table-size=10000 "$@"
}
# start [env VAR=VALUE...]: the server, preloaded or not, until it answers.  UVM_STATS goes to the
# stderr the library found at set-up (stats.c), not to --log-error's, which the server opens later.
start() {
	"$@" mariadbd --no-defaults "${as_mysql[@]}" --datadir="$out/data" --socket="$out/sock" --pid-file="$out/pid" \
		--skip-networking --skip-grant-tables --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 \
		--log-error="$out/server.log" 2>> "$out/stats.log" &
	for _ in $(seq 300); do
		! sql -e "SELECT 1" > /dev/null 2>&1 || return 0
		sleep 0.1
	done
	kill $! 2> /dev/null || true # so that the exit's wait does not hang on it
	fail "mariadbd did not answer"
}
stop() { # the server shut down (killed if it does not take the command), and its exit (UVM_STATS) waited for
	[ ! -S "$out/sock" ] || sql -e "SHUTDOWN" 2> /dev/null || kill "$(cat "$out/pid")" 2> /dev/null || true
	wait
}

mariadb-install-db --no-defaults "${as_mysql[@]}" --datadir="$out/data" --auth-root-authentication-method=normal \
	--skip-test-db > "$out/install.log" 2>&1 || { cat "$out/install.log"; fail "mariadb-install-db"; }

# The workload: glibc's malloc first, then ours; the digests must match.
start
sql < "$root/tests/programs/workload-mariadb.sql" > "$out/plain.out" || fail "workload-mariadb.sql on glibc's malloc"
stop
start "${uvm[@]}"
sql < "$root/tests/programs/workload-mariadb.sql" > "$out/ours.out" || fail "workload-mariadb.sql under the preload"
cmp -s "$out/plain.out" "$out/ours.out" || { diff "$out/plain.out" "$out/ours.out" | head; fail "workload-mariadb.sql: digests differ"; }
echo "ok   workload-mariadb.sql: $(wc -l < "$out/ours.out") digests equal to glibc's"

# sysbench from 16 threads; vminfo reads the server while they run.
sql -e "CREATE DATABASE sbtest"
sysbench_run oltp_read_write prepare > "$out/prepare.log" 2>&1 || { cat "$out/prepare.log"; fail "sysbench prepare"; }
sysbench_run --threads=16 --events=4000 --time=0 oltp_read_write run > "$out/sysbench.log" 2>&1 &
bench=$!
sleep 1
vminfo_busy "$vminfo" "$(cat "$out/pid")"
wait $bench || { cat "$out/sysbench.log"; fail "sysbench run"; }
grep -Eq "transactions: +4000 " "$out/sysbench.log" || { cat "$out/sysbench.log"; fail "sysbench: not every transaction done"; }
echo "ok   sysbench oltp_read_write: 4000 transactions from 16 threads ($(awk '/ignored errors:/ {print $3}' "$out/sysbench.log") deadlocks retried)"
echo "ok   vminfo read mariadbd: $(grep -E '^ +busy' "$out/vminfo.out" | tr -s ' ')"
for i in 1 2 3 4; do
	rows=$(sql -e "SELECT count(*) FROM sbtest.sbtest$i")
	[ "$rows" = 10000 ] || fail "sbtest$i holds $rows rows, not 10000"
done
checked=$(sql -e "CHECK TABLE sbtest.sbtest1, sbtest.sbtest2, sbtest.sbtest3, sbtest.sbtest4 EXTENDED" | awk '$3 == "status"')
[ "$(echo "$checked" | grep -c 'OK$')" = 4 ] || { echo "$checked"; fail "CHECK TABLE"; }
echo "ok   4 tables of 10000 rows, CHECK TABLE ... EXTENDED: OK"

stop
uvm_stats_clean "$out/stats.log" "$out/server.log"
echo "ok   mariadbd allocated through the preload: $(grep -m1 '^uvmalloc: objects' "$out/stats.log")"
