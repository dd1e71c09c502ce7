"""libpcp's bound cache (oracles/interp/cache.py) with one clause taken out at a time.

Each ablation is a context manager that patches ``cache.Context`` (or the lifetime table)
so that the model no longer does what one clause of spec/interp.md says. A pinned example
of that clause must then come out differently: that is what makes its test able to fail.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

from pcpconform.oracles.interp import cache, cached
from pcpconform.oracles.interp import replay as replay_module

__all__ = ["ABLATIONS"]

Context = cache.Context


@contextlib.contextmanager
def _eager_end() -> Iterator[None]:
    """INTERP-CACHE-1 out: the context knows the archive's end from the start."""
    init = Context.__init__

    def patched(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.ac_end = self.arch.end
    with mock.patch.object(Context, "__init__", patched):
        yield


@contextlib.contextmanager
def _fine_positioning_sees_marks() -> Iterator[None]:
    """INTERP-CACHE-2 out (its mark-blind fine positioning): the records read backing up to
    the fetch time bound instances with marks too."""
    update = Context._update

    def patched(self: Any, rec: Any, t_req: float, do_mark: int, searching: Any) -> bool:
        if do_mark == cache._NONE:
            do_mark = cache._BACK if self.direction > 0 else cache._FORW
        return update(self, rec, t_req, do_mark, searching)
    with mock.patch.object(Context, "_update", patched):
        yield


@contextlib.contextmanager
def _set_mode_forgets_all() -> Iterator[None]:
    """INTERP-CACHE-2 out (its forgetting): pmSetMode forgets every cached bound, not only
    those that do not bracket the new time."""
    set_mode = Context.set_mode

    def patched(self: Any, origin: Any, delta_nsec: int) -> None:
        set_mode(self, origin, delta_nsec)
        for m in self.metrics.values():
            for icp in m.order:
                icp.forget()
    with mock.patch.object(Context, "set_mode", patched):
        yield


@contextlib.contextmanager
def _marks_bound_nothing() -> Iterator[None]:
    """INTERP-CACHE-3 out (a mark bounds every requested instance): a mark read by the roll
    or a search sets no bound (and is not seen)."""
    with mock.patch.object(Context, "_mark", lambda self, t_this, t_req, do_mark, searching: False):
        yield


@contextlib.contextmanager
def _no_roll() -> Iterator[None]:
    """INTERP-CACHE-4 out: no roll towards the fetch time before the searches."""
    with mock.patch.object(Context, "_roll", lambda self, t_req: False):
        yield


def _search_forgetting(forward: bool) -> Callable[[], Any]:
    @contextlib.contextmanager
    def ablation() -> Iterator[None]:
        """INTERP-CACHE-5 (backwards, ``t_first``) or -6 (forwards, ``t_last``) out: a search
        that finds nothing leaves nothing known, so the next fetch searches again."""
        search = Context._search

        def patched(self: Any, unbound: list[Any], t_req: float, fwd: bool) -> bool:
            attr = "last" if forward else "first"
            before = {id(icp): getattr(icp, attr) for icp in unbound}
            seen = search(self, unbound, t_req, fwd)
            if fwd == forward:
                for icp in unbound:
                    setattr(icp, attr, before[id(icp)])
            return seen
        with mock.patch.object(Context, "_search", patched):
            yield
    return ablation


@contextlib.contextmanager
def _lifetime_for_every_semantics() -> Iterator[None]:
    """INTERP-CACHE-7 out (bounds cached while an instance lived): a COUNTER or INSTANT
    instance past its death has no value, as a DISCRETE one has not."""
    missing = Context._missing

    def patched(icp: Any, t_req: float, sem: int) -> str | None:
        if icp.death != -1 and t_req > icp.death:
            return "not alive"
        result: str | None = missing(icp, t_req, sem)
        return result
    with mock.patch.object(Context, "_missing", staticmethod(patched)):
        yield


@contextlib.contextmanager
def _nonnumeric_exact_hit() -> Iterator[None]:
    """INTERP-CACHE-7 out (a string takes its lower bound's value): an upper bound observed
    at the fetch time is returned, as for numbers."""
    value = Context._value

    def patched(self: Any, icp: Any, t_req: float, sem: int, ptype: int, numeric: bool) -> Any:
        if not numeric and icp.next_t == t_req and icp.next_v is not None:
            return icp.next_v
        return value(self, icp, t_req, sem, ptype, numeric)
    with mock.patch.object(Context, "_value", patched):
        yield


@contextlib.contextmanager
def _stale_next_ignored() -> Iterator[None]:
    """INTERP-CACHE-7 out (an upper bound left before the fetch time wins the midpoint
    test): such a bound is not taken."""
    value = Context._value

    def patched(self: Any, icp: Any, t_req: float, sem: int, ptype: int, numeric: bool) -> Any:
        if numeric and icp.next_t < t_req and icp.prior_t != t_req:
            return icp.prior_v
        return value(self, icp, t_req, sem, ptype, numeric)
    with mock.patch.object(Context, "_value", patched):
        yield


@contextlib.contextmanager
def _first_omission_kills() -> Iterator[None]:
    """INTERP-EXIST-2 out (time_caliper): an instance dies at the first record that leaves
    it out, as the oracle had it, and never comes back."""
    def patched(history: Any, instances: Any) -> dict[int, tuple[float, float]]:
        records = [(t, frozenset(i)) for t, i in history]
        if not records or max(len(i) for _, i in records) < cache.CALIPER:
            return {}
        table = {}
        for inst in instances:
            birth = next((t for t, i in records if inst in i), -1.0)
            death = next((t for t, i in records if birth >= 0 and t > birth and inst not in i), -1.0)
            table[inst] = (birth, death)
        return table
    with mock.patch.object(cache, "calipers", patched), mock.patch.object(cached, "calipers", patched), \
            mock.patch.object(replay_module, "calipers", patched):
        yield


@contextlib.contextmanager
def _no_reposition() -> Iterator[None]:
    """INTERP-VER-2 out: libpcp 7's later pmSetModes leave the context serial, as 6.x's."""
    init = Context.__init__

    def patched(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["reposition_on_set_mode"] = False
        init(self, *args, **kwargs)
    with mock.patch.object(Context, "__init__", patched):
        yield


#: ablation name -> (the clause it takes out, the context manager)
ABLATIONS: dict[str, tuple[str, Callable[[], Any]]] = {
    "eager-end": ("INTERP-CACHE-1", _eager_end),
    "fine-positioning-sees-marks": ("INTERP-CACHE-2", _fine_positioning_sees_marks),
    "set-mode-forgets-all": ("INTERP-CACHE-2", _set_mode_forgets_all),
    "marks-bound-nothing": ("INTERP-CACHE-3", _marks_bound_nothing),
    "no-roll": ("INTERP-CACHE-4", _no_roll),
    "no-t-first": ("INTERP-CACHE-5", _search_forgetting(False)),
    "no-t-last": ("INTERP-CACHE-6", _search_forgetting(True)),
    "lifetime-for-every-semantics": ("INTERP-CACHE-7", _lifetime_for_every_semantics),
    "nonnumeric-exact-hit": ("INTERP-CACHE-7", _nonnumeric_exact_hit),
    "stale-next-ignored": ("INTERP-CACHE-7", _stale_next_ignored),
    "first-omission-kills": ("INTERP-EXIST-2", _first_omission_kills),
    "no-reposition": ("INTERP-VER-2", _no_reposition),
}
