#!/usr/bin/env bash
# Build the HTML documentation (the guide and the spec chapters) into docs/_build/html, or
# into the directory given. Any warning fails the build, a broken internal link included
# (a link to a page, heading or file that does not exist). `--linkcheck` also follows every
# external link (needs the network).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
out=docs/_build/html
linkcheck=false
for arg in "$@"; do
    case "$arg" in
        --linkcheck) linkcheck=true ;;
        -*) echo "usage: tools/docs.sh [--linkcheck] [OUTDIR]" >&2; exit 2 ;;
        *) out="$arg" ;;
    esac
done
.venv/bin/python -m sphinx -q -W --keep-going -b html docs "$out"
if $linkcheck; then
    .venv/bin/python -m sphinx -q -W --keep-going -b linkcheck docs "$out/../linkcheck"
fi
echo "documentation: $out/index.html"
