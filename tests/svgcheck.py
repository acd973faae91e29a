"""tests/svgcheck.py - what the SVG tests share: render a file in headless Chromium and measure the picture."""
import os
import shutil
import struct
import subprocess
import tempfile
import zlib


def chromium():
    """Debian's chromium, or None (CI installs it)."""
    return shutil.which("chromium")


def render(browser, svg, png, width, height):
    """Screenshot svg into png in headless Chromium; True when a picture came out.

    Each run gets a profile of its own: two Chromiums on one profile (vminfo's and vmtrace's tests run
    side by side) hand the page to the first one, and the second waits for it.  A headless Chromium
    under the load of the whole suite now and then never takes its screenshot (seen 3 times in 5 full
    runs on 2 CPUs, never alone): such a run is killed after a minute and tried again, up to 3 times.
    """
    global last_log
    for attempt in range(3):
        with tempfile.TemporaryDirectory() as profile:
            try:
                r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                    "--hide-scrollbars", "--user-data-dir=" + profile, "--screenshot=" + png,
                                    "--window-size=%d,%d" % (width, height), "file://" + svg],
                                   capture_output=True, text=True, timeout=60)
                last_log = "exit %d: %s" % (r.returncode, r.stderr[-2000:])
            except subprocess.TimeoutExpired as e:
                last_log = "timed out: %s" % (e.stderr or b"")[-2000:]
                continue
        if os.path.exists(png):
            return True
    return False


last_log = ""  # what the last Chromium said, for a test's failure message


def png_nonwhite_fraction(path):
    """Share of pixels that are not white, decoding the PNG with zlib alone."""
    with open(path, "rb") as f:
        data = f.read()
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = {2: 3, 6: 4}[ctype]
    raw, stride, prev, nonwhite = zlib.decompress(idat), w * bpp, bytearray(w * bpp), 0
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        nonwhite += sum(1 for x in range(w) if line[x * bpp:x * bpp + 3] != b"\xff\xff\xff")
        prev = line
    return nonwhite / (w * h)
