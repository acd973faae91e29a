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
set -euo pipefail
preload=$(realpath "$1") vminfo=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work=$(mktemp -d)
port=$((20000 + $$ % 20000))
stop() { [ ! -f "$work/data/postmaster.pid" ] || as_pg "$bin/pg_ctl" -D "$work/data" -m fast -w stop > /dev/null || true; }
trap 'stop; rm -rf "$work"' EXIT

# The preload and libuvmalloc.so.0 beside it in a directory the server's user can read (a build
# directory under /root is not).
cp "$preload" "$work/"
cp -L "$(dirname "$preload")/../lib/libuvmalloc.so.0" "$work/"
chmod 755 "$work" "$work"/*.so*
if [ "$(id -u)" = 0 ]; then
	chown postgres "$work"
	as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups -- env HOME="$work" "$@"; }
else
	as_pg() { "$@"; }
fi
uvm=(env LD_LIBRARY_PATH="$work" LD_PRELOAD="$work/$(basename "$preload")" UVM_STATS=1)
psql_run() { as_pg "$bin/psql" -X -q -A -t -h "$work" -p "$port" -d postgres "$@"; }
start() { # start [env VAR=VALUE...]: the server, preloaded or not
	as_pg "$@" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w \
		-o "-p $port -k $work -c listen_addresses= -c fsync=off -c shared_buffers=32MB" start > /dev/null 2>> "$work/pg_ctl.err" # the preloaded pg_ctl's own UVM_STATS
}
fail() { echo "FAIL $*"; tail -20 "$work/server.log" 2>/dev/null; exit 1; }

as_pg "${uvm[@]}" "$bin/initdb" -D "$work/data" -A trust -E UTF8 --locale=C --no-sync > "$work/initdb.log" 2>&1 ||
	fail "initdb under the preload: $(tail -5 "$work/initdb.log")"
grep -q "^uvmalloc: objects [1-9]" "$work/initdb.log" || fail "initdb: UVM_STATS shows no allocation"
echo "ok   initdb under the preload"

# The workload: glibc's malloc first, then ours; the digests must match.
start
psql_run -f "$here/programs/workload.sql" > "$work/plain.out" || fail "workload.sql on glibc's malloc"
stop
start "${uvm[@]}"
psql_run -f "$here/programs/workload.sql" > "$work/ours.out" || fail "workload.sql under the preload"
cmp -s "$work/plain.out" "$work/ours.out" || { diff "$work/plain.out" "$work/ours.out" | head; fail "workload.sql: digests differ"; }
echo "ok   workload.sql: $(wc -l < "$work/ours.out") digests equal to glibc's"

# While a backend runs a long query, vminfo reads it.
psql_run -c "SELECT count(*) FROM generate_series(1, 30000000)" > /dev/null &
query=$!
for _ in $(seq 100); do
	backend=$(psql_run -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT count(*) FROM generate_series%' AND pid <> pg_backend_pid()" | head -1)
	[ -z "$backend" ] || break
	sleep 0.1
done
[ -n "$backend" ] || fail "no backend ran the long query"
"$vminfo" --summary "$backend" > "$work/vminfo.out" 2>&1 || { cat "$work/vminfo.out"; fail "vminfo on backend $backend"; }
grep -Eq "busy +[0-9.]+ [KMG]?i?B in [1-9][0-9]* areas" "$work/vminfo.out" || { cat "$work/vminfo.out"; fail "vminfo shows no busy areas"; }
wait $query
echo "ok   vminfo read backend $backend: $(grep -E '^ +busy' "$work/vminfo.out" | tr -s ' ')"

# TPC-B from 4 clients, 500 transactions each; history is not truncated (-n after -i), so it holds them all.
as_pg "$bin/pgbench" -q -i -s 2 -h "$work" -p "$port" postgres > "$work/pgbench.log" 2>&1 || fail "pgbench -i: $(tail -3 "$work/pgbench.log")"
as_pg "$bin/pgbench" -n -c 4 -j 2 -t 500 -h "$work" -p "$port" postgres > "$work/pgbench.log" 2>&1 || fail "pgbench: $(tail -5 "$work/pgbench.log")"
grep -q "number of transactions actually processed: 2000/2000" "$work/pgbench.log" &&
	grep -q "number of failed transactions: 0 " "$work/pgbench.log" || { cat "$work/pgbench.log"; fail "pgbench: transactions lost or failed"; }
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
grep -q "^uvmalloc: objects [1-9]" "$work/server.log" || fail "the server's processes show no allocation in UVM_STATS"
! grep -E "uvmalloc: .*(invalid|double free|corrupt)" "$work/server.log" || fail "uvmalloc reported a bad pointer"
echo "ok   $(grep -c '^uvmalloc: objects' "$work/server.log") server processes allocated through the preload"
