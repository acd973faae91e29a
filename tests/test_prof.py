#!/usr/bin/python3
"""tests/test_prof.py PRELOAD LEAKY LEAKY_CC MT VMINFO VMTRACE - heap profiles of programs that leak known bytes.

prof_leaky leaks 16 MB through make_record <- leak_records from main and 16 MB from four threads,
in C (malloc) and C++ (new), under the preload library. Each report must name the stack in order
(make_record, leak_records, then main or worker) and estimate its bytes within 20 %; the freed churn
must not show. UVM_LEAKS prints at exit and leaves the exit status alone; vminfo --heap reads a
running process (text, JSON, --folded, --since, --svg rendered in Chromium), and its area lines charge a
block of operator new to the program's call (uvm_malloc_caller); vmtrace --heap follows a
command (-o keeps its report apart from the command's output) and turns sampling on in a running
process (skipped with the reason where BPF is not permitted); a profiled program's output is the
unprofiled one's, tests/mt.cc's too (threads that come and go, new and delete across threads, fork and
exec). VMINFO or VMTRACE may be "-" when not built.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

from svgcheck import chromium, png_nonwhite_fraction, render

PRELOAD, LEAKY, LEAKY_CC, MT, VMINFO, VMTRACE = sys.argv[1:7]
del sys.argv[1:7]
RATE = "16K"  # about 2000 samples of each 16 MB stack: a standard error near 2 %
TRUE_BYTES = 16_000_000
MORE_BYTES = 12_000_000


def env(**kw):
    e = dict(os.environ, LD_PRELOAD=PRELOAD)
    e.pop("MALLOC_PERTURB_", None)
    e.update(kw)
    return e


def stacks_of_text(report):
    """The text report's stacks: [(bytes, [frame names])]."""
    out = []
    for m in re.finditer(r"#\d+: (\d+) bytes in \d+ allocations[^\n]*\n((?:    #\d+ [^\n]*\n?)*)", report):
        frames = re.findall(r"    #\d+ (.*)", m.group(2))
        out.append((int(m.group(1)), frames))
    return out


def fn(frame):
    """A frame's function, without arguments, offset or module."""
    return re.split(r"[+(\[ ]", frame, maxsplit=1)[0] if not frame.startswith("[") else frame


class Checks:
    def expect_stacks(self, stacks, lang):
        """stacks: [(bytes, [names])]; main's and the workers' leaks named in order, each within 20 %."""
        def find(base):
            for b, frames in stacks:
                names = [fn(f) for f in frames]
                if names[:3] == ["make_record", "leak_records", base]:
                    return b
            self.fail("%s: no stack make_record <- leak_records <- %s in:\n%s" % (lang, base, stacks))
        for base in ("main", "worker"):
            b = find(base)
            self.assertLess(abs(b - TRUE_BYTES), 0.2 * TRUE_BYTES, "%s %s: estimated %d of %d" % (lang, base, b, TRUE_BYTES))
        for _, frames in stacks:
            self.assertNotIn("churn", [fn(f) for f in frames], "freed blocks must leave the profile")


class Leaks(unittest.TestCase, Checks):
    def test_leaks_at_exit_name_the_stacks_and_keep_the_status(self):
        for (prog, lang), unwinder in zip(((LEAKY, "C"), (LEAKY_CC, "C++"), (LEAKY, "C"), (LEAKY_CC, "C++")),
                                          ("auto", "auto", "libgcc", "libgcc")):
            plain = subprocess.run([prog], capture_output=True, text=True, env=env(), timeout=120)
            r = subprocess.run([prog], capture_output=True, text=True, timeout=120,
                               env=env(UVM_LEAKS="1", UVM_PROF_SAMPLE=RATE, UVM_PROF_UNWIND=unwinder))
            self.assertEqual(r.returncode, plain.returncode)
            self.assertEqual(r.stdout, plain.stdout, "profiling changed the program's output")
            self.assertIn("uvmalloc: leaks at exit:", r.stderr)
            self.expect_stacks(stacks_of_text(r.stderr), lang)

    def test_leaks_alone_samples_at_its_default(self):
        r = subprocess.run([LEAKY], capture_output=True, text=True, env=env(UVM_LEAKS="1"), timeout=120)
        self.assertIn("one per 524288 bytes allocated", r.stderr)


class Running:
    """prof_leaky wait under the preload library: leaked, then waiting for lines on stdin."""
    def __init__(self, prog, **kw):
        self.p = subprocess.Popen([prog, "wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=env(**kw))
        self.p.stdout.readline()  # leaked ...
        assert self.p.stdout.readline() == "ready\n"

    def step(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline() == "ready\n"

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
        self.p.stdout.close()


@unittest.skipIf(VMINFO == "-", "vminfo not built")
class Vminfo(unittest.TestCase, Checks):
    def vminfo(self, *args):
        r = subprocess.run([VMINFO, "--heap"] + [str(a) for a in args], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_text_json_folded_and_since(self):
        for prog, lang in ((LEAKY, "C"), (LEAKY_CC, "C++")):
            t = Running(prog, UVM_PROF_SAMPLE=RATE)
            try:
                pid = t.p.pid
                self.expect_stacks(stacks_of_text(self.vminfo(pid)), lang)
                doc = json.loads(self.vminfo("--json", pid))
                self.assertEqual(doc["schema"], "uvmalloc.heap/1")
                self.assertEqual(doc["rate"], 16384)
                self.expect_stacks([(s["bytes"], [f["name"] for f in s["frames"]]) for s in doc["stacks"]], lang)
                self.assertAlmostEqual(doc["bytes"], sum(s["bytes"] for s in doc["stacks"]), delta=len(doc["stacks"]))
                folded = self.vminfo("--folded", pid).splitlines()
                self.assertTrue(folded)
                for line in folded:
                    self.assertRegex(line, r"^[^ ]+(;[^ ]+)* \d+$", "a collapsed stack is frames;...;frames COUNT")
                roots = [line.rsplit(" ", 1)[0].split(";") for line in folded]
                self.assertTrue(any([fn(f) for f in r[-3:]] == ["main", "leak_records", "make_record"] for r in roots),
                                "folded stacks go root first:\n" + "\n".join(folded))
                with tempfile.NamedTemporaryFile("w", suffix=".json") as before:
                    before.write(json.dumps(doc))
                    before.flush()
                    t.step()  # grow_more leaks 12 MB
                    grown = stacks_of_text(self.vminfo("--since", before.name, pid))
                    self.assertEqual(len(grown), 1, grown)
                    self.assertEqual([fn(f) for f in grown[0][1][:3]], ["make_record", "grow_more", "main"])
                    self.assertLess(abs(grown[0][0] - MORE_BYTES), 0.2 * MORE_BYTES)
            finally:
                t.close()

    def test_area_lines_charge_new_to_its_caller(self):
        t = Running(LEAKY_CC)
        try:
            r = subprocess.run([VMINFO, "--sort", "size", str(t.p.pid)], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            big = [l for l in r.stdout.splitlines() if re.match(r"0x[0-9a-f]+-0x[0-9a-f]+ +405504 ", l)]
            self.assertTrue(big, r.stdout[:2000])
            self.assertIn("keep_big", big[0], "operator new's block is charged to the program's call")
        finally:
            t.close()

    def test_a_process_that_samples_nothing_says_how_to(self):
        t = Running(LEAKY)
        try:
            self.assertIn("UVM_PROF_SAMPLE", self.vminfo(t.p.pid))
        finally:
            t.close()

    def test_flame_graph_renders_in_chromium(self):
        t = Running(LEAKY_CC, UVM_PROF_SAMPLE=RATE)
        with tempfile.TemporaryDirectory() as d:
            svg, png = os.path.join(d, "f.svg"), os.path.join(d, "f.png")
            try:
                self.vminfo("--svg", svg, t.p.pid)
            finally:
                t.close()
            ns = {"s": "http://www.w3.org/2000/svg"}
            root = ET.parse(svg).getroot()
            boxes = {}
            for g in root.findall("s:g", ns):
                title, rect = g.find("s:title", ns).text, g.find("s:rect", ns)
                self.assertRegex(title, r" \d+ bytes \([\d.]+ %\)$", "a tooltip names the frame and its bytes")
                boxes.setdefault(fn(title), []).append((float(rect.get("y")), float(rect.get("width")), title))
            width = boxes["all"][0][1]
            for name in ("make_record", "leak_records", "main", "worker"):
                self.assertIn(name, boxes, "no box for %s" % name)
            # The allocating function sits above its callers; main's and the workers' towers split the width.
            self.assertLess(max(y for y, _, _ in boxes["make_record"]), min(y for y, _, _ in boxes["main"]))
            self.assertAlmostEqual(sum(w for _, w, _ in boxes["make_record"]), width, delta=0.05 * width)
            self.assertTrue(any("[leakycc" in t or "prof_leaky_cc" in t for _, _, t in boxes["make_record"]),
                            "the tooltip holds the module: %s" % boxes["make_record"])
            browser = chromium()
            if not browser:
                self.skipTest("no chromium to render the flame graph")
            self.assertTrue(render(browser, svg, png, 1200, int(float(root.get("height")))), "no screenshot")
            self.assertGreater(png_nonwhite_fraction(png), 0.2, "the flame graph rendered (nearly) blank")


@unittest.skipIf(VMTRACE == "-", "vmtrace not built")
class Vmtrace(unittest.TestCase, Checks):
    def test_command_and_running_process(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "heap.json")
            r = subprocess.run([VMTRACE, "--heap", "--heap-sample", RATE, "--json", "-o", out, "--", "env",
                                "LD_PRELOAD=" + PRELOAD, LEAKY_CC], capture_output=True, text=True, timeout=120)
            if r.returncode in (3, 4):
                self.skipTest("vmtrace cannot trace here: " + r.stderr.strip())
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(r.stdout.startswith("leaked"), "the command's output is its own: %r" % r.stdout[:200])
            with open(out) as f:
                docs = [json.loads(line) for line in f if line.startswith("{")]
            heaps = [doc for doc in docs if doc.get("schema") == "uvmalloc.heap/1"]
            self.assertEqual(len(heaps), 1, "one heap profile for the one process")
            self.expect_stacks([(s["bytes"], [f["name"] for f in s["frames"]]) for s in heaps[0]["stacks"]], "C++")

            # A running process that samples nothing: sampling starts within an interval, and only what
            # is allocated while traced is reported.
            t = Running(LEAKY)
            text = os.path.join(d, "heap.txt")
            try:
                v = subprocess.Popen([VMTRACE, "-p", str(t.p.pid), "--heap", "--heap-sample", RATE, "-i", "0.2",
                                      "-o", text], stderr=subprocess.PIPE, text=True)
                time.sleep(1.5)
                t.step()
                v.send_signal(2)
                self.assertEqual(v.wait(timeout=60), 0, v.stderr.read())
                v.stderr.close()
                if VMINFO != "-":
                    r = subprocess.run([VMINFO, "--heap", "--json", str(t.p.pid)], capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual(json.loads(r.stdout)["rate"], 0, "vmtrace puts the rate back")
            finally:
                t.close()
            with open(text) as f:
                report = f.read()
            stacks = stacks_of_text(report[report.index("outstanding sampled allocations"):])
            self.assertEqual(len(stacks), 1, report)
            self.assertEqual([fn(f) for f in stacks[0][1][:3]], ["make_record", "grow_more", "main"])
            self.assertLess(abs(stacks[0][0] - MORE_BYTES), 0.2 * MORE_BYTES)


class Overhead(unittest.TestCase):
    def test_the_cost_tool_prints_its_table(self):
        build = os.path.dirname(os.path.dirname(PRELOAD))
        tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "allocwork", "prof-overhead")
        r = subprocess.run([tool, "--reps", "1", "--workloads", "mixed", "--rates", "512K", "--build", build],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"\| -s 8 mixed \| [\d.]+ s \| [\d.]+ s \([\d.]+x\) \|")


class Programs(unittest.TestCase):
    def test_real_programs_print_the_same_profiled(self):
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "in.txt")
            with open(data, "w") as f:
                f.write("".join("%d line %x\n" % (i * 7919 % 100003, i) for i in range(200000)))
            for cmd in ([MT], ["sort", data], ["python3", "-c", "import json,collections;"
                        "d=collections.Counter(str(i%977)*(i%13) for i in range(300000));"
                        "print(json.dumps(sorted(d.items())[:50]))"]):
                plain = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=300)
                prof = subprocess.run(cmd, capture_output=True, text=True, env=env(UVM_PROF_SAMPLE="4K", UVM_LEAKS="1"),
                                      timeout=300)
                self.assertEqual(prof.returncode, plain.returncode)
                self.assertEqual(prof.stdout, plain.stdout, "%s printed something else profiled" % cmd[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
