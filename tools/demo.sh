#!/usr/bin/env bash
# Set up, then run the main job on the bundled example: generate an archive from the
# example fixture and dump it (text form), leaving the archive under build/example; end
# with the conformance verdict of the kit's own adapter on the bundled corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
mkdir -p build
.venv/bin/pcpconform generate corpus/fixtures/example.yaml -o build/example
.venv/bin/pcpconform dump build/example
echo
.venv/bin/pcpconform conform --impl builtin:pcpconform --corpus corpus -j 2
