"""Who may talk to a registry served over streamable HTTP: bearer-token auth and Host/Origin checks.

* **Host/Origin checks** (the `mcp` SDK's DNS-rebinding protection) are always on: requests must name
  the bound host, a loopback name, or one of the `allowed_hosts` in their ``Host`` header, and a browser
  ``Origin`` must be one of those too. The SDK turns them on only for a loopback bind.
* **A bearer token** (``Authorization: Bearer <token>``), checked by the SDK's auth middleware with a
  constant-time comparison: a missing or wrong token gets HTTP 401.
* **A non-loopback bind needs a token**, unless the caller says ``allow_unauthenticated=True``: anyone on
  the network could otherwise call the tools.
* **A token must be worth the name** (`check_token`): at least `MIN_TOKEN_LENGTH` characters, none of them
  whitespace or control characters. A blank or one-character token would open the server to anyone who
  guesses it, so it is refused for every bind, loopback included.
"""

from __future__ import annotations as _annotations

import hmac
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._net import is_loopback

__all__ = ["MIN_TOKEN_LENGTH", "TOKEN_ENV", "HttpSecurity", "check_token", "http_security", "is_loopback"]

TOKEN_ENV = "AGENTKIT_MCP_TOKEN"
"""The environment variable ``agentkit mcp serve`` reads the bearer token from (safer than ``--auth-token``,
which other users of the machine can see in the process list)."""

MIN_TOKEN_LENGTH = 16
"""The shortest bearer token `serve` accepts (16 random URL-safe characters are about 96 bits)."""

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_TOKEN_HINT = "generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"


def check_token(token: str) -> str:
    """`token` if it is usable as a bearer token, else `ValueError` saying why (the token is never echoed).

    The rule: at least `MIN_TOKEN_LENGTH` characters, no whitespace and no control characters (HTTP
    strips surrounding blanks, so ``" secret"`` would not be the token clients send).
    """
    if not token.strip():
        raise ValueError(f"refusing a blank bearer token: {_TOKEN_HINT}")
    if any(c.isspace() or not c.isprintable() for c in token):
        raise ValueError(f"refusing a bearer token with whitespace or control characters: {_TOKEN_HINT}")
    if len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(
            f"refusing a bearer token of {len(token)} characters: use at least {MIN_TOKEN_LENGTH}; {_TOKEN_HINT}"
        )
    return token


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
        auth_token: the bearer token clients must send (None: no authentication); see `check_token`.
        allowed_hosts: more ``Host`` names clients use to reach the server (a DNS name, a public IP),
            each with any port; the bound host and the loopback names are always allowed.
        allow_unauthenticated: serve a non-loopback bind without a token anyway.

    Raises:
        ValueError: `host` is not a loopback address, there is no token, and `allow_unauthenticated`
            is not set; or the token breaks `check_token`'s rule. The message says how to fix it.
    """
    token = None if auth_token is None else check_token(auth_token)
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
    """The token given on the command line, else the one in `TOKEN_ENV`, else None.

    A given token is returned as it is, blank or not: `check_token` refuses a bad one instead of
    silently serving without authentication.
    """
    return explicit if explicit is not None else os.environ.get(TOKEN_ENV)
