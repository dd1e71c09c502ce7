"""Running work on an existing Dask distributed cluster: the one helper behind every
``--dask`` (``check``, ``conform`` and ``fuzz``).

    with Cluster("tcp://scheduler:8786") as cluster:
        for i, outcome in cluster.completed(fn, [(a, b), (c, d)]):
            ...                     # outcome: fn's return value, or a WorkerDied

The workers must run the same pcpconform and see the same files at the same paths (a shared
file system), with the same working directory when the paths are relative: each call
checks that through :func:`worker_problem` before doing anything, so a worker that cannot
give the local run's answer says why instead of giving another one.

Dask is imported only here and only when a cluster is asked for (the ``dask`` extra).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from pcpconform.errors import UsageError
from pcpconform.version import __version__

__all__ = ["Cluster", "WorkerDied", "CONNECT_TIMEOUT", "worker_problem"]

#: seconds to wait for the scheduler to answer before giving up (exit 2)
CONNECT_TIMEOUT = 20.0


@dataclass(frozen=True)
class WorkerDied:
    """What a call comes back as when its worker died (on every retry Dask allows)."""

    reason: str


def worker_problem(version: str, cwd: str, paths: Sequence[Path]) -> str | None:
    """Why this worker cannot answer as the submitting process would, or None: another
    pcpconform version, another working directory for relative paths, or files it cannot see."""
    host = socket.gethostname()
    if version != __version__:
        return f"the Dask worker on {host} runs pcpconform {__version__}, not {version}"
    if any(not p.is_absolute() for p in paths) and os.getcwd() != cwd:
        return f"the Dask worker on {host} works in {os.getcwd()}, not {cwd}: give absolute paths"
    for p in paths:
        if not p.parent.is_dir():
            return f"the Dask worker on {host} does not see {p.parent} (the workers need the same files)"
    return None


class Cluster:
    """A client of the Dask scheduler at ``address``; UsageError when there is none."""

    def __init__(self, address: str, timeout: float | None = None) -> None:
        if not address.strip():
            # Client("") would start a cluster of its own instead of using the user's
            raise UsageError("--dask needs the address of a running scheduler")
        self.address = address
        self.timeout = CONNECT_TIMEOUT if timeout is None else timeout
        self.client: Any = None

    def __enter__(self) -> Cluster:
        from distributed import Client
        from distributed.comm.addressing import resolve_address

        # the client logs a lost scheduler with tracebacks; this says it in one line instead
        self._client_log = logging.getLogger("distributed.client")
        self._client_level = self._client_log.level
        self._client_log.setLevel(logging.CRITICAL)
        try:
            # a malformed address makes Client fail half-started (its clean-up then hangs at
            # exit): reject one here, leaving only the timeout to the Client
            resolve_address(self.address)
            self.client = Client(self.address, timeout=self.timeout,  # type: ignore[no-untyped-call]
                                 set_as_default=False)
        except (OSError, ValueError, TypeError) as exc:
            self._client_log.setLevel(self._client_level)
            raise UsageError(f"--dask {self.address}: cannot reach the scheduler: {exc}") from None
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.client is not None:
            with contextlib.suppress(OSError, TimeoutError):     # a scheduler gone already
                self.client.close()
            self.client = None
            self._client_log.setLevel(self._client_level)

    def completed(self, fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]]
                  ) -> Iterator[tuple[int, Any]]:
        """``fn(*call)`` for every call on the cluster, as each finishes: (index, value).
        An exception ``fn`` raises is raised here; a call whose worker died gives
        a :class:`WorkerDied`."""
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        # one map call: the scheduler starts them in input order, so output streams early
        futures = self.client.map(fn, *zip(*calls), pure=False) if calls else []
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in as_completed(futures, loop=self.client.loop):  # type: ignore[no-untyped-call]
                try:
                    value = fut.result()
                except KilledWorker as exc:
                    value = WorkerDied(str(exc))
                except (CancelledError, OSError) as exc:    # the scheduler went away
                    why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                    raise UsageError(f"--dask {self.address}: the cluster stopped the work: {why}") from None
                yield index[fut.key], value
        finally:
            with contextlib.suppress(OSError, CancelledError):
                self.client.cancel(futures)

    def on_every_worker(self, fn: Callable[..., Any], *args: Any) -> None:
        """``fn(*args)`` once in every worker process (cleaning up what calls left there);
        nothing when the cluster is gone (and what was left with it)."""
        with contextlib.suppress(OSError, CancelledError):
            self.client.run(fn, *args)
