#!/bin/sh
# tests/check_readme.sh TOP - the README and docs/ agree with the code and with each other: every UVM_*
# setting in the option table is in the README's settings table; the README stays a front page (at
# most 150 lines, its two commands first); every relative link of the README and docs/ names a file
# that exists and, with #anchor, a heading of that page.
set -eu
top=$1
missing=0
for name in $(grep -o '"UVM_[A-Z][A-Z_]*"' "$top/lib/base/options.c" | tr -d '"'); do
	grep -q "^| \`$name\` |" "$top/README.md" || { echo "README.md's settings table does not document $name"; missing=1; }
done
lines=$(wc -l < "$top/README.md")
[ "$lines" -le 150 ] || { echo "README.md has $lines lines: at most 150 (the rest belongs in docs/)"; missing=1; }
sed -n 3,6p "$top/README.md" | grep -q '^\.ci/setup && meson compile -C build && tools/mainjob.sh$' ||
	{ echo "README.md does not start with its two commands"; missing=1; }
python3 - "$top" <<'PY' || missing=1
import os, re, sys
top = sys.argv[1]
pages = [os.path.join(top, "README.md")] + sorted(
    os.path.join(top, "docs", f) for f in os.listdir(os.path.join(top, "docs")) if f.endswith(".md"))

def slugs(path):
    """GitHub's anchors of a page's headings."""
    with open(path) as f:
        heads = [l.lstrip("#").strip() for l in f if l.startswith("#")]
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}

bad = 0
for page in pages:
    with open(page) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(full):
            print("%s: link to %s: no such file" % (os.path.relpath(page, top), target))
            bad = 1
        elif anchor and full.endswith(".md") and anchor not in slugs(full):
            print("%s: link to %s: no such heading" % (os.path.relpath(page, top), target))
            bad = 1
sys.exit(bad)
PY
exit $missing
