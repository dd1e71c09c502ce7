"""``--dask ADDRESS``: the Dask scheduler a command hands its work to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pcpconform.errors import UsageError
from pcpconform.extra import MissingExtra, require

if TYPE_CHECKING:       # the Dask helper's modules (socket, logging, futures) only with --dask
    from pcpconform.cluster import Cluster

__all__ = ["dask_cluster"]


def dask_cluster(address: str, command: str) -> Cluster:
    """--dask: the scheduler, or a UsageError saying which extra ``command`` is missing."""
    try:
        require("distributed", "dask", f"pcpconform {command} --dask")
    except MissingExtra as exc:
        raise UsageError(str(exc)) from None
    from pcpconform.cluster import Cluster

    return Cluster(address)
