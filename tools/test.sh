#!/usr/bin/env bash
# Set up everything (venv, packages, Debian's PCP as the reference) and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then
    bash .ci/install-pcp.sh
fi
bash tools/setup.sh
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
