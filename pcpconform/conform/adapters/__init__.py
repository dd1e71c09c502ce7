"""Built-in implementations for ``pcpconform conform``: each a command speaking the protocol of
spec/conformance.md, run by name instead of a ``--impl`` string.

    BUILTIN["libpcp-6.3"].available()   # is that PCP installed here?
    BUILTIN["libpcp-6.3"].command       # the --impl string that runs it

``pcpconform`` is the kit itself (``pcpconform.conform.adapters.kit``); ``libpcp-6.0.3``,
``libpcp-6.3`` and ``libpcp-7`` are the reference libpcps (``libpcp.py``: the host's Debian
PCP, and the trixie and sid chroots under ``$PCPCONFORM_CHROOTS``, default /opt/pcpconform).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pcpconform.conform.adapters import libpcp
from pcpconform.conform.adapters.libpcp import TARGETS, LibpcpTarget

__all__ = ["BuiltinAdapter", "BUILTIN"]


@dataclass(frozen=True)
class BuiltinAdapter:
    """A named implementation: the argv that runs it and whether it can run here."""

    name: str
    description: str
    argv: tuple[str, ...]
    probe: Callable[[], bool]

    def available(self) -> bool:
        return self.probe()

    @property
    def command(self) -> str:
        """The ``--impl`` string (shell-quoted argv; the runner splits it, CONF-IMPL-1)."""
        return shlex.join(self.argv)


def _kit_present() -> bool:
    return True         # the kit's adapter ships with the kit


def _libpcp(target: LibpcpTarget, where: str) -> BuiltinAdapter:
    return BuiltinAdapter(
        target.name, f"libpcp {target.version_prefix}x ({where}): pmlogcheck as validator, "
        "the PMAPI as reader (pmFetchArchive ...), libpcp_import (pmi) as writer, interp (PM_MODE_INTERP) and "
        "derive (pmLoadDerivedConfig), mmvdump as MMV validator, libpcp_mmv as MMV writer",
        # run as a file, not with -m: importing the package pcpconform.conform would cost each case
        (sys.executable, str(Path(libpcp.__file__)), "--target", target.name),
        target.available)


BUILTIN: dict[str, BuiltinAdapter] = {
    "pcpconform": BuiltinAdapter("pcpconform", "the kit itself (pcpconform check, pcpconform dump)",
                                 (sys.executable, "-m", "pcpconform.conform.adapters.kit"), _kit_present),
    "libpcp-6.0.3": _libpcp(TARGETS["libpcp-6.0.3"], "Debian bookworm, the host"),
    "libpcp-6.3": _libpcp(TARGETS["libpcp-6.3"], "Debian trixie, chroot"),
    "libpcp-7": _libpcp(TARGETS["libpcp-7"], "Debian sid, chroot"),
}
