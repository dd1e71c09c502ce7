#!/bin/sh
# A validator adapter in POSIX sh (spec/conformance.md, one-shot form): PCP's own
# pmlogcheck says whether an archive is valid. No codes: pmlogcheck has none of
# spec/validator.md's, so only the verdict is graded (CONF-VAL-2).
#
#   pcpconform conform --impl "sh examples/adapters/validator.sh" --suite validator
#
# An adapter for your own validator has the same shape: print the capabilities, run the
# check on ARCHIVE_BASE, print one JSON object, exit 0 (valid) or 1 (invalid).
set -u

pcp_version() {
    # PCP_VERSION from pcp.conf (where $PCP_CONF or the default says), else "unknown"
    sed -n 's/^PCP_VERSION=//p' "${PCP_CONF:-/etc/pcp.conf}" 2>/dev/null | head -n 1 | tr -cd '0-9A-Za-z.+~-'
}

case "${1-}" in
--capabilities)
    command -v pmlogcheck >/dev/null 2>&1 || { echo "validator.sh: pmlogcheck is not installed" >&2; exit 2; }
    version=$(pcp_version)
    printf '{"name": "pmlogcheck", "version": "%s", "suites": ["validator"], "archive_versions": [2, 3], "unsupported": ["set"]}\n' \
        "${version:-unknown}"
    ;;
validator)
    [ $# -eq 2 ] || { echo "usage: validator.sh validator ARCHIVE_BASE" >&2; exit 2; }
    # pmlogcheck's own messages go to standard error, free for the adapter (CONF-RUN-3)
    if pmlogcheck "$2" >&2; then
        echo '{"valid": true}'
    else
        echo '{"valid": false}'
        exit 1
    fi
    ;;
*)
    echo "usage: validator.sh --capabilities | validator ARCHIVE_BASE" >&2
    exit 2
    ;;
esac
