"""Who may talk to a registry served over streamable HTTP: bearer-token auth and Host/Origin checks.

* **Host/Origin checks** (the `mcp` SDK's DNS-rebinding protection) are always on: requests must name
  the bound host, a loopback name, or one of the `allowed_hosts` in their ``Host`` header, and a browser
  ``Origin`` must be one of those too. The SDK turns them on only for a loopback bind.
* **A bearer token** (``Authorization: Bearer <token>``), checked by the SDK's auth middleware with a
  constant-time comparison: a missing or wrong token gets HTTP 401.
* **A non-loopback bind needs a token**, unless the caller says ``allow_unauthenticated=True``: anyone on
  the network could otherwise call the tools.
"""

from __future__ import annotations as _annotations

import hmac
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._net import is_loopback

__all__ = ["TOKEN_ENV", "HttpSecurity", "http_security", "is_loopback"]

TOKEN_ENV = "AGENTKIT_MCP_TOKEN"
"""The environment variable ``agentkit mcp serve`` reads the bearer token from (safer than ``--auth-token``,
which other users of the machine can see in the process list)."""

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _wildcard(host: str) -> bool:
    return host.strip("[]") in ("0.0.0.0", "::", "")


def _host_entry(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@dataclass(frozen=True)
class HttpSecurity:
    """The checks a served endpoint applies, ready for ``Server.streamable_http_app(**kwargs)``."""

    allowed_hosts: tuple[str, ...]
    """The ``Host`` header values accepted (``name:*``: any port)."""
    allowed_origins: tuple[str, ...]
    """The ``Origin`` header values accepted."""
    token: str | None
    """The bearer token every request must carry, or None (no authentication)."""

    def app_kwargs(self, base_url: str) -> dict[str, Any]:
        """The transport-security and auth arguments of ``streamable_http_app``."""
        from mcp.server.auth.settings import AuthSettings
        from mcp.server.transport_security import TransportSecuritySettings
        from pydantic import AnyHttpUrl

        kwargs: dict[str, Any] = {
            "transport_security": TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=list(self.allowed_hosts),
                allowed_origins=list(self.allowed_origins),
            )
        }
        if self.token is not None:
            # issuer_url is required by the settings model; with no OAuth routes and no resource metadata
            # it is never published or used.
            kwargs["auth"] = AuthSettings(issuer_url=AnyHttpUrl(base_url), resource_server_url=None, required_scopes=[])
            kwargs["token_verifier"] = StaticTokenVerifier(self.token)
        return kwargs


class StaticTokenVerifier:
    """An `mcp` ``TokenVerifier`` accepting exactly one bearer token (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> Any:
        """An ``AccessToken`` for the configured token, None (HTTP 401) for any other."""
        from mcp.server.auth.provider import AccessToken

        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token=token, client_id="agentkit-bearer", scopes=[])
        return None


def http_security(
    host: str,
    *,
    auth_token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allow_unauthenticated: bool = False,
) -> HttpSecurity:
    """The checks for serving on `host`; refuses a non-loopback bind without a token.

    Args:
        host: the interface bound.
        auth_token: the bearer token clients must send (None or empty: no authentication).
        allowed_hosts: more ``Host`` names clients use to reach the server (a DNS name, a public IP),
            each with any port; the bound host and the loopback names are always allowed.
        allow_unauthenticated: serve a non-loopback bind without a token anyway.

    Raises:
        ValueError: `host` is not a loopback address, there is no token, and `allow_unauthenticated`
            is not set. The message says how to add a token.
    """
    token = auth_token or None
    if token is None and not is_loopback(host) and not allow_unauthenticated:
        raise ValueError(
            f"refusing to serve on {host!r} without authentication: anyone who can reach it could call the "
            f"tools. Set a bearer token (the {TOKEN_ENV} environment variable or --auth-token), or pass "
            "--allow-unauthenticated if the network is trusted."
        )
    names: list[str] = list(_LOOPBACK_NAMES)
    for name in (host, *allowed_hosts):
        if name and not _wildcard(name) and _host_entry(name) not in names:
            names.append(_host_entry(name))
    return HttpSecurity(
        allowed_hosts=tuple(entry for name in names for entry in (name, f"{name}:*")),
        allowed_origins=tuple(
            f"{scheme}://{name}{port}" for name in names for scheme in ("http", "https") for port in ("", ":*")
        ),
        token=token,
    )


def token_from_environment(explicit: str | None) -> str | None:
    """The token given on the command line, else the one in `TOKEN_ENV`, else None."""
    return explicit or os.environ.get(TOKEN_ENV) or None
