"""What the command line shows only on a terminal (a progress line), and output to a reader that left.

Progress goes to stderr, and only when stderr is a terminal (and ``TERM`` is not ``dumb``): piped or
redirected output, CI logs and ``--json`` readers get none of it, so stdout and stderr hold exactly what
docs/cli.md says.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import os
import shutil
import sys
import time
from collections.abc import AsyncGenerator
from typing import TextIO

__all__ = ["SIGPIPE_STATUS", "Progress", "stdout_gone"]

SIGPIPE_STATUS = 141
"""The exit status when stdout's reader went away (``| head -1``): 128 + SIGPIPE, as ``yes | head -1`` gives."""


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


class Progress:
    """One status line on stderr, redrawn in place with a spinner and the time so far; only on a terminal.

    Off a terminal every method does nothing. `update` sets the text; `ticking` redraws it while an
    async block runs (a model request can take a while with nothing else to show); `close` clears it.
    """

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        encoding = (getattr(self.stream, "encoding", None) or "ascii").lower().replace("-", "")
        self.frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" if encoding in ("utf8", "utf_8") else "|/-\\"
        self.text = ""
        self.started = time.monotonic()
        self.frame = 0
        self.shown = False

    def update(self, text: str) -> None:
        """Show `text` (e.g. ``step 2: calling weather``)."""
        self.text = text
        self.draw()

    def draw(self) -> None:
        """Redraw the line (the spinner moves on)."""
        if not self.enabled:
            return
        self.frame = (self.frame + 1) % len(self.frames)
        line = f"{self.frames[self.frame]} {self.text}  {time.monotonic() - self.started:.1f}s"
        width = shutil.get_terminal_size((80, 24)).columns - 1
        self.stream.write("\r\x1b[2K" + line[:width])
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        """Clear the line, leaving the terminal as it was."""
        if self.enabled and self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.shown = False

    @contextlib.asynccontextmanager
    async def ticking(self, every: float = 0.1) -> AsyncGenerator[Progress, None]:
        """Redraw every `every` seconds while the block runs; clear the line when it ends."""
        if not self.enabled:
            yield self
            return

        async def tick() -> None:
            while True:
                self.draw()
                await asyncio.sleep(every)

        task = asyncio.get_running_loop().create_task(tick())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.close()


def stdout_gone() -> int:
    """After `BrokenPipeError` on stdout: point stdout at /dev/null (so the exit flush is quiet); the status.

    The reader of our output left (``agentkit inspect ... | head -1``): not an error of ours, and nothing
    more can be said to it.
    """
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return SIGPIPE_STATUS
