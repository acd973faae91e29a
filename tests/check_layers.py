#!/usr/bin/env python3
"""tests/check_layers.py LIB OBJDIR - lib/'s layering rule (lib/README.md): a file of a layer includes
headers of its own layer or those below (or lib/'s public headers), and its object refers to no symbol
that an object of a layer above defines. LIB is the lib/ source folder, OBJDIR the folder of the
shared library's objects (whose names meson derives from the sources' paths: base_os.c.o)."""
import os, re, subprocess, sys

LAYERS = ["base", "vm", "heap", "api"]  # bottom to top
lib, objdir = sys.argv[1:3]
rank, errors = {}, []
for i, layer in enumerate(LAYERS):
    for name in os.listdir(os.path.join(lib, layer)):
        rank[(layer, name)] = i
header_layer = {name: i for (layer, name), i in rank.items() if name.endswith(".h")}
public = {n for n in os.listdir(lib) if n.endswith(".h")}
stray = [n for n in os.listdir(lib) if n.endswith(".c")]
if stray:
    errors.append("sources outside every layer: %s" % " ".join(stray))

for (layer, name), i in sorted(rank.items()):
    if not name.endswith((".c", ".h")):
        continue
    for n, line in enumerate(open(os.path.join(lib, layer, name)), 1):
        m = re.match(r'#include "([^"]+)"', line)
        if not m or m.group(1) in public:
            continue
        h = m.group(1)
        if h not in header_layer:
            errors.append("%s/%s:%d includes %s, which is in no layer" % (layer, name, n, h))
        elif header_layer[h] > i:
            errors.append("%s/%s:%d includes %s of %s, a layer above" % (layer, name, n, h, LAYERS[header_layer[h]]))

defined, undefined = {}, {}
objects = [o for o in os.listdir(objdir) if o.endswith(".c.o")]
for o in objects:
    layer = o.split("_", 1)[0]
    if layer not in LAYERS:
        errors.append("object %s of no layer" % o)
        continue
    for line in subprocess.run(["nm", os.path.join(objdir, o)], capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRCVW":
            defined[f[2]] = (o, LAYERS.index(layer))
        elif len(f) == 2 and f[0] == "U":
            undefined.setdefault(o, set()).add(f[1])
if len(objects) < 20:
    errors.append("only %d objects in %s" % (len(objects), objdir))
for o, syms in sorted(undefined.items()):
    mine = LAYERS.index(o.split("_", 1)[0])
    for s in sorted(syms):
        if s in defined and defined[s][1] > mine:
            errors.append("%s refers to %s, defined in %s of a layer above" % (o, s, defined[s][0]))
if errors:
    print("\n".join("FAIL " + e for e in errors))
    sys.exit(1)
print("layers: %d files in %s, %d objects: no include and no reference goes up" % (len(rank), " < ".join(LAYERS), len(objects)))
