#!/bin/sh
# Run pcpconform's mmv-writer suite against an MMV writer's adapter, in any CI:
#
#     sh mmv-writer.sh 'ADAPTER COMMAND' [JUNIT_FILE]
#
# Installs pcpconform (the corpus comes with it) into a virtual environment of its own,
# unless PCPCONFORM names a pcpconform command already installed; runs the suite; writes
# the JUnit report (default pcpconform-mmv-writer.xml) and prints the verdicts. Exit
# status: 0 the writer conforms, 1 it does not, 2 nothing could run.
# PCPCONFORM_VERSION (e.g. '==0.2.0') pins the version installed.
set -eu
if [ $# -lt 1 ]; then
    echo "usage: sh mmv-writer.sh 'ADAPTER COMMAND' [JUNIT_FILE]" >&2
    exit 2
fi
adapter=$1
junit=${2:-pcpconform-mmv-writer.xml}
if [ -z "${PCPCONFORM:-}" ]; then
    venv=${PCPCONFORM_VENV:-.pcpconform-venv}
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet "pcpconform${PCPCONFORM_VERSION:-}"
    PCPCONFORM=$venv/bin/pcpconform
fi
status=0
"$PCPCONFORM" conform --impl "$adapter" --suite mmv-writer --format junit -o "$junit" || status=$?
if [ "$status" -ne 2 ]; then
    # the same run's verdicts for the log (the units are few)
    "$PCPCONFORM" conform --impl "$adapter" --suite mmv-writer || true
fi
exit "$status"
