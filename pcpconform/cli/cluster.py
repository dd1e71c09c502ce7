"""``--dask ADDRESS``: the Dask scheduler a command hands its work to."""

from __future__ import annotations

from pcpconform.cluster import Cluster
from pcpconform.errors import UsageError
from pcpconform.extra import MissingExtra, require

__all__ = ["dask_cluster"]


def dask_cluster(address: str, command: str) -> Cluster:
    """--dask: the scheduler, or a UsageError saying which extra ``command`` is missing."""
    try:
        require("distributed", "dask", f"pcpconform {command} --dask")
    except MissingExtra as exc:
        raise UsageError(str(exc)) from None
    return Cluster(address)
