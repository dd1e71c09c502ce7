#!/usr/bin/env bash
# Install Debian's PCP 6.0.3 (the reference libpcp) if it is missing, with its C header, a
# compiler for benchmarks/c/, and PCP's QA archives and MMV files (pcp-testsuite, under
# /var/lib/pcp/testsuite): the real shapes the differential tests and benchmarks replay.
# Debian's maintainer scripts call systemctl; without a running systemd we shadow it with a
# no-op first on PATH (apt runs dpkg with its own DPkg::Path, so it is set there too).
set -euo pipefail
if command -v pmdumplog >/dev/null 2>&1 && [ -e /usr/lib/python3/dist-packages/pcp/pmi.py ] \
        && [ -e /usr/include/pcp/pmapi.h ] && command -v cc >/dev/null 2>&1 \
        && [ -d /var/lib/pcp/testsuite/archives ]; then
    exit 0
fi
shim=$(mktemp -d)
printf '#!/bin/sh\nexit 0\n' > "$shim/systemctl"
chmod +x "$shim/systemctl"
export PATH="$shim:$PATH" DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends -o DPkg::Path="$PATH" \
    pcp python3-pcp libpcp-import1 libpcp-mmv1 xz-utils bzip2 gzip zstd libpcp3-dev gcc libc6-dev pcp-testsuite >/dev/null || true
dpkg --configure -a
command -v pmdumplog >/dev/null
/usr/bin/python3 -c 'from pcp import pmi, pmapi' || { echo "Debian's PCP did not install" >&2; exit 1; }
[ -e /usr/include/pcp/pmapi.h ] || { echo "libpcp3-dev did not install" >&2; exit 1; }
[ -d /var/lib/pcp/testsuite/archives ] || { echo "pcp-testsuite did not install" >&2; exit 1; }
