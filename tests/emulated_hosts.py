"""Emulated hosts for cluster tests and benchmarks: network namespaces on a private bridge.

Each host is a network namespace with one address on a bridge; the bridge lives in a namespace
of its own, so the machine's firewall never sees the hosts' traffic and nothing leaves the
machine, and the calling process is joined to it as the first address. Names and the subnet
(10.213.N.0/24, N unused here) are unique to the run. Needs root and iproute2.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

__all__ = ["Hosts", "ip", "unavailable_reason"]


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `ip ARGS`; raises CalledProcessError (with ip's message) on failure if `check`."""
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=check)


def unavailable_reason() -> str | None:
    """Why emulated hosts cannot be made here, or None."""
    if sys.platform != "linux":
        return f"network namespaces need Linux, this is {sys.platform}"
    if os.geteuid() != 0:
        return "emulated hosts need root (ip netns add)"
    if shutil.which("ip") is None:
        return "emulated hosts need iproute2 (the ip program)"
    return None


class Hosts:
    """Network namespaces `h1`, `h2`, ... on a bridge in namespace `lan`; this process joined
    to the bridge as 10.213.N.1. Every name carries this run's tag."""

    def __init__(self, count: int):
        self.tag = f"dp{os.getpid() % 0xFFFFF:x}"
        self.lan = f"{self.tag}lan"
        self.names = [f"{self.tag}h{i}" for i in range(1, count + 1)]
        used = ip("-4", "addr").stdout
        self.net = next(n for n in range(1, 255) if f"10.213.{n}." not in used)
        self.ips = [f"10.213.{self.net}.{i + 2}" for i in range(count)]
        self.chief_ip = f"10.213.{self.net}.1"
        self.procs = []

    def create(self) -> None:
        """Make the namespaces, the bridge and the links (CalledProcessError if impossible)."""
        lan, tag = self.lan, self.tag
        ip("netns", "add", lan)
        ip("-n", lan, "link", "add", "br0", "type", "bridge")
        ip("-n", lan, "link", "set", "br0", "up")
        links = [(None, f"{tag}c", self.chief_ip)]
        links += [
            (ns, f"{tag}v{i}", address)
            for i, (ns, address) in enumerate(zip(self.names, self.ips, strict=True))
        ]
        for ns, end, address in links:
            if ns is not None:
                ip("netns", "add", ns)
                ip("-n", ns, "link", "set", "lo", "up")
            ip("link", "add", end, "type", "veth", "peer", "name", f"{end}p")
            ip("link", "set", f"{end}p", "netns", lan)
            ip("-n", lan, "link", "set", f"{end}p", "master", "br0", "up")
            if ns is not None:
                ip("link", "set", end, "netns", ns)
            where = ["-n", ns] if ns is not None else []
            ip(*where, "addr", "add", f"{address}/24", "dev", end)
            ip(*where, "link", "set", end, "up")

    def remove(self) -> None:
        """Kill what runs in this run's namespaces, then remove them and the links. Idempotent."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        for ns in [*self.names, self.lan]:
            found = ip("netns", "pids", ns, check=False).stdout.split()
            for pid in found:  # only processes inside this run's own namespaces
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            ip("netns", "del", ns, check=False)
        ip("link", "del", f"{self.tag}c", check=False)

    def serve(self, host, args, out, env=None):
        """Start `devplace cluster serve ARGS` in host `host` (0-based); output to `out`."""
        command = ["ip", "netns", "exec", self.names[host], sys.executable, "-m", "devplace"]
        with open(out, "w") as sink:
            proc = subprocess.Popen(
                [*command, "cluster", "serve", *args],
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, **(env or {})),
                start_new_session=True,
            )
        self.procs.append(proc)
        return proc
