#!/usr/bin/env python3
"""tests/test_vminfo.py VMINFO TARGET FAKE - vminfo against live processes.

A target allocates areas of known sizes from known functions and waits;
vminfo must report exactly those areas, sizes, callers and page counts, the
unpurged ones after frees, and a summary equal to the target's own
uvm_stats.  --json is parsed and checked; every error is provoked; a busy
multi-threaded target is read in a loop; the SVG is rendered in headless
Chromium and must not be blank.  A target with a million areas is read in
bounded time and memory; a target that corrupts its own descriptor, trees,
lists and regions word by word (and with random garbage) must get a clear
error or a report, never a crash, a hang or "changed under every retry"
(it stands still).  VMINFO_FUZZ_RUNS sets the random corruptions (default
200, as CI runs it; 5000 by hand).
"""
import json, os, re, resource, shutil, subprocess, sys, tempfile, time, unittest

from svgcheck import chromium, png_nonwhite_fraction, render

VMINFO, TARGET, FAKE = sys.argv[1:4]
del sys.argv[1:4]


class Target:
    """A target process that runs until its stdin closes."""

    def __init__(self, *args, env=None, argv=None, user=None):
        cmd = (argv or [TARGET]) + list(args)
        e = dict(os.environ, **(env or {}))
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=e)
        self.lines = []
        for line in self.p.stdout:
            if line.strip() == "ready":
                break
            self.lines.append(line.split())

    def stop(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)
        self.p.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            self.stop()


def vminfo(*args, user_prefix=()):
    r = subprocess.run(list(user_prefix) + [VMINFO] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def stats_of(t):
    for words in t.lines:
        if words[0] == "stats":
            return {k: int(v) for k, v in (w.split("=") for w in words[1:])}
    raise AssertionError("the target printed no stats")


NO_CACHES = {"UVM_PCP": "0", "UVM_LAZY_MAX": "1000000"}
# Root with every capability dropped: ptrace refuses it a target that holds capabilities it lacks, and, being
# the same user, it still reads the checkout wherever it was cloned (another user may not be able to).
NO_CAPS = ("setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all")


class Areas(unittest.TestCase):
    def test_text_lists_exactly_the_areas(self):
        # The target links libuvmalloc.so; preloaded too, it maps a second copy of the allocator, the preload
        # library's, whose names come first: vminfo must read that one, the one in use (target.c).
        for env in (NO_CACHES, dict(NO_CACHES, LD_PRELOAD=os.environ["VMINFO_PRELOAD"])):
            with self.subTest(preloaded="LD_PRELOAD" in env), Target(env=env) as t:
                self.lists_exactly_the_areas(t)

    def lists_exactly_the_areas(self, t):
        rc, out, err = vminfo(t.p.pid)
        self.assertEqual(rc, 0, err)
        for words in t.lines:
            if words[0] == "area":
                start, size, fn = int(words[1], 16), int(words[2]), words[3]
                pages = size // 4096
                pat = r"^0x%016x-0x%016x %7d %s\+0x[0-9a-f]+/0x[0-9a-f]+ \[vminfo_target\] pages=%d vmalloc( huge)? N0=%d$" % (
                    start, start + size + 4096, size + 4096, fn, pages, pages)
                self.assertRegex(out, re.compile(pat, re.M), "no line for %s area of %d bytes" % (fn, size))
            if words[0] == "freed":
                start, size = int(words[1], 16), int(words[2])
                line = "0x%016x-0x%016x %7d unpurged vm_area" % (start, start + size + 4096, size + 4096)
                self.assertIn(line, out)
        live = [l for l in out.splitlines() if " vmalloc" in l]
        self.assertEqual(len(live), stats_of(t)["busy_count"], "areas listed against uvm_stats busy_count")

    def test_summary_matches_uvm_stats(self):
        for env in (NO_CACHES, {}):
            with Target(env=env) as t:
                st = stats_of(t)
                rc, out, err = vminfo("--json", t.p.pid)
                self.assertEqual(rc, 0, err)
                doc = json.loads(out)
                self.assertEqual(doc["schema"], "uvmalloc.vminfo/1")
                s = doc["summary"]
                for k in ("busy_bytes", "busy_count", "cached_bytes", "cached_count", "lazy_bytes", "lazy_count",
                          "pooled_bytes", "pooled_count", "free_bytes", "free_count", "largest_free", "purges",
                          "madvise_calls", "mmap_calls", "slabs", "allocs", "frees",
                          "span_bytes", "span_free_bytes", "span_free_count", "span_largest_free",
                          "rounding_bytes", "metadata_bytes"):
                    self.assertEqual(s[k], st[k], "%s: vminfo %d, uvm_stats %d (env %s)" % (k, s[k], st[k], env))
                self.assertAlmostEqual(s["fragmentation"], 1 - s["largest_free"] / s["free_bytes"], places=5)
                # The committed span's figure is uvm_frag_stats' (issue 18): free ranges clipped at the committed tops.
                self.assertGreater(s["span_free_count"], 0)
                self.assertAlmostEqual(s["span_fragmentation"], 1 - s["span_largest_free"] / s["span_free_bytes"], places=5)
                self.assertGreater(s["rss_kb"], 0)
                # The process's own faults (/proc/PID/stat): its start-up alone maps pages in.
                self.assertGreater(s["minor_faults"], 0)
                self.assertGreaterEqual(s["major_faults"], 0)
                self.assertEqual(s["rounding_bytes"], 3000, "the big tables are 1000 and 2000 bytes short of their pages")
                self.assertGreater(s["metadata_bytes"], 0)
                self.assertEqual(len(doc["areas"]), st["busy_count"])
                for a in doc["areas"]:
                    self.assertEqual(a["size"], a["end"] - a["start"])
                    self.assertEqual(a["pages"], a["size"] // 4096 - 1)

    def test_unfiled_tails_count_as_thread_cached(self):
        # vrealloc's shrinks keep their tails unfiled, in the span of the area they came from: vminfo finds each
        # through the page map and counts them as uvm_stats does, and lists only the live areas.
        with Target("spans") as t:
            st = stats_of(t)
            rc, out, err = vminfo("--json", t.p.pid)
            self.assertEqual(rc, 0, err)
            s = json.loads(out)["summary"]
            self.assertEqual((s["cached_count"], s["cached_bytes"]), (st["cached_count"], st["cached_bytes"]))
            self.assertEqual(st["cached_count"], 12, "two tails of each of the six areas")
            self.assertEqual(st["cached_bytes"], 6 * 60 * 4096)
            live = [l for l in vminfo(t.p.pid)[1].splitlines() if " vmalloc" in l]
            self.assertEqual(len(live), 6)
            self.assertTrue(all(" pages=4 " in l for l in live), live)

    def test_sort_top_and_summary_only(self):
        with Target(env=NO_CACHES) as t:
            rc, out, _ = vminfo("--sort", "size", t.p.pid)
            sizes = [int(l.split()[1]) for l in out.splitlines() if " vmalloc" in l]
            self.assertEqual(sizes, sorted(sizes, reverse=True))
            rc, out, _ = vminfo("--top", "2", "--summary", t.p.pid)
            self.assertNotIn(" vmalloc", out)
            top = out[out.index("top callers"):].splitlines()[1:3]
            self.assertIn("alloc_big_table", top[0], out)
            self.assertIn(str((1 << 20) + (2 << 20) + 2 * 4096), top[0])
            self.assertIn("alloc_small_records", top[1], out)
            rc, out, _ = vminfo("--sort", "bogus", t.p.pid)
            self.assertEqual(rc, 2)

    def test_summary_sizes_for_a_person_or_exact_with_bytes(self):
        with Target(env=NO_CACHES) as t:
            rc, out, _ = vminfo("--summary", t.p.pid)
            self.assertRegex(out, r"\n  reserved +64\.0 GiB in 1 regions\n", "units for a person by default")
            self.assertRegex(out, r"\n  busy +\d+(\.\d+)? (B|KiB|MiB|GiB) in \d+ areas")
            rc, out, _ = vminfo("--summary", "--bytes", t.p.pid)
            rc, js, _ = vminfo("--json", "--summary", t.p.pid)
            reserved = json.loads(js)["summary"]["reserved_bytes"]
            self.assertRegex(out, r"\n  reserved +%d B in 1 regions\n" % reserved, "--bytes: the JSON's exact count")

    def test_watch_repeats(self):
        with Target(env=NO_CACHES) as t:
            p = subprocess.Popen([VMINFO, "--summary", "--watch", "0.2", str(t.p.pid)], stdout=subprocess.PIPE, text=True)
            time.sleep(1.5)
            p.terminate()
            out = p.communicate(timeout=10)[0]
            self.assertGreaterEqual(out.count("summary:"), 3)
            for bad in ("nan", "inf", "1e30", "0", "-1", "2x"):
                rc, _, err = vminfo("--summary", "--watch", bad, t.p.pid)
                self.assertEqual(rc, 2, bad)
                self.assertIn("--watch takes a number of seconds", err)

    def test_huge_page_mode_and_verdict(self):
        """UVM_THP and auto's verdict: a mode that judges nothing says so; under auto, eight fresh areas of 3 MiB
        have the process's first one's first touch timed, and the one that crosses 16 MiB of huge bodies while huge
        pages pay (after a first sample that says they do not, the next areas are small and untimed), with both
        means read."""
        with Target(env={"UVM_THP": "never"}) as t:
            rc, out, err = vminfo("--json", t.p.pid)
            self.assertEqual(rc, 0, err)
            self.assertEqual(json.loads(out)["summary"]["thp"]["mode"], "never")
            rc, out, err = vminfo("--summary", t.p.pid)
            self.assertIn("huge pages    UVM_THP=never\n", out)
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            if "[never]" in f.read():
                self.skipTest("transparent huge pages are off on this kernel: nothing to time")
        with Target("huge", env={"UVM_THP": "auto"}) as t:
            rc, out, err = vminfo("--json", t.p.pid)
            self.assertEqual(rc, 0, err)
            h = json.loads(out)["summary"]["thp"]
            self.assertEqual(h["mode"], "auto", h)
            self.assertIn(h["samples"], (1, 2), h)
            self.assertGreater(h["huge_ns"], 0)
            self.assertGreater(h["small_ns"], 0)
            self.assertIsInstance(h["pays"], bool)
            rc, out, err = vminfo("--summary", t.p.pid)
            self.assertRegex(out, r"huge pages    UVM_THP=auto: they (do not )?pay \(first touch [0-9.]+ us, running mean "
                             r"of [12] timed; 512 small pages [0-9.]+ us\); [0-9.]+ [KMG]?i?B of candidates got small pages")


class Errors(unittest.TestCase):
    def test_no_such_process(self):
        rc, _, err = vminfo(2 ** 22 + 12345)
        self.assertEqual(rc, 11)
        self.assertIn("no such process", err)

    def test_not_uvmalloc(self):
        with Target(argv=["sh", "-c", "echo ready; cat >/dev/null"]) as t:
            rc, _, err = vminfo(t.p.pid)
            self.assertEqual(rc, 13)
            self.assertIn("does not use uvmalloc", err)

    def test_not_set_up(self):
        with Target("idle") as t:
            rc, _, err = vminfo(t.p.pid)
            self.assertEqual(rc, 14)
            self.assertIn("has not allocated yet", err)

    def test_unknown_version(self):
        with Target(argv=[FAKE]) as t:
            rc, _, err = vminfo(t.p.pid)
            self.assertEqual(rc, 15)
            self.assertIn("version", err)

    def test_permission_denied(self):
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0 or not setpriv:
            self.skipTest("needs root and setpriv to read a process without capabilities")
        with Target(env=NO_CACHES) as t:
            rc, _, err = vminfo(t.p.pid, user_prefix=NO_CAPS)
            self.assertEqual(rc, 12, err)
            self.assertIn("permission denied", err)
            self.assertIn("ptrace", err)

    def test_exit_during_reads(self):
        """A target that exits while vminfo reads: every run ends in a report or a clear no-such-process."""
        seen = set()
        for _ in range(10):
            t = Target("hammer")
            p = subprocess.Popen([VMINFO, str(t.p.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            t.p.kill()
            t.p.wait()
            err = p.communicate(timeout=60)[1]
            self.assertIn(p.returncode, (0, 11), err)
            seen.add(p.returncode)
            if p.returncode == 11:
                self.assertIn("no such process", err)
        self.assertIn(11, seen, "the kill never landed during a read")


class Slabs(unittest.TestCase):
    def test_class_table_of_quarter_full_slabs(self):
        """Four slabs of 32-byte objects, three of every four freed: vminfo reads their headers (issue 18)."""
        with Target("slabs") as t:
            own = {k: int(v) for k, v in (w.split("=") for w in t.lines[-1][1:])}
            rc, out, err = vminfo("--json", "--summary", t.p.pid)
            self.assertEqual(rc, 0, err)
            s = json.loads(out)["summary"]
            k = [c for c in s["classes"] if c["size"] == 32]
            self.assertEqual(len(k), 1, s["classes"])
            live, free = own["kept"], own["objects"] - own["kept"]
            self.assertEqual((k[0]["slabs"], k[0]["live"], k[0]["free"], k[0]["never_used"]), (4, live, free, 0))
            # Of the free ones, the first 64 frees are in the thread's hand; none waits (no other thread freed).
            self.assertEqual((k[0]["waiting"], k[0]["in_hand"], k[0]["orphans"]), (0, 64, 0))
            self.assertEqual(k[0]["occupancy"], [0, 0, 4, 0, 0], "a quarter full is the 25-50 % bucket")
            self.assertEqual(s["slabs_unread"], 0)
            self.assertEqual(s["live_bytes"], own["live_bytes"], "vminfo's live bytes against uvm_frag_stats'")
            self.assertEqual(s["slab_free_bytes"], own["slab_free_bytes"])
            self.assertEqual(s["overhead_bytes"], max(s["rss_kb"] * 1024 - s["live_bytes"], 0))
            rc, out, err = vminfo("--summary", t.p.pid)
            self.assertEqual(rc, 0, err)
            self.assertRegex(out, r"(?m)^ +32 +4 +0 +%d +%d +0 +64 +0 +%d +0 +0 +4 +0 +0$" % (live, free, free * 32))

    def test_orphans_and_the_frees_that_wait_for_them(self):
        """A thread's two slabs left behind when it exits: orphans, and a tenth of their objects freed by another
        thread wait on them (an orphan's objects go home, not into the freer's hand)."""
        with Target("orphans") as t:
            own = {k: int(v) for k, v in (w.split("=") for w in t.lines[-1][1:])}
            rc, out, err = vminfo("--json", "--summary", t.p.pid)
            self.assertEqual(rc, 0, err)
            k = [c for c in json.loads(out)["summary"]["classes"] if c["size"] == 96]
            self.assertEqual(len(k), 1, out)
            freed = own["freed"]
            self.assertEqual((k[0]["slabs"], k[0]["orphans"], k[0]["live"], k[0]["free"], k[0]["waiting"], k[0]["in_hand"]),
                             (2, 2, own["objects"] - freed, freed, freed, 0))
            rc, out, err = vminfo("--summary", t.p.pid)
            self.assertEqual(rc, 0, err)
            self.assertRegex(out, r"(?m)^ +96 +2 +2 +%d +%d +%d +0 " % (own["objects"] - freed, freed, freed))


class Hammer(unittest.TestCase):
    def test_reads_of_a_busy_target_are_consistent(self):
        with Target("hammer") as t:
            for _ in range(15):
                rc, out, err = vminfo("--json", t.p.pid)
                self.assertEqual(rc, 0, err)
                doc = json.loads(out)
                s = doc["summary"]
                self.assertEqual(len(doc["areas"]), s["busy_count"])
                self.assertEqual(sum(a["size"] for a in doc["areas"]), s["busy_bytes"])
                self.assertEqual(len(doc["unpurged"]), s["lazy_count"])
                # Each vmap node's trees are read whole between equal sequence values: no overlap inside one.
                for kind in ("areas", "unpurged"):
                    for vnode in {a["vnode"] for a in doc[kind]}:
                        spans = sorted((a["start"], a["end"]) for a in doc[kind] if a["vnode"] == vnode)
                        for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
                            self.assertLessEqual(e1, s2, "overlapping %s in vmap node %d" % (kind, vnode))
                for a in doc["areas"] + doc["unpurged"]:
                    self.assertEqual(a["size"] % 4096, 0)
                    self.assertGreaterEqual(a["size"], 8192, "an area with no usable page")

    def test_reads_of_a_growing_target_are_consistent(self):
        """Regions added while vminfo reads: the snapshot is retaken, never called corrupt (it was in 23 of 51 reads)."""
        with Target("grow", env={"UVM_ARENA_SIZE": "64M"}) as t:
            deadline, reads, regions = time.monotonic() + 20, 0, 0
            while regions < 14 and time.monotonic() < deadline:
                rc, out, err = vminfo("--json", t.p.pid)
                self.assertEqual(rc, 0, err)
                doc = json.loads(out)
                regions, reads = doc["summary"]["regions"], reads + 1
                self.assertEqual(len(doc["areas"]), doc["summary"]["busy_count"])
            self.assertEqual(regions, 14, "the target stopped growing early")
            self.assertGreater(reads, 2)


def run_measured(args, limit_bytes=2 << 30):
    """vminfo ARGS under an address-space limit: (status, stdout, stderr, seconds)."""
    def lim():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    start = time.monotonic()
    p = subprocess.Popen([VMINFO] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=lim)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("vminfo %s ran over 60 s" % args)
    return p.returncode, out, err, time.monotonic() - start


class Large(unittest.TestCase):
    def test_a_million_areas(self):
        """1M live areas: read whole in seconds, within 1 GiB of address space (measured: 73 MB of RSS)."""
        n = 1000000
        with Target("many", str(n), env=NO_CACHES) as t:
            rc, out, err, secs = run_measured(["--json", "--summary", t.p.pid])
            self.assertEqual(rc, 0, err)
            self.assertEqual(json.loads(out)["summary"]["busy_count"], n)
            self.assertLess(secs, 20, "1M areas read in %.1f s" % secs)
            p = subprocess.run(["sh", "-c", 'ulimit -v 1048576; "$0" --summary "$1" >/dev/null; echo $?', VMINFO,
                                str(t.p.pid)], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.stdout.strip(), "0", "vminfo needs over 1 GiB of address space for 1M areas: "
                             + p.stderr)
            print("\n1M areas: %.2f s" % secs, file=sys.stderr)


# What vminfo may answer a target that corrupted itself: a report, not uvmalloc, not set up, an unknown
# version, or "inconsistent".  Never 16 (it stands still) and never a signal.
CORRUPT_OK = (0, 13, 14, 15, 17)


class Hostile(unittest.TestCase):
    """tests/vminfo_target.c corrupt: one word (or 64 random bytes) of its state at a time, put back after."""

    def setUp(self):
        self.t = Target("corrupt", env=NO_CACHES)

    def tearDown(self):
        self.t.stop()

    def ask(self, line):
        self.t.p.stdin.write(line + "\n")
        self.t.p.stdin.flush()
        self.assertEqual(self.t.p.stdout.readline().strip(), "ready")

    def check(self, kind, seed):
        self.ask("c %s %d" % (kind, seed))
        rc, _, err, secs = run_measured(["--summary", self.t.p.pid])
        self.ask("r")
        self.assertIn(rc, CORRUPT_OK, "%s %d: status %d: %s" % (kind, seed, rc, err))
        self.assertLess(secs, 10, "%s %d took %.1f s" % (kind, seed, secs))
        if rc == 17:
            self.assertRegex(err, r"inconsistent allocator state \(.+\)")
        return rc

    def test_each_structure_word_by_word(self):
        for kind in ("desc", "busy", "lazy", "free", "region", "count", "cache", "seq"):
            seen = {self.check(kind, seed) for seed in range(12)}
            if kind != "cache":  # a broken thread-cache list only shortens the approximate counters
                self.assertIn(17, seen, kind + ": no corruption was ever found")
        rc, _, err, _ = run_measured([self.t.p.pid])
        self.assertEqual(rc, 0, "the state put back must read cleanly: " + err)

    def test_fuzz(self):
        runs = int(os.environ.get("VMINFO_FUZZ_RUNS", "200"))
        seen = {}
        for seed in range(runs):
            rc = self.check("any" if seed % 2 else "garbage", seed)
            seen[rc] = seen.get(rc, 0) + 1
        print("\nfuzz %d runs: statuses %s" % (runs, sorted(seen.items())), file=sys.stderr)


class Svg(unittest.TestCase):
    def test_svg_renders_in_chromium(self):
        browser = chromium()
        if not browser:
            self.skipTest("Debian's chromium is not installed (CI installs it)")
        with Target(env=NO_CACHES) as t, tempfile.TemporaryDirectory() as d:
            svg, png = os.path.join(d, "v.svg"), os.path.join(d, "v.png")
            rc, _, err = vminfo("--summary", "--svg", svg, t.p.pid)
            self.assertEqual(rc, 0, err)
            with open(svg) as f:
                text = f.read()
            for word in ("busy", "thread-cached", "lazy", "pooled", "free", "MiB"):
                self.assertIn(word, text)
            # Every range has a tooltip: its state, size and place, and a live area its caller (issue 18).
            for words in t.lines:
                if words[0] == "area":
                    self.assertRegex(text, r"<title>busy %d bytes at %s, from %s\+" % (int(words[2]) + 4096, words[1], words[3]))
            self.assertRegex(text, r"<title>free \d+ bytes at 0x[0-9a-f]+")
            self.assertTrue(render(browser, svg, png, 1240, 260), "chromium made no screenshot")
            share = png_nonwhite_fraction(png)
            self.assertGreater(share, 0.03, "the rendered SVG is (nearly) blank: %.4f of pixels are not white" % share)

    def test_holes_show_at_their_places(self):
        """1000 areas of 64 KiB, every other one freed and purged: 499 holes of 68 KiB between live areas."""
        with Target("holes") as t, tempfile.TemporaryDirectory() as d:
            own = {k: int(v) for k, v in (w.split("=") for w in t.lines[-1][1:])}
            svg = os.path.join(d, "h.svg")
            rc, out, err = vminfo("--json", "--summary", "--svg", svg, t.p.pid)
            self.assertEqual(rc, 0, err)
            s = json.loads(out)["summary"]
            self.assertEqual(s["span_free_count"], own["span_free_count"])
            self.assertGreaterEqual(s["span_free_count"], 499)
            # The largest free range is the committed top or a hole: every other hole counts as fragmented.
            self.assertGreaterEqual(s["span_fragmentation"], 498 * 69632 / s["span_free_bytes"] - 1e-6)
            with open(svg) as f:
                holes = re.findall(r"<title>free 69632 bytes at (0x[0-9a-f]+)</title>", f.read())
            self.assertGreaterEqual(len(holes), 499, "the holes are not in the picture")

    def test_watch_draws_the_reads_over_time(self):
        """vminfo --watch --svg: the chart of every read so far above the address space, without BPF."""
        with tempfile.TemporaryDirectory() as d:
            svg = os.path.join(d, "w.svg")
            self.watch_a_busy_target(svg)
            with open(svg) as f:
                text = f.read()
            self.assertRegex(text, r"over \d+ reads \(vminfo --watch\)")
            for name in ("resident", "live", "thread caches", "lazy", "pools", "free slab objects", "metadata",
                         "fragmentation"):
                self.assertRegex(text, r"<title>%s[^<]*: last " % re.escape(name), "no %s series" % name)
            points = re.search(r'<polyline[^>]*points="([^"]*)"><title>resident', text).group(1).split()
            self.assertGreaterEqual(len(points), 3, "one point per read")
            # The chart is drawn by the code vmtrace's --svg uses, which tests/test_vmtrace.py renders in Chromium;
            # a render of this file (a thousand tooltips) hung Chromium now and then at the end of the whole suite.
            self.assertTrue(text.rstrip().endswith("</svg>"), "the file is not whole")

    def watch_a_busy_target(self, svg):
        with Target("hammer") as t:
            p = subprocess.Popen([VMINFO, "--summary", "--watch", "0.1", "--svg", svg, str(t.p.pid)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            reads, deadline = 0, time.time() + 60
            while reads < 4 and time.time() < deadline:  # each read opens the target afresh: slow on a loaded machine
                line = p.stdout.readline()
                if not line:
                    break
                reads += line.startswith("summary:")
            time.sleep(0.05)  # the file of the last read is renamed in place before the next read's lines
            p.kill()
            err = p.communicate(timeout=30)[1]
            self.assertGreaterEqual(reads, 4, err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
