#!/usr/bin/python3
"""tests/test_vmtrace.py VMTRACE TARGET PRELOAD MT - vmtrace against a workload with known counts.

Where BPF works (root or CAP_SYS_ADMIN, kernel BTF, uprobes): vmtrace -- TARGET with every allocation
sampled reports, from the library's exit snapshot, exactly the counters the workload printed itself
(counts, bytes, free-space shape and so fragmentation); its histograms and call sites hold every
allocation call, named in the workload's main(); the interval lines add up to the totals. -p attaches
to a running process and switches its sampling on through the descriptor. A traced multi-threaded
program that forks keeps working, children included (with 5-byte nop probe sites, Linux 6.18 killed
its children with SIGSEGV). Errors: no such process,
no library, bad arguments, and an unprivileged user told which capability is missing. Where BPF is
not permitted, the test says why and exits 77 (a skip), never a pass.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

from svgcheck import chromium, png_nonwhite_fraction, render

vmtrace, target, preload, mt = sys.argv[1:5]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args, **kw):
    return subprocess.run([vmtrace] + args, capture_output=True, text=True, timeout=120, **kw)


workdir = tempfile.TemporaryDirectory()
chart = os.path.join(workdir.name, "t.svg")
r = run(["--json", "-i", "0.2", "--sample", "1", "--", target])
if r.returncode in (3, 4):
    print("SKIP: vmtrace cannot trace here: " + r.stderr.strip())
    sys.exit(77)
if r.returncode != 0:
    fail("vmtrace exited %d: %s" % (r.returncode, r.stderr))
objs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
own = [o for o in objs if "calls" in o]
final = [o for o in objs if o.get("final")]
intervals = [o for o in objs if "interval_s" in o]
if len(own) != 1 or len(final) != 1 or not intervals:
    fail("expected the workload's line, interval lines and one final object:\n" + r.stdout)
own, final = own[0], final[0]
procs = final["processes"]
if len(procs) != 1:
    fail("one process traced, not %d" % len(procs))
stats = procs[0]["stats"]
for field, value in own.items():
    if field not in ("calls", "span", "slab_free_bytes", "requested_bytes", "handed_bytes", "metadata_bytes") and \
            stats[field] != value:
        fail("%s: vmtrace reported %d, the workload's uvm_stats %d" % (field, stats[field], value))
frag = 1 - own["largest_free"] / own["free_bytes"]
if abs(procs[0]["fragmentation"] - frag) > 1e-6 or own["free_count"] < 2 or frag <= 0:
    fail("fragmentation %f against %f from uvm_stats (free ranges %d)" % (procs[0]["fragmentation"], frag,
                                                                          own["free_count"]))
# The committed span's figures (issue 18) come with every snapshot: the exit one equals uvm_frag_stats'.
if procs[0]["span"] != own["span"]:
    fail("committed span %s, the workload's uvm_frag_stats %s" % (procs[0]["span"], own["span"]))
if procs[0]["slab_free_bytes"] != own["slab_free_bytes"]:
    fail("freed slab objects: the exit snapshot's counters say %d bytes, the workload's walk %d"
         % (procs[0]["slab_free_bytes"], own["slab_free_bytes"]))
# So do request rounding and metadata, equal to uvm_frag_stats' at exit.
for field in ("requested_bytes", "handed_bytes", "metadata_bytes"):
    if procs[0][field] != own[field]:
        fail("%s: the exit snapshot says %d, the workload's uvm_frag_stats %d" % (field, procs[0][field], own[field]))
if not 0 < own["requested_bytes"] < own["handed_bytes"] or own["metadata_bytes"] <= 0:
    fail("the workload's requests are not rounded up, or it has no metadata: %s" % own)
if own["span"]["free_count"] < 2 or own["span"]["largest_free"] >= own["span"]["free_bytes"]:
    fail("the workload's holes do not show in its committed span: %s" % own["span"])
for o in intervals:
    for p in o["processes"]:
        if not (p["span_free_bytes"] <= p["span_bytes"] and p["span_largest_free"] <= p["span_free_bytes"]):
            fail("an interval's span figures do not hold together: %s" % p)
        if p["rounding"] is not None and not 0 <= p["rounding"] < 1:
            fail("an interval's rounding is not a share of what it handed out: %s" % p)
        if abs(p["span_fragmentation"] - (1 - p["span_largest_free"] / p["span_free_bytes"] if p["span_free_bytes"] else 0)) > 1e-6:
            fail("an interval's span fragmentation is not 1 - largest / free: %s" % p)
calls = own["calls"]
if sum(final["size_hist"]) != calls or sum(final["latency_ns_hist"]) != calls:
    fail("histograms hold %d and %d allocations, the workload made %d" % (sum(final["size_hist"]),
                                                                          sum(final["latency_ns_hist"]), calls))
if final["events"]["sampled_allocs"] != calls:
    fail("sampled_allocs %d != %d" % (final["events"]["sampled_allocs"], calls))
# UVM_THP=auto (the default) judged at the huge first touches the workload's eight 3 MiB areas make: the first
# area's, and, while huge pages pay, the one crossing 16 MiB of them; a verdict at the first and at a turn.
with open("/sys/kernel/mm/transparent_hugepage/enabled") as thp:
    verdicts = (0, 0) if "[never]" in thp.read() else (1, 2)
if not verdicts[0] <= final["events"]["thp_verdicts"] <= verdicts[1] or \
        final["events"]["thp_small_verdicts"] > final["events"]["thp_verdicts"]:
    fail("thp verdicts %d (%d small), expected %d to %d" % (final["events"]["thp_verdicts"],
                                                             final["events"]["thp_small_verdicts"], *verdicts))
sites = final["sites"]
if not sites or not sites[0]["symbol"].startswith("main+") or "vmtrace_target" not in sites[0]["symbol"]:
    fail("the top call site is not the workload's main: %s" % sites[:2])
if sum(s["count"] for s in sites) != calls:
    fail("call sites hold %d calls, not %d" % (sum(s["count"] for s in sites), calls))
# The process's page faults (/proc/PID/stat): counted from zero for a command vmtrace started, so its
# start-up's show in the first interval; a rate is never negative.
faults = [p["minor_faults_per_s"] for o in intervals for p in o["processes"]]
if min(faults) < 0 or sum(p["minor_faults_per_s"] * p["span_s"] for o in intervals for p in o["processes"]) < 1:
    fail("the intervals' page faults do not add up to the command's: %s" % faults)
# The interval lines add up to the totals: rate x span, summed.
summed = sum(p["allocs_per_s"] * p["span_s"] for o in intervals for p in o["processes"])
if abs(summed - own["small_allocs"]) > 0.005 * own["small_allocs"] + 2:
    fail("the intervals add up to %.0f object allocations, the workload made %d" % (summed, own["small_allocs"]))
print("vmtrace -- target: %d counters equal, fragmentation %.3g, %d allocations sampled, %d intervals" %
      (len(own) - 1, frag, calls, len(intervals)))

# -p: a process already running gets its sampling switched on through the descriptor.
proc = subprocess.Popen([target, "--loop", "3"], stdout=subprocess.PIPE, text=True)
if proc.stdout.readline().strip() != "ready":
    fail("the looping target did not start")
r = run(["--json", "-i", "0.25", "-d", "1.5", "--sample", "50", "--svg", chart, "-p", str(proc.pid)])
proc.wait()
if r.returncode != 0:
    fail("vmtrace -p exited %d: %s" % (r.returncode, r.stderr))
objs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
lines = [p for o in objs if "interval_s" in o for p in o["processes"]]
final = objs[-1]
if not lines or any(p["pid"] != proc.pid for p in lines) or not any(p["allocs_per_s"] > 1000 for p in lines):
    fail("-p: no interval line shows the process allocating:\n" + r.stdout)
if final["events"]["sampled_allocs"] == 0 or sum(final["size_hist"]) == 0:
    fail("-p --sample: nothing was sampled, so the sampling period did not reach the process")
# --svg: the chart of the intervals, one point each, every series named in its tooltip, rendered.
with open(chart) as f:
    svg = f.read()
for name in ("resident", "live", "thread caches", "lazy", "pools", "free slab objects", "fragmentation"):
    if "<title>%s" % name not in svg:
        fail("the --svg chart has no %s series:\n%s" % (name, svg[:400]))
browser = chromium()
if browser:
    png = os.path.join(workdir.name, "t.png")
    if not render(browser, chart, png, 1280, 400) or png_nonwhite_fraction(png) < 0.02:
        fail("the --svg chart does not render in chromium")
print("vmtrace -p: %d interval lines, %d allocations sampled" % (len(lines), final["events"]["sampled_allocs"]))

# -p on the target preloaded too: it maps two copies of the allocator, libuvmalloc.so's, which it links,
# and the preload library's, whose names come first and which it uses: vmtrace must trace that one.
proc = subprocess.Popen([target, "--loop", "3"], stdout=subprocess.PIPE, text=True, env=dict(os.environ, LD_PRELOAD=preload))
if proc.stdout.readline().strip() != "ready":
    fail("the looping preloaded target did not start")
r = run(["--json", "-i", "0.25", "-d", "1.0", "-p", str(proc.pid)])
proc.wait()
lines = [p for line in r.stdout.splitlines() if line.startswith("{") for p in json.loads(line).get("processes", [])
         if "allocs_per_s" in p]
if r.returncode != 0 or not any(p["allocs_per_s"] > 1000 for p in lines):
    fail("-p on a linked and preloaded target: no line shows it allocating (the unused copy traced?):\n%s%s"
         % (r.stdout, r.stderr))
print("vmtrace -p, linked and preloaded: the preload library's copy traced, %d interval lines" % len(lines))

# A traced program that forks while its threads allocate: tests/mt, preloaded, its children followed.
for i in range(3):
    r = run(["-i", "10", "--sample", "100", "--", "env", "LD_PRELOAD=" + preload, mt])
    if r.returncode != 0 or "consumed 80000" not in r.stdout:
        fail("tests/mt under vmtrace (run %d): exit %d\n%s%s" % (i, r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
print("vmtrace -- mt: a forking, threaded program ran 3 times under the tracer")

# Errors, each with its exit status and a message that says what is wrong.
for args, code, words in (
        (["-p", "999999", "-d", "0.1"], 5, "no process"),
        (["--lib", "/nonexistent/libuvmalloc.so.0", "-d", "0.1"], 6, "library not found"),
        (["-p", str(os.getpid()), "-d", "0.1"], 6, "maps no libuvmalloc"),
        (["--bogus"], 2, "unknown option --bogus"),
        (["-x"], 2, "unknown option -x"),
        (["-i"], 2, "-i needs a value"),
        (["--interval=0"], 2, "-i needs a number of seconds"),
        (["stray"], 2, "unexpected argument stray"),
        (["--"], 2, "-- needs a command"),
        (["-p", "1", "--", "true"], 2, "exclude each other"),
        (["-i", "0"], 2, "-i needs a number of seconds"),
        (["-i", "1e30"], 2, "-i needs a number of seconds"),
        (["--sample", "-1"], 2, "--sample needs a whole number"),
        (["--sample", "99999999999"], 2, "--sample needs a whole number"),
        (["-d", "nan"], 2, "-d needs a number of seconds"),
        (["-d", "inf"], 2, "-d needs a number of seconds"),
        (["-p", "0"], 2, "-p needs a process id"),
        (["-p", "12x"], 2, "-p needs a process id"),
        (["-d", "5", "--", "/nonexistent/cmd"], 127, "cannot run /nonexistent/cmd")):
    r = run(args)
    if r.returncode != code or words not in r.stderr:
        fail("vmtrace %s: exit %d, expected %d with %r: %s" % (" ".join(args), r.returncode, code, words, r.stderr))
# A traced command's own exit status is vmtrace's (128 + N for signal N).
for cmd, code in ((["sh", "-c", "exit 7"], 7), (["sh", "-c", "kill -TERM $$"], 128 + 15)):
    r = run(["-i", "10", "--"] + cmd)
    if r.returncode != code:
        fail("vmtrace -- %s: exit %d, expected the command's %d" % (" ".join(cmd), r.returncode, code))
# Unprivileged = this same user with every capability dropped, so nothing depends on who may read the checkout.
r = subprocess.run(["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all",
                    vmtrace, "-d", "0.1"], capture_output=True, text=True, timeout=60)
if r.returncode != 3 or "CAP_SYS_ADMIN" not in r.stderr:
    fail("unprivileged: exit %d, expected 3 naming CAP_SYS_ADMIN: %s" % (r.returncode, r.stderr))
print("vmtrace: ok")
