"""The derived-metric comparison is honest: what it leaves out is what libpcp did, not what
the oracle says (tests/differential/libpcp/derive_compare.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tests.differential.libpcp.derive_compare import Comparison, Outcome, _values_differ, mismatches


def _one_expression(ours: list[list[Any]], theirs: list[list[Any]],
                    again: list[list[list[Any]]] = ()) -> Comparison:  # type: ignore[assignment]
    """A comparison of one bound expression (an operand, "m.x") over one fetch."""
    cmp = Comparison(["m.x"], alive=[0])
    cmp.ours["d.e0"] = cmp.theirs["d.e0"] = Outcome(desc=(1, 3, None, 0))
    cmp.bound = [SimpleNamespace(name="d.e0")]  # type: ignore[list-item]
    cmp.values_ours = [{"d.e0": ours}]
    cmp.values_intended = [{"d.e0": ours}]
    cmp.values_theirs = [{"d.e0": theirs}]
    cmp.values_again = [[{"d.e0": run}] for run in again]
    cmp.deviations = [{}]
    cmp.eol_ours = cmp.eol_theirs = [False]
    return cmp


def test_an_operand_that_interpolates_differently_is_a_mismatch() -> None:
    """An operand's value is compared like any expression's: no warning-and-skip."""
    found = mismatches(_one_expression([[-1, 5]], [[-1, 6]], again=[[[-1, 6]]]))
    assert found and all(line.startswith("'m.x' fetch 0") for line in found)


def test_unpredictable_is_no_excuse_where_libpcp_is_deterministic() -> None:
    """The oracle's "?" matches only where libpcp's runs in different heap states differ."""
    cmp = Comparison([])
    assert _values_differ([[-1, "?"]], [[[-1, 5]], [[-1, 5]], [[-1, 5]]], cmp)
    assert not _values_differ([[-1, "?"]], [[[-1, 5]], [[-1, 7]], [[-1, 5]]], cmp)
    assert cmp.uninitialised == 1


def test_only_what_libpcp_did_decides_what_is_left_out() -> None:
    """A value libpcp's heap-state runs disagree on is not compared, whatever the oracle
    answers; the instance beside it, on which the runs agree, still is."""
    cmp = Comparison([])
    runs = [[[0, 5], [1, 9]], [[0, 7], [1, 9]]]
    assert not _values_differ([[0, 4], [1, 9]], runs, cmp)
    assert _values_differ([[0, 4], [1, 8]], runs, cmp)
    assert _values_differ([[2, 5], [1, 9]], runs, cmp)     # the instance ids agree: compared
