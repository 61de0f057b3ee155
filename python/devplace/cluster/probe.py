"""Is a task's gRPC server alive and answering? An HTTP/2 handshake with a deadline.

A live gRPC server answers the HTTP/2 connection preface with its SETTINGS frame at once. A
process that is gone refuses the connection (or, behind the launcher's forwarder, the
connection is closed); a stopped or hung one accepts (the kernel does that) but never answers.
`wait_ready` probes every task of a spec until all answer. Nothing here loads TensorFlow.
"""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from devplace.cluster import spec as specs
from devplace.core.errors import Error

__all__ = [
    "ALIVE",
    "GONE",
    "SILENT",
    "ClusterNotReadyError",
    "Probe",
    "probe",
    "probe_all",
    "ready_words",
    "wait_ready",
]

ALIVE = "alive"
GONE = "gone"
SILENT = "silent"

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_SETTINGS = 4


@dataclass(frozen=True)
class Probe:
    """What a probe of one address found: `ALIVE`, `GONE` or `SILENT`, with details."""

    address: str
    state: str
    detail: str
    seconds: float


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.removeprefix("grpc://").rpartition(":")
    return host.strip("[]"), int(port)


def probe(address: str, timeout: float = 1.0) -> Probe:
    """Probe `host:port` (or `grpc://host:port`); never takes much longer than `timeout`."""
    start = time.monotonic()

    def result(state: str, detail: str) -> Probe:
        return Probe(address, state, detail, time.monotonic() - start)

    try:
        sock = socket.create_connection(_host_port(address), timeout=timeout)
    except OSError as err:
        return result(GONE, f"connection failed: {err.strerror or err}")
    with sock:
        try:
            sock.settimeout(max(0.01, timeout - (time.monotonic() - start)))
            sock.sendall(_PREFACE)
            header = b""
            while len(header) < 9:
                chunk = sock.recv(9 - len(header))
                if not chunk:
                    return result(GONE, "connection closed without an answer")
                header += chunk
        except TimeoutError:
            return result(SILENT, f"no answer within {timeout:g} s (stopped or hung)")
        except OSError as err:
            return result(GONE, f"connection lost: {err.strerror or err}")
    if header[3] != _SETTINGS:
        return result(GONE, "it answered, but not as an HTTP/2 (gRPC) server")
    return result(ALIVE, "answered the HTTP/2 handshake")


def probe_all(addresses: list[str], timeout: float = 1.0) -> list[Probe]:
    """Probe several addresses at once; takes about `timeout` at most."""
    if not addresses:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(addresses))) as pool:
        return list(pool.map(lambda a: probe(a, timeout), addresses))


class ClusterNotReadyError(Error, TimeoutError):
    """Tasks of a cluster did not answer in time; `tasks` names them (`/job:worker/task:1`)."""

    def __init__(self, message: str, tasks: list[str]):
        super().__init__(message)
        self.tasks = tasks


def ready_words(count: int) -> str:
    """What a cluster of `count` tasks that all answer says: `all 3 tasks answer`, and for a
    cluster of one, `its one task answers`."""
    return "its one task answers" if count == 1 else f"all {count} tasks answer"


def wait_ready(spec: Any, timeout: float = 60.0, probe_timeout: float = 1.0) -> float:
    """Return once every task of `spec` answers (seconds waited); else raise after `timeout`.

    spec: any form `devplace.cluster.as_spec` takes. Each round probes all tasks at once (at
    most `probe_timeout` s). `ClusterNotReadyError` names each task that does not answer,
    its address and what the last probe found.
    """
    start = time.monotonic()
    named = [
        (specs.task_name(job, task), address)
        for job, by_index in specs.task_table(spec).items()
        for task, address in sorted(by_index.items())
    ]
    while True:
        left = timeout - (time.monotonic() - start)
        found = probe_all([address for _, address in named], max(0.05, min(probe_timeout, left)))
        late = [(name, p) for (name, _), p in zip(named, found, strict=True) if p.state != ALIVE]
        if not late:
            return time.monotonic() - start
        if time.monotonic() - start + 0.2 > timeout:
            break
        time.sleep(0.2)
    said = "; ".join(f"{name} at {p.address} is {p.state} ({p.detail})" for name, p in late)
    raise ClusterNotReadyError(
        f"cluster not ready after {timeout:g} s: {len(late)} of {len(named)} tasks do not "
        f"answer: {said}. Hint: start each with `devplace cluster serve` on its host (the "
        "address in the spec must be that host's), check that no firewall blocks the port, or "
        "wait longer (a larger timeout)",
        [name for name, _ in late],
    )
