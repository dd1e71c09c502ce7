"""Field tables of spec/archive-format.md and spec/mmv.md, generated from the construct schemas.

Each region is one table rendered from one schema by pcpconform.format.schemadoc: rows are the
Struct's fields, with the offset from the first byte of the payload (after the record's
length word), size, type from the field's construct, and the field's ``docs`` text.

``python -m pcpconform.cli.specgen`` rewrites every region between
``<!-- BEGIN GENERATED: name -->`` and ``<!-- END GENERATED: name -->`` in spec/*.md;
``--check`` rewrites nothing and exits 1 if any region is stale, unknown or missing.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from construct import Construct, Int32ub

from pcpconform.check.mmv.rules import MMV_CODES, MMV_TABLE
from pcpconform.check.rules import RULES, UNCHECKED_CLAUSES
from pcpconform.corpusgen.invalid import CASES, UNCOVERED
from pcpconform.corpusgen.invalid.sets import SET_CASES
from pcpconform.corpusgen.mmv_faults import FAULTS as MMV_FAULTS
from pcpconform.corpusgen.mmv_faults import UNCOVERED as MMV_UNCOVERED
from pcpconform.format.schema import (
    META_TYPE_NAMES,
    META_TYPES,
    ArchiveStructs,
    LabelSet,
    PmLabel,
    PmValue,
    PmValueBlock,
    PmValueSet,
    structs,
)
from pcpconform.format.schema.common import TimespecTS16, TimestampT3, TimevalT2
from pcpconform.format.schema.meta import meta_payload
from pcpconform.format.schemadoc import (
    Row,
    describe,
    event_structs,
    field,
    fixed_size,
    struct_rows,
)
from pcpconform.mmv.schema import MMV_VERSIONS, TOC_LABELS, TOC_NAMES, MmvStructs, mmv_structs

__all__ = ["REGIONS", "Region", "Report", "render_region", "update_spec", "main"]

#: the spec chapters, relative to the directory the command runs in (a checkout's top)
SPEC_DIR = Path("spec")

#: Comments that no schema field can carry: the framing words live in Framed's code.
COMMENTS: dict[tuple[str, str], str] = {
    ("framing", "len"): "L: length of the whole record in bytes, both length words included",
    ("framing", "payload"): "the record's content (L - 8 bytes)",
    ("framing", "trailer"): "L again; must equal the leading length word",
}

def _tag_name(tag: int) -> str:
    return f"TYPE_{META_TYPE_NAMES[tag].upper()}"


def _tag_rows(version: int, tag: int) -> list[Row]:
    """The .meta type-tag row, from the meta payload schema, with this record's tag value."""
    row = struct_rows(meta_payload(version))[0]
    const = _tag_name(tag)
    return [Row(row.offset, row.size, row.name, row.type, f"{row.doc} = {tag} ({const})",
                "(tag)")]


def _meta_rows(version: int, tag: int, body: Construct) -> list[Row]:
    head = _tag_rows(version, tag)
    return head + struct_rows(body, start=int(head[0].size))


def _framing_rows() -> list[Row]:
    word = describe(Int32ub)
    return [Row("0", "4", "len", word, COMMENTS[("framing", "len")]),
            Row("4", "L-8", "payload", "bytes", COMMENTS[("framing", "payload")]),
            Row("L-4", "4", "trailer", word, COMMENTS[("framing", "trailer")])]


def _same_in_both(build: Callable[[int], list[Row]]) -> list[Row]:
    rows = build(2)
    if rows != build(3):
        raise AssertionError("a table declared version-independent differs between v2 and v3")
    return rows


def _merged(a: list[Row], b: list[Row]) -> list[Row]:
    """Two tables that differ only in field types, as one ("X or Y" where they differ)."""
    def shape(rows: list[Row]) -> list[tuple[str, ...]]:
        return [(r.offset, r.size, r.name, r.doc, r.note) for r in rows]

    if shape(a) != shape(b):
        raise AssertionError("tables to merge differ in more than their types")
    return [r if r.type == q.type else Row(r.offset, r.size, r.name, f"{r.type} or {q.type}",
                                           r.doc, r.note)
            for r, q in zip(a, b)]


@dataclass(frozen=True)
class Region:
    """A generated region: a function rendering its Markdown."""

    render: Callable[[], str]


def _field_table(rows: Callable[[], list[Row]], source: str, origin: str = "payload") -> Region:
    def render() -> str:
        lines = ["| Offset | Size | Field | Type | Meaning |", "|---|---|---|---|---|"]
        for r in rows():
            name = f"`{r.name}` {r.note}".strip()
            lines.append("| " + " | ".join(_cell(c) for c in
                                           (r.offset, r.size, name, r.type, r.doc)) + " |")
        lines += ["", f"*Generated from `{source}`; offsets from the start of the {origin}.*"]
        return "\n".join(lines)
    return Region(render)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _version_rows() -> list[tuple[str, str, str]]:
    """Parameter | v2 | v3: every format property that depends on the version."""
    def per(fn: Callable[[ArchiveStructs], object]) -> tuple[str, str]:
        return str(fn(structs(2))), str(fn(structs(3)))

    def label_field(s: ArchiveStructs, name: str) -> str:
        try:
            return describe(field(s.label, name))
        except KeyError:
            return "absent"

    def offset_limit(s: ArchiveStructs) -> str:
        size = fixed_size(field(s.index_entry, "off_data")) or 0
        return f"2^{8 * size - 1} - 1"

    def tags(s: ArchiveStructs) -> str:
        return ", ".join(f"{t} {_tag_name(t)}" for t in META_TYPES[s.version])

    params: list[tuple[str, Callable[[ArchiveStructs], object]]] = [
        ("label magic", lambda s: f"0x{s.magic:08x}"),
        ("label record length L (framing included)", lambda s: s.label_size),
        ("timestamp of label, indom, label-set, result and index", lambda s: describe(
            field(s.result, "timestamp"))),
        ("label `hostname_raw`", lambda s: label_field(s, "hostname_raw")),
        ("label `timezone_raw`", lambda s: label_field(s, "timezone_raw")),
        ("label `zoneinfo_raw`", lambda s: label_field(s, "zoneinfo_raw")),
        ("label `features`, `reserved`", lambda s: label_field(s, "features")),
        (".meta tags written", tags),
        ("result bytes before the first value set (length word included)",
         lambda s: s.result_header_size),
        ("mark record length L", lambda s: s.mark_size),
        ("index entry size", lambda s: s.index_entry_size),
        ("index offsets `off_meta`, `off_data`",
         lambda s: describe(field(s.index_entry, "off_data"))),
        ("largest offset an index entry can hold", offset_limit),
    ]
    return [(name, *per(fn)) for name, fn in params]


def _version_table() -> str:
    lines = ["| Parameter | v2 | v3 |", "|---|---|---|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in _version_rows()]
    lines += ["", "*Generated from `ArchiveStructs(2)` and `ArchiveStructs(3)`.*"]
    return "\n".join(lines)


def _rules_table() -> str:
    example: dict[str, str] = {}
    for case in CASES:
        # a case may expect different codes per archive version
        per_version = case.expect if isinstance(case.expect, dict) else {0: case.expect}
        for version in sorted(per_version):
            for code in per_version[version]:
                example.setdefault(code, f"`{case.name}`: {case.fault}")
    lines = ["| Code | Severity | Clause | Finding | Example (invalid corpus case) |",
             "|---|---|---|---|---|"]
    # MMV's are in spec/mmv.md, a set's in their own table (_set_rules_table)
    archive = [r for r in RULES.values() if r.code not in MMV_CODES and not r.code.startswith("set.")]
    for r in archive:
        ex = example.get(r.code) or f"none: {UNCOVERED.get(r.code, 'not covered')}"
        lines.append(f"| `{r.code}` | {r.severity.value} | {r.clause} | {_cell(r.summary)} | {_cell(ex)} |")
    lines += ["", f"*Generated from `pcpconform.check.rules.RULES` ({len(archive)} rules) and the "
              "invalid corpus `pcpconform.corpusgen.invalid.CASES`.*"]
    return "\n".join(lines)


def _set_rules_table() -> str:
    example: dict[str, str] = {}
    for case in SET_CASES:
        for code in (*case.errors, *case.warnings):
            example.setdefault(code, f"`{case.name}`: {case.title}")
    lines = ["| Code | Severity | Clause | Finding | Example (set case) |", "|---|---|---|---|---|"]
    rules = [r for r in RULES.values() if r.code.startswith("set.")]
    for r in rules:
        ex = example.get(r.code) or f"none: {SET_UNCOVERED.get(r.code, 'not covered')}"
        lines.append(f"| `{r.code}` | {r.severity.value} | {r.clause} | {_cell(r.summary)} | {_cell(ex)} |")
    lines += ["", f"*Generated from `pcpconform.check.rules.RULES` ({len(rules)} set rules) and the set cases "
              "`pcpconform.corpusgen.invalid.sets.SET_CASES`.*"]
    return "\n".join(lines)


#: set rules no set case shows, and why
SET_UNCOVERED = {
    "set.empty": "a directory without archives has nothing to check but this",
    "set.single": "a set of one member is a single archive: every single-archive case is one",
    "set.zst-member": "shown by tests/unit/test_check_sets.py (a .zst member is refused by PCP 6.0 only)",
    "set.name-pmid": "shown by tests/unit/test_check_sets.py and the random differential test",
}


def _mmv_rules_table() -> str:
    example: dict[str, str] = {}
    for fault in MMV_FAULTS:
        for code in fault.codes:
            example.setdefault(code, f"`mmv-{fault.name}-v{fault.versions[0]}`: {fault.title}")
    lines = ["| Code | Severity | Clause | Finding | Example (invalid corpus case) |",
             "|---|---|---|---|---|"]
    for code, severity, clause, summary in MMV_TABLE:
        ex = example.get(code) or f"none: {MMV_UNCOVERED.get(code, 'not covered')}"
        lines.append(f"| `{code}` | {severity} | {clause} | {_cell(summary)} | {_cell(ex)} |")
    lines += ["", f"*Generated from `pcpconform.check.mmv.rules.MMV_TABLE` ({len(MMV_TABLE)} rules)"
              " and the faults of `pcpconform.corpusgen.mmv_faults`.*"]
    return "\n".join(lines)


def _unchecked_table() -> str:
    lines = ["| Clause | Why no rule cites it |", "|---|---|"]
    lines += [f"| {c} | {_cell(why)} |" for c, why in UNCHECKED_CLAUSES.items()]
    lines += ["", "*Generated from `pcpconform.check.rules.UNCHECKED_CLAUSES`.*"]
    return "\n".join(lines)


def _mmv_same(build: Callable[[MmvStructs], list[Row]], versions: Sequence[int]) -> list[Row]:
    """One MMV table for several versions, which must agree on it."""
    tables = [build(mmv_structs(v)) for v in versions]
    if any(t != tables[0] for t in tables[1:]):
        raise AssertionError(f"an MMV table declared the same in versions {versions} differs")
    return tables[0]


def _mmv_version_table() -> str:
    """Parameter | v1 | v2 | v3: every MMV layout property that depends on the version."""
    def label_size(s: MmvStructs) -> str:
        return "absent" if s.label is None else str(s.label.sizeof())

    params: list[tuple[str, Callable[[MmvStructs], object]]] = [
        ("instance entry size", lambda s: s.instance.sizeof()),
        ("instance `external`", lambda s: describe(field(s.instance, "external"))),
        ("metric entry size", lambda s: s.metric.sizeof()),
        ("metric `name`", lambda s: describe(field(s.metric, "name"))),
        ("label entry size (section type 6)", label_size),
        ("section types", lambda s: ", ".join(f"{t} {n}" for t, n in TOC_NAMES.items()
                                              if t != TOC_LABELS or s.label)),
    ]
    lines = ["| Parameter | v1 | v2 | v3 |", "|---|---|---|---|"]
    for name, fn in params:
        cells = [name] + [str(fn(mmv_structs(v))) for v in MMV_VERSIONS]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", "*Generated from `mmv_structs(1)`, `mmv_structs(2)` and `mmv_structs(3)`.*"]
    return "\n".join(lines)


def _mmv_regions() -> dict[str, Region]:
    t = _field_table
    every = MMV_VERSIONS
    return {
        "mmv-version-parameters": Region(_mmv_version_table),
        "mmv-header": t(lambda: _mmv_same(lambda s: struct_rows(s.header), every),
                        "mmv_structs(v).header", "file"),
        "mmv-toc": t(lambda: _mmv_same(lambda s: struct_rows(s.toc), every),
                     "mmv_structs(v).toc", "TOC entry"),
        "mmv-indom": t(lambda: _mmv_same(lambda s: struct_rows(s.indom), every),
                       "mmv_structs(v).indom", "indom entry"),
        "mmv-instance-v1": t(lambda: struct_rows(mmv_structs(1).instance),
                             "mmv_structs(1).instance", "instance entry"),
        "mmv-instance-v2": t(lambda: _mmv_same(lambda s: struct_rows(s.instance), (2, 3)),
                             "mmv_structs(2).instance, the same in version 3",
                             "instance entry"),
        "mmv-metric-v1": t(lambda: struct_rows(mmv_structs(1).metric),
                           "mmv_structs(1).metric", "metric entry"),
        "mmv-metric-v2": t(lambda: _mmv_same(lambda s: struct_rows(s.metric), (2, 3)),
                           "mmv_structs(2).metric, the same in version 3", "metric entry"),
        "mmv-value": t(lambda: _mmv_same(lambda s: struct_rows(s.value), every),
                       "mmv_structs(v).value", "value entry"),
        "mmv-string": t(lambda: _mmv_same(lambda s: struct_rows(s.string), every),
                        "mmv_structs(v).string", "string slot"),
        "mmv-label": t(lambda: struct_rows(mmv_structs(3).label), "mmv_structs(3).label",
                       "label entry"),
    }


def _regions() -> dict[str, Region]:
    ev = event_structs()
    s2, s3 = structs(2), structs(3)
    t = _field_table
    return {
        "version-parameters": Region(_version_table),
        "validator-rules": Region(_rules_table),
        "validator-set-rules": Region(_set_rules_table),
        "mmv-validator-rules": Region(_mmv_rules_table),
        "validator-unchecked": Region(_unchecked_table),
        "timestamp-t2": t(lambda: struct_rows(TimevalT2.subcon), "schema.common.TimevalT2",
                          "timestamp"),
        "timestamp-t3": t(lambda: struct_rows(TimestampT3.subcon),
                          "schema.common.TimestampT3", "timestamp"),
        "timestamp-ts16": t(lambda: struct_rows(TimespecTS16.subcon),
                            "schema.common.TimespecTS16", "timestamp"),
        "framing": t(_framing_rows, "schema.common.Framed", "record (its length word)"),
        "label-v2": t(lambda: struct_rows(s2.label), "structs(2).label"),
        "label-v3": t(lambda: struct_rows(s3.label), "structs(3).label"),
        "meta-record": t(lambda: _same_in_both(lambda v: struct_rows(structs(v).meta)),
                         "structs(v).meta"),
        "desc": t(lambda: _same_in_both(lambda v: _meta_rows(v, 1, structs(v).desc)),
                  "structs(v).desc, tag from structs(v).meta"),
        "indom-v2": t(lambda: _meta_rows(2, 2, s2.indom),
                      "structs(2).indom, tag from structs(2).meta"),
        "indom-v3": t(lambda: _meta_rows(3, 5, s3.indom),
                      "structs(3).indom, tag from structs(3).meta"),
        "indom-v3-delta": t(lambda: _meta_rows(3, 6, s3.indom),
                            "structs(3).indom, tag from structs(3).meta"),
        "labelset-v2": t(lambda: _meta_rows(2, 3, s2.labelset),
                         "structs(2).labelset, tag from structs(2).meta"),
        "labelset-v3": t(lambda: _meta_rows(3, 7, s3.labelset),
                         "structs(3).labelset, tag from structs(3).meta"),
        "labelset": t(lambda: struct_rows(LabelSet), "schema.LabelSet", "label set"),
        "pmlabel": t(lambda: struct_rows(PmLabel), "schema.PmLabel", "pmLabel"),
        "text": t(lambda: _same_in_both(lambda v: _meta_rows(v, 4, structs(v).text)),
                  "structs(v).text, tag from structs(v).meta"),
        "result-v2": t(lambda: struct_rows(s2.result), "structs(2).result"),
        "result-v3": t(lambda: struct_rows(s3.result), "structs(3).result"),
        "pmvalueset": t(lambda: struct_rows(PmValueSet), "schema.PmValueSet", "value set"),
        "pmvalue": t(lambda: struct_rows(PmValue), "schema.PmValue", "pmValue"),
        "pmvalueblock": t(lambda: struct_rows(PmValueBlock), "schema.PmValueBlock",
                          "value block"),
        "event-array": t(lambda: _merged(struct_rows(ev["event-array"]),
                                         struct_rows(ev["highres-array"])),
                         "event_array(highres)", "value block's payload (`vbuf`)"),
        "event-record": t(lambda: struct_rows(ev["event-record"]),
                          "event_array(False)", "event record"),
        "event-record-highres": t(lambda: struct_rows(ev["highres-record"]),
                                  "event_array(True)", "event record"),
        "event-parameter": t(lambda: _merged(struct_rows(ev["event-parameter"]),
                                             struct_rows(ev["highres-parameter"])),
                             "event_array(highres)", "parameter"),
        "index-v2": t(lambda: struct_rows(s2.index_entry), "structs(2).index_entry",
                      "index entry"),
        "index-v3": t(lambda: struct_rows(s3.index_entry), "structs(3).index_entry",
                      "index entry"),
        **_mmv_regions(),
    }


REGIONS: dict[str, Region] = _regions()


def render_region(name: str) -> str:
    """The Markdown of one generated region."""
    return REGIONS[name].render()


# -- spec files ------------------------------------------------------------------------

# Markers stand on lines of their own (so prose may quote them inside backticks).
_REGION_RE = re.compile(
    r"^(<!-- BEGIN GENERATED: (?P<name>[\w.-]+) -->\n)(?P<body>.*?)"
    r"^(<!-- END GENERATED: (?P=name) -->)$", re.S | re.M)
_BEGIN_RE = re.compile(r"^<!-- BEGIN GENERATED: ([\w.-]+) -->$", re.M)


@dataclass
class Report:
    stale: list[str]
    unknown: list[str]
    missing: list[str]
    unclosed: list[str]

    @property
    def ok(self) -> bool:
        return not (self.stale or self.unknown or self.missing or self.unclosed)


def _render_regions(text: str, fname: str, report: Report, seen: set[str]) -> str:
    """``text`` with every region rendered afresh; stale and unknown regions noted in report."""

    def replace(m: re.Match[str]) -> str:
        name = m.group("name")
        seen.add(name)
        if name not in REGIONS:
            report.unknown.append(f"{fname}: {name}")
            return m.group(0)
        body = render_region(name) + "\n"
        if m.group("body") != body:
            report.stale.append(f"{fname}: {name}")
        return m.group(1) + body + m.group(4)

    return _REGION_RE.sub(replace, text)


def update_spec(spec_dir: Path = SPEC_DIR, *, write: bool = True) -> Report:
    """Regenerate (or, with write=False, only compare) every region in spec_dir/*.md."""
    report = Report([], [], [], [])
    seen: set[str] = set()
    for path in sorted(spec_dir.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        closed = {m.group("name") for m in _REGION_RE.finditer(text)}
        report.unclosed += [f"{path.name}: {n}" for n in _BEGIN_RE.findall(text)
                            if n not in closed]
        new = _render_regions(text, path.name, report, seen)
        if write and new != text:
            path.write_text(new, encoding="utf-8")
    report.missing = sorted(set(REGIONS) - seen)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pcpconform.cli.specgen",
        description="Regenerate the schema field tables in spec/*.md.")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if any generated region is stale")
    parser.add_argument("--spec-dir", type=Path, default=SPEC_DIR,
                        help="the directory holding the spec chapters (default: ./spec)")
    parser.add_argument("--list", action="store_true", help="list the region names")
    parser.add_argument("--show", metavar="NAME", help="print one region's table")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(REGIONS))
        return 0
    if args.show:
        if args.show not in REGIONS:
            print(f"unknown region {args.show!r}", file=sys.stderr)
            return 2
        print(render_region(args.show))
        return 0
    if not args.spec_dir.is_dir():
        print(f"{args.spec_dir}: no such directory (run from a checkout, or give --spec-dir)",
              file=sys.stderr)
        return 2
    report = update_spec(args.spec_dir, write=not args.check)
    for what, items in (("stale" if args.check else "updated", report.stale),
                        ("unknown region", report.unknown),
                        ("region not in any spec file", report.missing),
                        ("region without END marker", report.unclosed)):
        for item in items:
            print(f"{what}: {item}", file=sys.stderr)
    if report.unknown or report.missing or report.unclosed:
        return 1
    return 1 if args.check and report.stale else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
