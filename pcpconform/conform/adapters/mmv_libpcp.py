"""The libpcp adapters' ``mmv-writer`` (CONF-MMVW-1): an MMV fixture written by the
registry API of that PCP's libpcp_mmv (IMPL-MMVW-1).

The kit reads the fixture and turns it into the calls ``mmv_write.py`` makes under the PCP's
own python (ctypes on libpcp_mmv.so.1): indoms and their instances, metrics, labels, then
each value stored into the mapped file as an application stores it. libpcp_mmv chooses the
version (MMV-WRITE-VERSION-1), its own generation and process id; for a chroot the file is
written there and copied back.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from pcpconform.mmv.model import (
    LABEL_CLUSTER,
    LABEL_INDOM,
    LABEL_INSTANCES,
    LABEL_ITEM,
    LABEL_OPTIONAL,
    TYPE_STRING,
    MmvFile,
)

__all__ = ["MMV_WRITE", "fixture_spec", "label_call", "write"]

MMV_WRITE = Path(__file__).with_name("mmv_write.py")
#: libpcp_mmv's mmv_value_type_t of a label's JSON value
_VALUE_TYPES: tuple[tuple[type | tuple[type, ...] | None, int], ...] = (
    (bool, 3), (str, 1), ((int, float), 2), (None, 4), (list, 5), (dict, 6))


def label_call(flags: int, identity: int, internal: int, payload: str) -> list[Any]:
    """The mmv_stats_add_*_label call (kind, then its arguments) of one label entry."""
    ((name, value),) = json.loads(payload).items()
    text = json.dumps(value, separators=(",", ":"))
    kind = next(code for cls, code in _VALUE_TYPES
                if (value is None if cls is None else isinstance(value, cls)))
    optional = 1 if flags & LABEL_OPTIONAL else 0
    which = flags & ~LABEL_OPTIONAL
    if which == LABEL_CLUSTER:
        return ["registry", name, text, kind, optional]
    if which == LABEL_INDOM:
        return ["indom", identity, name, text, kind, optional]
    if which == LABEL_ITEM:
        return ["metric", identity, name, text, kind, optional]
    if which == LABEL_INSTANCES:
        return ["instance", identity, internal, name, text, kind, optional]
    raise ValueError(f"label flags {flags:#x} name no label type libpcp_mmv adds")


def fixture_spec(content: MmvFile) -> dict[str, Any]:
    """What mmv_write.py writes for the fixture's content."""
    return {
        "cluster": content.cluster, "flags": content.flags,
        "indoms": [{"serial": d.serial, "shorttext": d.shorttext, "helptext": d.helptext,
                    "instances": [[i.internal, i.name] for i in d.instances]} for d in content.indoms],
        "metrics": [{"name": m.name, "item": m.item, "type": m.type, "semantics": m.semantics,
                     "dimension": m.dimension, "indom": m.indom, "shorttext": m.shorttext,
                     "helptext": m.helptext,
                     "values": [{"instance": v.instance, "atom": v.atom.hex(), "extra": v.extra,
                                 "string": v.string if m.type == TYPE_STRING else None}
                                for v in m.values]}
                    for m in content.metrics],
        "label_calls": [label_call(lb.flags, lb.identity, lb.internal, lb.payload) for lb in content.labels],
    }


def write(target: Any, fixture: Path, out: Path) -> Any:
    """Run mmv_write.py under ``target`` (a LibpcpTarget) to write the fixture at ``out``;
    the completed process."""
    from pcpconform.fixtures.mmv import load_mmv_fixture

    spec = fixture_spec(load_mmv_fixture(fixture))
    with tempfile.TemporaryDirectory(prefix="pcpconform-adapter-") as tmp:
        request = Path(tmp) / "mmv-spec.json"
        request.write_text(json.dumps(spec), encoding="utf-8")
        return target.run_script([str(request), str(out)], [request], script=MMV_WRITE, outputs=[out])
