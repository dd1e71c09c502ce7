"""Which PCP is installed on this host, for ``--rules auto`` (INTERP-CLI-7).

The version comes from ``PCP_VERSION`` in pcp.conf (``$PCP_CONF``, else /etc/pcp.conf),
which every PCP installation writes, else from ``pmdumplog --version`` on the PATH. Nothing
here loads libpcp.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Installed", "installed_pcp", "version_tuple", "interp_rules_for", "chosen_rules",
           "other_rules_note", "repositions_on_set_mode"]

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class Installed:
    version: str            # "6.0.3"
    source: str             # where it was read: "/etc/pcp.conf", "pmdumplog --version"


def version_tuple(version: str) -> tuple[int, int, int]:
    m = _VERSION.search(version)
    if m is None:
        raise ValueError(f"not a PCP version: {version!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def _from_conf(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r"^PCP_VERSION=[\"']?(\d+\.\d+\.\d+)", text, re.M)
    return m.group(1) if m else None


def installed_pcp() -> Installed | None:
    """The host's PCP version and where it was found, or None when no PCP is installed."""
    conf = Path(os.environ.get("PCP_CONF") or "/etc/pcp.conf")
    version = _from_conf(conf)
    if version is not None:
        return Installed(version, str(conf))
    tool = shutil.which("pmdumplog")
    if tool is None:
        return None
    import subprocess  # only where /etc/pcp.conf does not say

    try:
        proc = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10,
                              errors="replace")
    except (OSError, subprocess.SubprocessError):
        return None
    m = _VERSION.search(proc.stdout + proc.stderr)
    return Installed(m.group(0), "pmdumplog --version") if m else None


def interp_rules_for(version: str) -> str:
    """The interpolation rule set that models libpcp ``version`` (INTERP-VER-1)."""
    return "pcp-6.0" if version_tuple(version) < (6, 3, 2) else "pcp-6.3"


def repositions_on_set_mode(version: str) -> bool:
    """Whether libpcp ``version`` positions a context again at the fetch after a later
    pmSetMode (from 7.0.0, INTERP-VER-2)."""
    return version_tuple(version) >= (7, 0, 0)


def other_rules_note(tool: str, chosen: str, pick: Callable[[str], str], what: str = "rules") -> str | None:
    """With no ``--rules`` given: a note, for standard error, that the PCP installed here
    goes by another rule set (profile) than ``chosen``, naming the option that follows it
    (INTERP-CLI-8, DERIVE-CLI-11); None when it goes by ``chosen`` or no PCP is found."""
    found = installed_pcp()
    if found is None:
        return None
    theirs = pick(found.version)
    if theirs == chosen:
        return None
    return (f"{tool}: note: using the {chosen} {what} (the default); the PCP installed here "
            f"({found.version}, {found.source}) goes by {theirs}: give --rules {theirs} "
            f"(or --rules auto) to compare with it")


def chosen_rules(requested: str, pick: Callable[[str], str], default: str) -> tuple[str, str]:
    """(rule set, how it was chosen) for ``--rules requested``; ``auto`` picks the one
    matching the installed PCP, else ``default`` and says that none was found."""
    if requested != "auto":
        return requested, "as asked"
    found = installed_pcp()
    if found is None:
        return default, f"--rules auto: no PCP installed here (no pcp.conf, no pmdumplog): {default}"
    return pick(found.version), f"matching the installed PCP {found.version} ({found.source})"
