#!/usr/bin/env bash
# Set up everything (venv, packages, the three reference libpcps), run the test suite, then
# ruff and mypy.
# As root it installs Debian's PCP 6.0.3 on the host and Debian trixie's (6.3.x) and sid's
# (7.x) PCP in debootstrap chroots; each step does nothing when already done. In CI
# (CI=true) a missing reference fails the run: differential tests never skip.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then
    bash .ci/install-pcp.sh
    bash .ci/install-browser.sh
    for suite in trixie sid; do
        log=$(mktemp)
        if ! bash .ci/install-pcp-chroot.sh "$suite" >"$log" 2>&1; then
            cat "$log" >&2
            echo "tools/test.sh: the $suite PCP chroot did not install" >&2
            exit 1
        fi
        rm -f "$log"
    done
fi
bash tools/setup.sh
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
if [ $# -eq 0 ]; then       # the whole suite: the linters too (config in pyproject.toml)
    .venv/bin/ruff check --quiet pcpconform tests benchmarks
    .venv/bin/mypy
fi
