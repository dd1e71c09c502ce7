#!/usr/bin/env python3
"""An mmv-writer adapter for Speed, the Go MMV writer: the protocol half (spec/conformance.md,
CONF-MMVW-1). It reads the MMV fixture with pcpconform, hands its content as JSON to the Go
half (speed_mmv_adapter.go, built as docs/mmv-writers.md says; its path in
$SPEED_ADAPTER, default beside this file), which writes the file with Speed's API into a
private $PCP_TMP_DIR, and copies the file to where the runner wants it.

    pcpconform conform --impl "python3 examples/adapters/speed_mmv_adapter.py" --suite mmv-writer

Speed writes MMV version 2 files, with the NOPREFIX, PROCESS and SENTINEL flags as asked;
it has no ELAPSED or NOSUPPORT type and no labels (those cases are unsupported); it chooses
the cluster, items, indom serials and instance ids by hashing names.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CAPABILITIES = {"name": "speed", "version": "v4 (2021-07)", "suites": ["mmv-writer"], "archive_versions": [],
                "mmv_versions": [2], "unsupported": ["labels", "type:elapsed", "type:nosupport"]}


def write(fixture: str, out: str) -> int:
    from pcpconform.conform.adapters.mmv_libpcp import fixture_spec
    from pcpconform.fixtures.mmv import load_mmv_fixture

    binary = os.environ.get("SPEED_ADAPTER", str(Path(__file__).with_name("speed_mmv_adapter")))
    with tempfile.TemporaryDirectory(prefix="speed-adapter-") as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps(fixture_spec(load_mmv_fixture(fixture))))
        conf = Path(tmp) / "pcp.conf"
        conf.write_text(f"PCP_TMP_DIR={tmp}\n")
        (Path(tmp) / "mmv").mkdir()
        name = Path(out).name
        proc = subprocess.run([binary, str(spec), name], env={**os.environ, "PCP_CONF": str(conf)})
        if proc.returncode != 0:
            return proc.returncode
        shutil.copyfile(Path(tmp) / "mmv" / name, out)
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--capabilities"]:
        print(json.dumps(CAPABILITIES))
        return 0
    if len(argv) == 3 and argv[0] == "mmv-writer":
        return write(argv[1], argv[2])
    print("usage: speed_mmv_adapter.py --capabilities | mmv-writer FIXTURE FILE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
