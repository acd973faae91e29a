#!/bin/bash
# tests/test_postgres.sh PRELOAD VMINFO - a database server under libuvmalloc-preload.so: Debian's
# PostgreSQL, whose postmaster forks a process per connection, and every process of which (initdb's,
# the postmaster's, the backends', the background workers') allocates through the preload.
#  - initdb, then tests/programs/workload.sql through psql: its digests must equal a glibc run's;
#  - pgbench's TPC-B transactions from 4 clients: none may fail, and the balances of accounts,
#    tellers and branches must each add up to the deltas in the history, one row per transaction;
#  - amcheck's bt_index_check on every index of pgbench's tables, heap included;
#  - vminfo reads a live backend; each exiting process's UVM_STATS shows it allocated through us.
# As root, the server runs as the postgres user (initdb refuses root).
. "$(dirname "$0")/common.sh"
vminfo=$(realpath "$2")
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
port=$((20000 + $$ % 20000))
stop() { [ ! -f "$out/data/postmaster.pid" ] || as_pg "$bin/pg_ctl" -D "$out/data" -m fast -w stop > /dev/null || true; }
trap 'status=$?; [ $status = 0 ] || server_log; stop; rm -rf "$out"' EXIT
preload_copy "$(realpath "$1")"
[ "$(id -u)" != 0 ] || chown postgres "$out"
as_pg() { as_user postgres "$@"; }
uvm=(env LD_PRELOAD="$preload_copy" UVM_STATS=1)
psql_run() { as_pg "$bin/psql" -X -q -A -t -h "$out" -p "$port" -d postgres "$@"; }
start() { # start [env VAR=VALUE...]: the server, preloaded or not
	as_pg "$@" "$bin/pg_ctl" -D "$out/data" -l "$out/server.log" -w \
		-o "-p $port -k $out -c listen_addresses= -c fsync=off -c shared_buffers=32MB" start > /dev/null 2>> "$out/pg_ctl.err" # the preloaded pg_ctl's own UVM_STATS
}
server_log() { tail -20 "$out/server.log" 2>/dev/null || true; }

as_pg "${uvm[@]}" "$bin/initdb" -D "$out/data" -A trust -E UTF8 --locale=C --no-sync > "$out/initdb.log" 2>&1 ||
	fail "initdb under the preload: $(tail -5 "$out/initdb.log")"
uvm_stats_clean "$out/initdb.log"
echo "ok   initdb under the preload"

# The workload: glibc's malloc first, then ours; the digests must match.
start
psql_run -f "$root/tests/programs/workload.sql" > "$out/plain.out" || fail "workload.sql on glibc's malloc"
stop
start "${uvm[@]}"
psql_run -f "$root/tests/programs/workload.sql" > "$out/ours.out" || fail "workload.sql under the preload"
cmp -s "$out/plain.out" "$out/ours.out" || { diff "$out/plain.out" "$out/ours.out" | head; fail "workload.sql: digests differ"; }
echo "ok   workload.sql: $(wc -l < "$out/ours.out") digests equal to glibc's"

# While a backend runs a long query, vminfo reads it.
psql_run -c "SELECT count(*) FROM generate_series(1, 30000000)" > /dev/null &
query=$!
for _ in $(seq 100); do
	backend=$(psql_run -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT count(*) FROM generate_series%' AND pid <> pg_backend_pid()" | head -1)
	[ -z "$backend" ] || break
	sleep 0.1
done
[ -n "$backend" ] || fail "no backend ran the long query"
vminfo_busy "$vminfo" "$backend"
wait $query
echo "ok   vminfo read backend $backend: $(grep -E '^ +busy' "$out/vminfo.out" | tr -s ' ')"

# TPC-B from 4 clients, 500 transactions each; history is not truncated (-n after -i), so it holds them all.
as_pg "$bin/pgbench" -q -i -s 2 -h "$out" -p "$port" postgres > "$out/pgbench.log" 2>&1 || fail "pgbench -i: $(tail -3 "$out/pgbench.log")"
as_pg "$bin/pgbench" -n -c 4 -j 2 -t 500 -h "$out" -p "$port" postgres > "$out/pgbench.log" 2>&1 || fail "pgbench: $(tail -5 "$out/pgbench.log")"
grep -q "number of transactions actually processed: 2000/2000" "$out/pgbench.log" &&
	grep -q "number of failed transactions: 0 " "$out/pgbench.log" || { cat "$out/pgbench.log"; fail "pgbench: transactions lost or failed"; }
sums=$(psql_run -c "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),
	(SELECT sum(bbalance) FROM pgbench_branches), (SELECT sum(delta) FROM pgbench_history), (SELECT count(*) FROM pgbench_history)")
IFS='|' read -r a t b d n <<< "$sums"
[ "$a" = "$d" ] && [ "$t" = "$d" ] && [ "$b" = "$d" ] && [ "$n" = 2000 ] ||
	fail "pgbench: balances $a, $t, $b against history $d in $n rows (2000 transactions)"
echo "ok   pgbench: 2000 transactions, balances and history agree ($d in $n rows)"

checked=$(psql_run -c "CREATE EXTENSION amcheck" -c "SELECT count(bt_index_check(c.oid, true)) FROM pg_index i
	JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class r ON r.oid = i.indrelid
	WHERE r.relname LIKE 'pgbench_%' AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'btree')") ||
	fail "amcheck found a corrupt index"
[ "$checked" -ge 3 ] || fail "amcheck checked $checked indexes, not pgbench's 3"
echo "ok   amcheck: $checked indexes and their tables consistent"

stop
uvm_stats_clean "$out/server.log"
echo "ok   $(grep -c '^uvmalloc: objects' "$out/server.log") server processes allocated through the preload"
