#!/usr/bin/env bash
# Set up everything (venv, packages, Debian's PCP as the reference) and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then
    bash .ci/install-pcp.sh
    # libpcp 6.3.x (Debian trixie) in a chroot, for the pcp-6.3 interpolation rules;
    # without it those differential tests are skipped, so a failure here is not fatal
    bash .ci/install-pcp-trixie.sh >/dev/null 2>&1 || echo "warning: trixie chroot not installed" >&2
fi
bash tools/setup.sh
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
