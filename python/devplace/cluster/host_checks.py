"""Can a task listen on this host? Its address must be one of the host's, its port free.

A TF server listens on its port on EVERY interface of its host (gRPC binds `0.0.0.0`), whatever
host name the spec gives; the spec's address is how the other tasks reach it. So an address
that is not this host's is a mistake (the others would look for the task elsewhere), and the
server is reachable on each of the host's addresses: `public_addresses` lists those that are
neither private nor loopback, for the warning that the server has no authentication.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Iterable

import psutil

from devplace.core.errors import Error

__all__ = ["HostCheckError", "check_address", "check_port", "host_addresses", "public_addresses"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class HostCheckError(Error, OSError):
    """This task cannot listen here; the message says why and how to fix it."""


def split_address(address: str) -> tuple[str, int]:
    """`("10.0.0.2", 2222)` from `"10.0.0.2:2222"` (or `"[::1]:2222"`)."""
    host, _, port = address.removeprefix("grpc://").rpartition(":")
    return host.strip("[]"), int(port)


def host_addresses() -> set[Address]:
    """Every IP address of this host's network interfaces (in this network namespace)."""
    found: set[Address] = set()
    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            if entry.family in (socket.AF_INET, socket.AF_INET6):
                found.add(ipaddress.ip_address(entry.address.split("%")[0]))
    return found


def check_address(address: str) -> None:
    """Raise `HostCheckError` unless the host in `address` names this host."""
    host, _ = split_address(address)
    try:
        resolved = {
            ipaddress.ip_address(str(info[4][0]).split("%")[0])
            for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        }
    except socket.gaierror as err:
        raise HostCheckError(
            f"the task's address {address}: host {host!r} cannot be resolved here "
            f"({err.strerror}). Hint: write an IP address in the spec, or add {host!r} to "
            "/etc/hosts or DNS"
        ) from None
    mine = host_addresses()
    if any(ip.is_loopback or ip in mine for ip in resolved):
        return
    listed = ", ".join(sorted(map(str, mine))) or "none"
    raise HostCheckError(
        f"the task's address {address} is not this host's: {host} is "
        f"{', '.join(sorted(map(str, resolved)))}, and this host has {listed}. Hint: start this "
        "task on the host with that address, or correct the spec to this host's address"
    )


def check_port(port: int) -> None:
    """Raise `HostCheckError` if `port` cannot be listened on (in use, or privileged)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC does
        try:
            sock.bind(("0.0.0.0", port))
            return
        except OSError as err:
            problem = err
    if problem.errno == errno.EADDRINUSE:
        raise HostCheckError(
            f"port {port} is already in use on this host{_holder(port)}. Hint: stop that "
            "process (an earlier server of this task?), or give this task another port in "
            "the spec"
        )
    raise HostCheckError(
        f"cannot listen on port {port}: {problem.strerror}. Hint: ports below 1024 need root; "
        "give this task a port from 1024 to 65535 in the spec"
    )


def _holder(port: int) -> str:
    """` (by pid 123, python3)`, when psutil may say which process listens on `port`."""
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                if conn.pid is None:
                    return ""
                return f" (by pid {conn.pid}, {psutil.Process(conn.pid).name()})"
    except psutil.Error:
        pass
    return ""


def public_addresses(addresses: Iterable[Address] | None = None) -> list[str]:
    """The addresses (default: this host's) that are neither private nor loopback (nor
    link-local): reachable from beyond a private network."""
    return sorted(
        str(ip)
        for ip in (host_addresses() if addresses is None else addresses)
        if not (ip.is_private or ip.is_loopback or ip.is_link_local)
    )
