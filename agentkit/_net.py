"""Small network helpers shared by the servers agentkit starts (MCP over HTTP, the playground)."""

from __future__ import annotations as _annotations

import ipaddress

__all__ = ["is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps a server on this machine (``127.0.0.0/8``, ``::1``, ``localhost``).

    A host name other than ``localhost`` is not: it may resolve to any interface.
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
