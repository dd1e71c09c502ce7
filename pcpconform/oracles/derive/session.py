"""Registering and binding derived metrics as one libpcp context does: the definitions
pmLoadDerivedConfig / pmRegisterDerived accept, their global pmIDs, and the descriptor each
wanted metric binds to (or the message libpcp prints instead). ``pcpconform derive`` and the
corpus expectations both go through here, so a case's expected output is what the command
prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pcpconform.errors import DeriveSemanticError
from pcpconform.io.archive import Archive
from pcpconform.oracles.derive.bind import Bound, bind
from pcpconform.oracles.derive.config import ANON, Definition, Registry
from pcpconform.oracles.derive.profiles import Profile
from pcpconform.oracles.derive.state import derived_pmid

__all__ = ["Registered", "Binding", "registered", "bind_wanted"]


@dataclass
class Registered:
    """The definitions a registry holds after loading (anonymous event metrics left out),
    with their pmIDs set."""

    definitions: list[Definition]

    def by_name(self) -> dict[str, Definition]:
        return {d.name: d for d in self.definitions}


@dataclass
class Binding:
    bounds: list[Bound] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)     # wanted names never registered


def registered(registry: Registry) -> Registered:
    """Global derived pmIDs count up from 511.0.1 in registration order, the anonymous event
    metrics first (measured: pminfo -m shows the first defined metric as 511.0.3)."""
    regs = [d for d in registry.metrics.values() if d.registered]
    for k, d in enumerate(regs):
        d.pmid = derived_pmid(k)
    return Registered([d for d in regs if d.name not in ANON])


def bind_wanted(defs: Registered, wanted: Sequence[str], archive: Archive, prof: Profile) -> Binding:
    """Bind ``wanted`` (every definition when empty) in order. libpcp's anonymous
    ``event.flags`` and ``event.missed`` are derived metrics operands may name
    (INTERP-BUILTIN-1, DERIVE-CLI-10): they are bound first, as libpcp registers them first."""
    fresh = Registry(prof)
    derived: dict[str, Bound | None] = {}
    for name in ANON:
        tree = fresh.metrics[name].tree
        derived[name] = None if tree is None else bind(tree, name, archive, prof)
    by_name = defs.by_name()
    out = Binding()
    for name in wanted or list(by_name):
        d = by_name.get(name)
        if d is None or d.tree is None:
            out.unknown.append(name)
            continue
        try:
            b = bind(d.tree, name, archive, prof, derived=derived)
        except DeriveSemanticError as e:
            derived[name] = None
            out.messages.append(e.text or f"derived metric {name}: {e.reason} "
                                          "(libpcp prints nothing; pmLookupDesc fails)")
            continue
        derived[name] = b
        out.bounds.append(b)
    return out
