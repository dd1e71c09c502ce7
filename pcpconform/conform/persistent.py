"""The persistent form of the runner protocol (spec/conformance.md, CONF-PERSIST-*): one
process of the implementation answers many cases, one JSON object per line each way.

    session = Session(argv, workdir)
    caps = session.start()                 # {"cmd": "start", "protocol": 1} -> capabilities
    reply = session.run({"cmd": "run", "seq": 1, ...}, timeout=60)
    session.stop()                         # {"cmd": "stop"}, then the process must exit

A reply is the answer's :class:`Outcome` (as if the one-shot form had printed it), or why
there is none: skipped by the implementation, a crash (the process died), a timeout, or a
protocol error. After anything but an answer or a skip the process is killed, and the next
``run`` starts a new one (CONF-PERSIST-4).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pcpconform.conform.protocol import (
    PROTOCOL_VERSION,
    Capabilities,
    Outcome,
    ProtocolViolation,
    capabilities_from,
)

__all__ = ["Session", "Reply", "PERSISTENT_FLAG", "LINE_LIMIT"]

#: the argument that starts an implementation in the persistent form
PERSISTENT_FLAG = "--persistent"
#: the longest line the runner reads from an implementation (a whole dump fits easily)
LINE_LIMIT = 256 * 1024 * 1024
_STDERR_LINES = 20


@dataclass
class Reply:
    """What came back for one request: ``outcome`` when the implementation answered;
    otherwise one of ``skipped``, ``crashed``, ``timed_out`` or ``violation`` says why not."""

    outcome: Outcome | None = None
    skipped: str | None = None
    crashed: str | None = None
    timed_out: bool = False
    violation: str | None = None
    seconds: float = 0.0
    stderr: str = ""


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


class Session:
    """One implementation process in the persistent form, started (again) on demand."""

    def __init__(self, argv: Sequence[str], cwd: Path, *, start_timeout: float = 60.0) -> None:
        self.argv = [*argv, PERSISTENT_FLAG]
        self.cwd = cwd
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self.capabilities: Capabilities | None = None
        self.starts = 0
        self.stderr_reader: threading.Thread | None = None

    # -- the process -----------------------------------------------------------------------

    def _spawn(self) -> None:
        self.lines = queue.Queue()
        self.stderr = deque(maxlen=_STDERR_LINES)
        self.proc = subprocess.Popen(self.argv, cwd=self.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.starts += 1
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._read_stdout, args=(self.proc.stdout, self.lines), daemon=True).start()
        self.stderr_reader = threading.Thread(target=self._read_stderr, args=(self.proc.stderr, self.stderr),
                                              daemon=True)
        self.stderr_reader.start()

    @staticmethod
    def _read_stdout(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
        with contextlib.suppress(OSError, ValueError):
            while True:
                line = stream.readline(LINE_LIMIT)
                if not line:
                    break
                lines.put(line)
        lines.put(None)

    @staticmethod
    def _read_stderr(stream: IO[bytes], tail: deque[str]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in stream:
                tail.append(line.decode("utf-8", "replace").rstrip("\n")[:400])

    def kill(self) -> None:
        """Kill the process and its whole group; the next request starts a new one."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin:
                proc.stdin.close()
        proc.wait()

    def _send(self, message: dict[str, Any]) -> bool:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def _receive(self, timeout: float) -> bytes | None:
        """The next line; None at end of output; b"" at the timeout (a line is never empty)."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return b""

    def _death(self) -> str:
        """Why the process stopped answering (it closed its output): its exit status."""
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "closed its standard output without answering"
        if self.stderr_reader is not None:     # let it read what the process said last
            self.stderr_reader.join(timeout=1)
        if code < 0:
            return f"killed by {_signal_name(code)}"
        return f"exited with status {code} without answering"

    def stderr_tail(self) -> str:
        return "\n".join(self.stderr)

    # -- the protocol ----------------------------------------------------------------------

    def start(self) -> Capabilities:
        """Start the process and shake hands (CONF-PERSIST-2); ProtocolViolation or OSError
        when it cannot be started or does not answer as it should."""
        self.kill()
        self._spawn()
        if not self._send({"cmd": "start", "protocol": PROTOCOL_VERSION}):
            why = self._death()
            self.kill()
            raise ProtocolViolation(f"start: {why}")
        line = self._receive(self.start_timeout)
        if not line:
            why = "no answer in time" if line == b"" else self._death()
            self.kill()
            raise ProtocolViolation(f"start: {why}" + (f": {self.stderr[-1]}" if self.stderr else ""))
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.kill()
            raise ProtocolViolation(f"start: the answer is not JSON: {line[:60]!r}") from None
        if not isinstance(data, dict) or data.get("protocol") != PROTOCOL_VERSION:
            self.kill()
            raise ProtocolViolation(f"start: the answer must be an object with \"protocol\": {PROTOCOL_VERSION}")
        try:
            self.capabilities = capabilities_from(data, "start")
        except ProtocolViolation:
            self.kill()
            raise
        return self.capabilities

    def run(self, request: dict[str, Any], timeout: float) -> Reply:
        """Send one ``run`` request and wait for its answer (CONF-PERSIST-3, -4)."""
        if self.proc is None:
            try:
                self.start()
            except (ProtocolViolation, OSError) as exc:
                return Reply(crashed=f"could not restart the implementation: {exc}", stderr=self.stderr_tail())
        self.stderr.clear()
        started = time.monotonic()
        seq = request["seq"]
        if not self._send(request):
            why = self._death()
            self.kill()
            return Reply(crashed=why, seconds=time.monotonic() - started, stderr=self.stderr_tail())
        line = self._receive(timeout)
        seconds = time.monotonic() - started
        if line == b"":
            self.kill()
            return Reply(timed_out=True, seconds=seconds, stderr=self.stderr_tail())
        if line is None:
            why = self._death()
            self.kill()
            return Reply(crashed=why, seconds=seconds, stderr=self.stderr_tail())
        reply = self._parse(line, seq)
        reply.seconds, reply.stderr = seconds, self.stderr_tail()
        if reply.violation is not None:
            self.kill()       # the stream is out of step: start afresh
        return reply

    @staticmethod
    def _parse(line: bytes, seq: int) -> Reply:
        if not line.endswith(b"\n"):
            return Reply(violation=f"an answer longer than {LINE_LIMIT} bytes or not ended by a newline")
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return Reply(violation=f"the answer is not a JSON line: {line[:60]!r}")
        if not isinstance(data, dict):
            return Reply(violation=f"the answer is not a JSON object: {line[:60]!r}")
        if data.get("seq") != seq:
            return Reply(violation=f"the answer has \"seq\": {json.dumps(data.get('seq'))}, {seq} expected")
        if isinstance(data.get("skipped"), str):
            return Reply(skipped=data["skipped"])
        status, stdout = data.get("exit"), data.get("stdout")
        if type(status) is not int or not isinstance(stdout, str):
            return Reply(violation="the answer needs \"exit\" (an integer) and \"stdout\" (a string), "
                                   "or \"skipped\" (a string)")
        stderr = data.get("stderr", "")
        return Reply(outcome=Outcome(status, stdout.encode("utf-8"),
                                     stderr.encode("utf-8") if isinstance(stderr, str) else b"", 0.0))

    def stop(self, grace: float = 5.0) -> None:
        """Ask the process to stop (CONF-PERSIST-5), then make sure it has."""
        if self.proc is None:
            return
        self._send({"cmd": "stop"})
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace)
        self.kill()
