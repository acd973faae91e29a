#!/bin/sh
# Every UVM_* setting in the option table must be documented in README.md.
set -eu
top=$1
missing=0
for name in $(grep -o '"UVM_[A-Z][A-Z_]*"' "$top/lib/options.c" | tr -d '"'); do
	grep -q "\`$name\`" "$top/README.md" || { echo "README.md does not document $name"; missing=1; }
done
exit $missing
