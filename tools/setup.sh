#!/usr/bin/env bash
# Create .venv with pcpconform (editable) and its test, docs and optional extras. Idempotent
# and quiet: nothing is reinstalled while pyproject.toml, setup.py, the compiled kernel's
# source (built in place by the editable install) and this script are unchanged; pip's
# output is shown only when it fails. setuptools>=77 (what pyproject.toml builds with) goes
# into the venv too: tests/unit/test_wheel.py builds a wheel offline, without isolation.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
stamp=.venv/.pcpconform-installed
want=$(cat pyproject.toml setup.py pcpconform/dump/_mmvrows.c pcpconform/io/_resultcols.c pcpconform/mmv/_mmvcols.c tools/setup.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   .venv/bin/python -c 'import pcpconform.dump._mmvrows, pcpconform.io._resultcols, pcpconform.mmv._mmvcols' 2>/dev/null; then
    exit 0
fi
log=$(mktemp)
if ! { .venv/bin/python -m pip install -q --upgrade pip &&
       .venv/bin/python -m pip install -q 'setuptools>=77' -e '.[test,docs,strategies,plot,dask]'; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"
echo "$want" > "$stamp"
