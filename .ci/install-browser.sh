#!/usr/bin/env bash
# Install Debian's Chromium if it is missing: tests/unit/test_docs.py renders the built
# documentation in it, headless, as a reader would see it.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null || { echo "Debian's chromium did not install" >&2; exit 1; }
