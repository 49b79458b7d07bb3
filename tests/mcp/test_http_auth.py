"""`mcp serve --transport http`: bearer-token auth, Host/Origin checks, no open non-loopback bind.

Real HTTP requests on 127.0.0.1 against the served app (uvicorn + the `mcp` SDK's streamable HTTP).
"""

from __future__ import annotations

import os
import subprocess
import sys

import httpx2
import pytest

from agentkit.mcp import MCPConnectionError, MCPServer, serving_http
from agentkit.mcp._http_auth import TOKEN_ENV, http_security
from tests.mcp.fixtures.helpers import FIXTURE_TARGET, ROOT, start_http_server, stop
from tests.mcp.fixtures.registry import tools

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
TOKEN = "s3cret-s3cret-s3cret"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def post(url: str, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as client:
        return await client.post(url, json=INITIALIZE, headers={**ACCEPT, **headers})


async def test_a_token_is_required_when_set() -> None:
    async with serving_http(tools, auth_token=TOKEN) as url:
        missing = await post(url)
        wrong = await post(url, Authorization="Bearer nope")
        right = await post(url, Authorization=f"Bearer {TOKEN}")
        assert (missing.status_code, wrong.status_code) == (401, 401)
        assert "bearer" in missing.headers.get("www-authenticate", "").lower()
        assert right.status_code == 200, right.text
        async with MCPServer.http(url, headers={"Authorization": f"Bearer {TOKEN}"}) as remote:
            assert set(remote.registry) == set(tools)
        with pytest.raises(MCPConnectionError):
            async with MCPServer.http(url, connect_timeout=10):
                pass


async def test_host_and_origin_are_checked_for_the_hosts_given() -> None:
    async with serving_http(tools, allowed_hosts=["tools.example"]) as url:
        port = url.split(":")[2].split("/")[0]
        assert (await post(url, Host=f"tools.example:{port}")).status_code == 200
        assert (await post(url, Host=f"evil.example:{port}")).status_code == 421
        assert (await post(url, Origin="http://evil.example")).status_code == 403
        assert (await post(url, Origin=f"http://tools.example:{port}")).status_code == 200


def test_every_bind_keeps_host_checks_and_a_wildcard_bind_only_trusts_names_given() -> None:
    public = http_security("10.1.2.3", auth_token=TOKEN)
    assert "10.1.2.3:*" in public.allowed_hosts and "localhost:*" in public.allowed_hosts
    assert "http://10.1.2.3:*" in public.allowed_origins
    wildcard = http_security("0.0.0.0", auth_token=TOKEN, allowed_hosts=["tools.example"])
    assert "0.0.0.0:*" not in wildcard.allowed_hosts and "tools.example:*" in wildcard.allowed_hosts
    assert http_security("::1").allowed_hosts == http_security("127.0.0.1").allowed_hosts  # loopback: no token


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "tools.example", "::"])
def test_a_non_loopback_bind_without_a_token_is_refused(host: str) -> None:
    with pytest.raises(ValueError, match=f"refusing to serve on '{host}' without authentication.*{TOKEN_ENV}"):
        http_security(host)
    assert http_security(host, allow_unauthenticated=True).token is None


def test_the_command_refuses_before_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: ``--host 0.0.0.0`` served the tools to the network, unauthenticated and unchecked."""
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    done = subprocess.run(
        [sys.executable, "-m", "agentkit", "mcp", "serve", FIXTURE_TARGET, "--transport", "http"]
        + ["--host", "0.0.0.0", "--port", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != TOKEN_ENV},
    )
    assert done.returncode == 2
    assert "refusing to serve on '0.0.0.0' without authentication" in done.stderr
    assert "--allow-unauthenticated" in done.stderr and done.stderr.count("\n") == 1


async def test_the_command_reads_the_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "from-the-environment-0123")
    process, url = await start_http_server(FIXTURE_TARGET)
    try:
        assert (await post(url)).status_code == 401
        assert (await post(url, Authorization="Bearer from-the-environment-0123")).status_code == 200
    finally:
        stop(process)


BAD_TOKENS = ["", " ", "x", "0123456789abcde", "0123456789 abcdef", "0123456789abcdef\n", "\t" * 20]


@pytest.mark.parametrize("token", BAD_TOKENS)
@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_blank_short_and_spaced_tokens_are_refused_on_every_bind(token: str, host: str) -> None:
    """Regression (issue 17 §4.7): ``--auth-token ' '`` (or any 1-character token) let the server bind 0.0.0.0."""
    with pytest.raises(ValueError, match="refusing a (blank )?bearer token") as caught:
        http_security(host, auth_token=token)
    assert "secrets.token_urlsafe" in str(caught.value)
    assert token.strip() == "" or token.strip() not in str(caught.value)  # the token is never echoed
    assert http_security(host, auth_token="0123456789abcdef").token == "0123456789abcdef"  # 16: the shortest


@pytest.mark.parametrize(("flag", "env"), [(["--auth-token", " "], None), ([], " "), (["--auth-token", "x"], None)])
def test_the_command_refuses_a_blank_or_short_token_before_binding(flag: list[str], env: str | None) -> None:
    """Regression (issue 17 §4.7): the blank token passed the non-loopback check, and the server bound 0.0.0.0."""
    environment = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    if env is not None:
        environment[TOKEN_ENV] = env
    done = subprocess.run(
        [sys.executable, "-m", "agentkit", "mcp", "serve", FIXTURE_TARGET, "--transport", "http"]
        + ["--host", "0.0.0.0", "--port", "0", *flag],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert done.returncode == 2, done.stderr
    assert "refusing a" in done.stderr and "bearer token" in done.stderr
