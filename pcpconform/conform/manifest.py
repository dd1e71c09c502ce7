"""The corpus as data: finding its cases, reading each ``case.json`` and validating it
against ``schema/case.schema.json``.

A corpus directory holds ``schema/case.schema.json`` and ``cases/<kind>/<id>/``, one
directory per case with its ``case.json`` and its files (``corpus/README.md``). The schema
is checked with the ``jsonschema`` package when it is installed (the ``test`` extra) and
always with the small validator below, which understands the part of JSON Schema the case
schema uses, so that a broken case is one clear line whether or not ``jsonschema`` is there.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcpconform.errors import UsageError

__all__ = ["ManifestError", "Case", "CASE_FILE", "SCHEMA", "KINDS", "load_schema", "load_case",
           "load_corpus", "schema_errors", "installed_corpus", "default_corpus"]

CASE_FILE = "case.json"
#: the schema's place, relative to the corpus directory
SCHEMA = Path("schema") / "case.schema.json"
KINDS = ("valid", "invalid")


class ManifestError(UsageError):
    """The corpus cannot be read: no such directory, a case file that is not JSON or does
    not follow the schema (exit status 2: nothing can be checked against it)."""


@dataclass(frozen=True)
class Case:
    """One case: its directory and its ``case.json``."""

    path: Path
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def kind(self) -> str:
        return str(self.data["kind"])

    @property
    def expected(self) -> dict[str, Any]:
        return dict(self.data["expected"])

    @property
    def format(self) -> str:
        """``archive``, ``mmv`` or ``set``: what the case's input is."""
        return str(self.data.get("format", "archive"))

    @property
    def base(self) -> Path:
        """The archive's base name (its files need not all exist: see the case's fault);
        for an MMV case, its file; for an archive set, ``source`` as a path."""
        if self.format == "set":
            return Path(self.source)
        return self.path / str(self.data["file" if self.format == "mmv" else "archive"])

    @property
    def source(self) -> str:
        """An archive set's name as a client gives it: the case directory (whose ``.meta``
        files are the members'), or the members of ``set.list`` joined with commas."""
        listed = self.data.get("set", {}).get("list")
        if listed:
            return ",".join(str(self.path / m) for m in listed)
        return str(self.path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"{path}: not JSON: {exc}") from None


def load_schema(corpus: Path) -> dict[str, Any]:
    schema = _read_json(corpus / SCHEMA)
    if not isinstance(schema, dict):
        raise ManifestError(f"{corpus / SCHEMA}: not a JSON Schema object")
    return schema


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "integer": (int,),
    "number": (int, float), "boolean": (bool,), "null": (type(None),),
}


def _is(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    return isinstance(value, _TYPES[name])


def schema_errors(schema: dict[str, Any], value: Any, where: str = "",
                  root: dict[str, Any] | None = None) -> list[str]:
    """What is wrong with ``value`` under ``schema``, for the keywords the case schema uses
    (type, enum, const, required, properties, additionalProperties, propertyNames,
    minProperties, items, minItems, uniqueItems, pattern, minLength, if/then/else and
    ``$ref`` to ``#/$defs/NAME``); each as "at PATH: problem"."""
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return schema_errors(root["$defs"][ref[len("#/$defs/"):]], value, where, root)
    at = where or "/"
    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_is(value, n) for n in names):
            return [f"at {at}: {json.dumps(value)[:40]} is not of type {' or '.join(names)}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"at {at}: {json.dumps(value)[:40]} is not one of {json.dumps(schema['enum'])}"]
    if "const" in schema and value != schema["const"]:
        return [f"at {at}: {json.dumps(value)[:40]} is not {json.dumps(schema['const'])}"]
    out: list[str] = []
    if "if" in schema:
        branch = "then" if not schema_errors(schema["if"], value, where, root) else "else"
        out += schema_errors(schema.get(branch, {}), value, where, root)
    if isinstance(value, dict):
        out += [f"at {at}: {name!r} is required" for name in schema.get("required", ())
                if name not in value]
        if len(value) < schema.get("minProperties", 0):
            out.append(f"at {at}: fewer than {schema['minProperties']} members")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for name, member in value.items():
            out += schema_errors(schema.get("propertyNames", {}), name, f"{where}/{name} (name)", root)
            if name in props:
                out += schema_errors(props[name], member, f"{where}/{name}", root)
            elif extra is False:
                out.append(f"at {at}: unknown member {name!r}")
            elif isinstance(extra, dict):
                out += schema_errors(extra, member, f"{where}/{name}", root)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"at {at}: fewer than {schema['minItems']} items")
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) < len(value):
            out.append(f"at {at}: items are not unique")
        for i, item in enumerate(value):
            out += schema_errors(schema.get("items", {}), item, f"{where}/{i}", root)
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(f"at {at}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"at {at}: {value[:40]!r} does not match {schema['pattern']}")
    return out


def _jsonschema_errors(schema: dict[str, Any], value: Any) -> list[str] | None:
    """The ``jsonschema`` package's verdict, or None when it is not installed."""
    try:
        jsonschema: Any = importlib.import_module("jsonschema")
    except ImportError:
        return None
    validator = jsonschema.Draft202012Validator(schema)
    return [f"at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"
            for e in validator.iter_errors(value)]


def load_case(path: Path, schema: dict[str, Any]) -> Case:
    """The case in directory ``path``; ManifestError if its case.json is broken."""
    file = path / CASE_FILE
    data = _read_json(file)
    problems = schema_errors(schema, data) or _jsonschema_errors(schema, data) or []
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ManifestError(f"{file}: does not follow {SCHEMA}: {problems[0]}{more}")
    return Case(path, data)


def _is_corpus(path: Path) -> bool:
    return (path / "cases").is_dir() and (path / SCHEMA).is_file()


def installed_corpus() -> Path | None:
    """The corpus installed with the package (``pcpconform/corpus`` in a wheel), or, where
    pcpconform runs from a checkout (an editable install), the checkout's ``corpus/``."""
    package = Path(__file__).resolve().parents[1]
    for where in (package / "corpus", package.parent / "corpus"):
        if _is_corpus(where):
            return where
    return None


def default_corpus() -> Path:
    """The corpus ``conform`` runs when none is named: ``corpus/`` of the working directory
    when it is one (a checkout), else the one installed with pcpconform."""
    here = Path("corpus")
    if _is_corpus(here):
        return here
    return installed_corpus() or here


def load_corpus(corpus: str | Path) -> list[Case]:
    """Every case of the corpus, valid ones first, each kind in order of its id."""
    root = Path(corpus)
    if not (root / "cases").is_dir():
        raise ManifestError(f"{root}: not a corpus directory (no cases/)")
    schema = load_schema(root)
    cases = []
    for kind in KINDS:
        where = root / "cases" / kind
        if where.is_dir():
            cases += [load_case(d, schema) for d in sorted(where.iterdir()) if d.is_dir()]
    return cases
