"""A pytest plugin: the corpus as parametrised tests of an implementation (spec/conformance.md).

    pytest --pcpconform-impl "python3 my_adapter.py" [--pcpconform-suite reader]...
           [--pcpconform-corpus DIR] [--pcpconform-cases GLOB]... [--pcpconform-timeout SEC]

Each unit of each chosen suite becomes a test named ``conform[SUITE:UNIT]``: it passes, is
skipped with the runner's reason (CONF-CAP-2), or fails with the unit's verdict, smallest
difference and clauses. ``-k``, ``-x``, ``--junitxml`` and the rest of pytest work as usual.
The plugin is registered under ``pytest11`` and does nothing without ``--pcpconform-impl``;
elsewhere ``-p pcpconform.conform.plugin`` loads it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from pcpconform.conform.manifest import default_corpus, load_corpus
from pcpconform.conform.protocol import SUITES, Capabilities, command_argv
from pcpconform.conform.runner import DEFAULT_TIMEOUT, Sessions, Unit, query_capabilities, run_unit, select_units
from pcpconform.conform.verdicts import CaseResult, Verdict
from pcpconform.errors import PcpConformError

__all__ = ["pytest_addoption", "pytest_collection_modifyitems", "ConformItem", "ConformFailure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pcpconform", "conformance of a PCP archive implementation")
    group.addoption("--pcpconform-impl", metavar="CMD", help="run the corpus against this command")
    group.addoption("--pcpconform-suite", action="append", choices=SUITES, metavar="SUITE",
                    help=f"a suite ({', '.join(SUITES)}); repeatable; default: all")
    group.addoption("--pcpconform-corpus", default=None, metavar="DIR",
                    help="the corpus directory (default: ./corpus when it is one, else the installed corpus)")
    group.addoption("--pcpconform-cases", action="append", default=[], metavar="GLOB",
                    help="only the cases or units matching GLOB; repeatable")
    group.addoption("--pcpconform-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SEC",
                    help="seconds one case may take")


class ConformFailure(Exception):
    """A unit that did not pass: its result."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.detail)
        self.result = result


class _Run:
    """The implementation, asked once for its capabilities; its persistent processes when
    it offers that form."""

    def __init__(self, impl: str, timeout: float) -> None:
        self.argv = command_argv(impl)
        self.timeout = timeout
        self.tmp = tempfile.TemporaryDirectory(prefix="pcpconform-pytest-", ignore_cleanup_errors=True)
        self.caps: Capabilities = query_capabilities(self.argv, timeout)
        self.sessions: Sessions | None = None
        if self.caps.persistent:
            self.sessions = Sessions(self.argv, Path(self.tmp.name), timeout)
            self.caps = self.sessions.first()

    def close(self) -> None:
        if self.sessions is not None:
            self.sessions.stop()
        self.tmp.cleanup()


class ConformItem(pytest.Item):
    """One unit of the corpus run against the implementation."""

    def __init__(self, *, unit: Unit, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.unit = unit

    def runtest(self) -> None:
        run = _shared(self.config)
        result = run_unit(run.argv, self.unit, run.caps, run.timeout, sessions=run.sessions)
        if result.verdict == Verdict.SKIP:
            pytest.skip(result.detail)
        if result.verdict != Verdict.PASS:
            raise ConformFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformFailure):
            r = excinfo.value.result
            clauses = f" [{' '.join(r.clauses)}]" if r.clauses else ""
            lines = [f"{r.verdict.value.upper()} {r.suite} {r.case}{clauses}", r.detail]
            if r.stderr and r.verdict != Verdict.FAIL:
                lines.append(f"stderr: {r.stderr.splitlines()[-1]}")
            return "\n".join(lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, None, str]:
        return self.unit.case.path / "case.json", None, f"conform[{self.unit.suite}:{self.unit.name}]"


_KEY = pytest.StashKey["_Run"]()


def _shared(config: pytest.Config) -> _Run:
    if _KEY not in config.stash:
        run = _Run(config.getoption("pcpconform_impl"), config.getoption("pcpconform_timeout"))
        config.stash[_KEY] = run
        config.add_cleanup(run.close)
    return config.stash[_KEY]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add one item per unit when ``--pcpconform-impl`` is given (before ``-k`` deselects)."""
    if not config.getoption("pcpconform_impl"):
        return
    try:
        units = select_units(load_corpus(config.getoption("pcpconform_corpus") or default_corpus()),
                             config.getoption("pcpconform_suite") or SUITES,
                             config.getoption("pcpconform_cases"))
    except PcpConformError as exc:
        raise pytest.UsageError(f"--pcpconform: {exc}") from None
    items.extend(ConformItem.from_parent(session, name=f"conform[{u.suite}:{u.name}]", unit=u) for u in units)
