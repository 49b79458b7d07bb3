"""A local web page to talk to an agent: ``agentkit dev module:agent`` (or ``python -m agentkit.playground``).

The page shows the conversation, each tool call with its display-shaped input, output and errors,
approval requests with Approve / Deny buttons that resume the run, the step timeline with usage, and,
for the agent's tools, the exact request each vendor would be sent and its compatibility report. It
talks to the server over the Vercel AI SDK's UI message stream, through that SDK's own chat client
(bundled in the package: no build step, no network).

It binds to 127.0.0.1. Any other address is refused unless ``--allow-remote`` is given. Every request
needs a token (``--token``, ``$AGENTKIT_DEV_TOKEN``, or a random one printed in the URL it opens, as
Jupyter does): another user or program on the machine cannot drive the agent; ``--no-token`` (loopback
only) turns that off.
Needs the ``ui`` extra (``pip install 'agentkit-tools[ui]'``).
"""

from __future__ import annotations as _annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._net import is_loopback

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["MIN_TOKEN", "access_token", "create_app", "load_agent", "main", "serve"]

_TOKEN_ENV = "AGENTKIT_DEV_TOKEN"


class _UsageError(Exception):
    """A command-line mistake: one line on stderr, exit status 2."""


def create_app(agent: Agent[Any, Any], **options: Any) -> Any:
    """The playground's Starlette app for `agent` (see `agentkit.playground._app.create_app`)."""
    from ._app import create_app as build

    return build(agent, **options)


def load_agent(target: str) -> Agent:
    """The agent named by ``module:attribute`` or ``file.py:attribute``.

    A registry, tool or list of tools is wrapped in an agent on the ``"test"`` model (which calls every
    tool with generated arguments), so any toolset can be tried.
    """
    from .._loader import is_agent, load_object, load_registry
    from ..agent import Agent

    obj = load_object(target)
    return obj if is_agent(obj) else Agent(name="playground", model="test", tools=load_registry(target))


def _hosts(host: str, port: int) -> list[str]:
    if not is_loopback(host):
        return []  # reached by whatever name the network gives it: the token guards it instead
    return [f"{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]")]


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise _UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serve(
    agent: Agent[Any, Any], sock: socket.socket, *, token: str | None = None, model: str | None = None
) -> None:
    """Serve the playground for `agent` on an already bound, listening socket until cancelled.

    `model` replaces the agent's model for the server's runs (`Agent.override`).
    """
    import uvicorn

    host, port = sock.getsockname()[:2]
    app = create_app(agent, token=token, hosts=_hosts(host, port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    with agent.override(model=model) if model is not None else contextlib.nullcontext():
        await server.serve(sockets=[sock])


MIN_TOKEN = 16
"""The fewest characters a given token may have (a short one is guessed)."""


def access_token(host: str, *, allow_remote: bool, token: str | None = None, no_token: bool = False) -> str | None:
    """The token requests must carry, or ``None`` when none is needed.

    The given one (or ``$AGENTKIT_DEV_TOKEN``), else a random one, on any address: a loopback address is
    reachable by every user and program of the machine. ``no_token`` turns it off, on loopback only.

    Raises:
        _UsageError: `host` is not loopback and `allow_remote` is not set; a given token is blank, short or
            has spaces; ``no_token`` for a non-loopback `host`.
    """
    token = token or os.environ.get(_TOKEN_ENV) or None
    if not is_loopback(host) and not allow_remote:
        raise _UsageError(
            f"--host {host} is not a loopback address: anyone who can reach it could run the agent's tools. "
            "Pass --allow-remote to do it anyway (a token is then required)"
        )
    if no_token:
        if not is_loopback(host):
            raise _UsageError("--no-token works on a loopback address only: a remote playground needs its token")
        return None
    if token is not None and (len(token) < MIN_TOKEN or any(c.isspace() or not c.isprintable() for c in token)):
        raise _UsageError(
            f"the token must have at least {MIN_TOKEN} characters and no spaces (it guards the agent's tools); "
            "leave it out for a random one"
        )
    return token or secrets.token_urlsafe(24)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentkit dev",
        description="A local web page to talk to an agent and inspect its tools.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  agentkit dev myapp/agent.py:agent\n  agentkit dev myapp.tools:registry -m test --port 0",
    )
    parser.add_argument("target", help="module:attr or file.py:attr naming an Agent (or a Registry / tools)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    parser.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback --host (every request then needs the token)"
    )
    parser.add_argument("--token", default=None, help=f"the access token (default: ${_TOKEN_ENV}, else random)")
    parser.add_argument(
        "--no-token", action="store_true", help="no token on a loopback address (anyone on this machine may use it)"
    )
    parser.add_argument("--model", "-m", default=None, help="use this model instead of the agent's ('test', ...)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``agentkit dev TARGET [--host H] [--port P] [--allow-remote] [--token T | --no-token] [--model M]``."""
    try:
        # checked here so the error is one line
        import starlette  # noqa: F401  # pyright: ignore[reportUnusedImport]
        import uvicorn  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        print("agentkit dev: error: the playground needs: pip install 'agentkit-tools[ui]'", file=sys.stderr)
        return 1
    args = _parser().parse_args(argv)
    try:
        token = access_token(args.host, allow_remote=args.allow_remote, token=args.token, no_token=args.no_token)
        agent = _load(args.target, args.model)
        sock = _bind(args.host, args.port)
    except _UsageError as exc:
        print(f"agentkit dev: error: {exc}", file=sys.stderr)
        return 2
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    query = f"?token={token}" if token else ""
    print(f"agentkit dev: {agent.name!r} at http://{shown}:{port}/{query}  (Ctrl+C to stop)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(agent, sock, token=token, model=args.model))
    return 0


def _load(target: str, model: str | None) -> Agent:
    from ..exceptions import AgentkitError, CLIError  # the error tree, not the CLI: the playground is beside it

    try:
        agent = load_agent(target)
        if model is not None:
            with agent.override(model=model):  # a bad model name fails here, before anything listens
                pass
        return agent
    except CLIError as exc:
        raise _UsageError(exc.message) from None
    except AgentkitError as exc:
        raise _UsageError((str(exc).splitlines() or [""])[0]) from None
