"""`Cassette`: record every vendor request of a block into a file, or replay them from it with nothing sent."""

from __future__ import annotations as _annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .._jsonish import is_array, is_object
from ._format import (
    CassetteMiss,
    Secrets,
    body_fields,
    chunk_fields,
    differences,
    request_key,
    show,
    stored_chunks,
)

__all__ = ["FORMAT", "Cassette", "CassetteMode", "active", "default_mode", "replaying"]

FORMAT = "agentkit-cassette/1"

CassetteMode = Literal["once", "replay", "record"]
"""``"once"``: replay the file if it exists, else record it; ``"replay"``: the file must hold every request
(CI); ``"record"``: send every request and write the file anew."""

_STACK: list[Cassette] = []  # the cassettes entered, innermost last


def active() -> Cassette | None:
    """The cassette every SDK request of this process goes through now (the innermost entered), or None."""
    return _STACK[-1] if _STACK else None


def replaying() -> bool:
    """Whether the active cassette answers requests from its file (so none is sent)."""
    return bool(_STACK) and not _STACK[-1].recording


_MODES: tuple[CassetteMode, ...] = ("once", "replay", "record")


def default_mode() -> CassetteMode:
    """``AGENTKIT_CASSETTES`` if set, else ``"replay"`` under CI (``CI`` set), else ``"once"``."""
    chosen = os.environ.get("AGENTKIT_CASSETTES", "").strip().lower()
    if chosen:
        for mode in _MODES:
            if chosen == mode:
                return mode
        raise ValueError(f"AGENTKIT_CASSETTES={chosen!r}: expected one of {', '.join(_MODES)}")
    ci = os.environ.get("CI", "").strip().lower()
    return "replay" if ci not in ("", "0", "false", "no") else "once"


class Cassette:
    """Record the vendor requests of a ``with`` block into a readable JSON file, or replay them from it.

    ```python
    from agentkit.testing import Cassette

    with Cassette("tests/cassettes/refund.json"):        # records on the first run, replays afterwards
        result = await agent.generate("Refund order 42")
    ```

    Every request the official SDKs send (httpx for OpenAI, Anthropic, Gemini, Mistral, Cohere and Ollama;
    botocore for Bedrock) is caught at the SDK's transport, whatever client sent it. In replay nothing
    leaves the process: each request is answered from the recording whose method, path and body match
    (JSON compared as data, tools included); a streamed answer replays chunk by chunk. A request with no
    recording raises `CassetteMiss` showing how it differs from the nearest one (``tools[0].description``),
    and the block fails with it even where the code inside caught it (an SDK retrying, a tool making it a
    result).

    Args:
        path: the cassette file (JSON; its folder is created when it is written).
        mode: ``"once"``, ``"replay"`` or ``"record"`` (see `CassetteMode`); default `default_mode()`.
        secrets: values that must never be written (besides credential headers, which always are
            redacted, and the vendors' key variables of the environment): replaced by ``<secret>``.

    The file is written when the block ends without an exception (in record mode, or in once mode when it
    did not exist). A replaying cassette lets model requests through even where they are blocked
    (`allow_model_requests(False)`): it answers them, nothing is sent. While the block runs, the cassette
    covers every request of the process (every task and thread, a Temporal worker's activities too);
    cassettes nest (the innermost answers).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, mode: CassetteMode | None = None, secrets: Iterable[str] = ()
    ) -> None:
        chosen = mode if mode is not None else default_mode()
        if chosen not in _MODES:
            raise ValueError(f"Cassette(mode={chosen!r}): expected one of {', '.join(_MODES)}")
        self.path = Path(path)
        self.mode: CassetteMode = chosen
        """The mode as asked; `recording` says what the block does."""
        self.secrets = Secrets(secrets)
        self.interactions: list[dict[str, Any]] = []
        """The recorded exchanges (read from the file when replaying, collected when recording)."""
        self.recording = chosen == "record" or (chosen == "once" and not self.path.exists())
        """Whether this block sends requests and records them (else it replays the file)."""
        self.played = 0
        """How many requests were answered from the file."""
        self._used: set[int] = set()
        self._lock = threading.Lock()
        self._entered = False
        self._misses: list[str] = []

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, mode={self.mode!r}, recording={self.recording})"

    # ---- the block ---------------------------------------------------------------------------------

    def __enter__(self) -> Cassette:
        from . import _botocore, _httpx

        if self._entered:
            raise RuntimeError(f"{self!r} is already in use: enter a cassette once at a time")
        if not self.recording:
            self.interactions = _read(self.path)
            self._used.clear()
        _httpx.install()
        _botocore.install()
        self._entered = True
        _STACK.append(self)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._entered:
            self._entered = False
            _STACK.remove(self)
        if self._misses and not isinstance(exc, CassetteMiss):
            # the SDK may have wrapped the miss in its own connection error (and retried): say what happened
            raise CassetteMiss(self._misses[0]) from exc
        if self.recording and exc_type is None:
            self.save()

    async def __aenter__(self) -> Cassette:
        return self.__enter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def save(self) -> None:
        """Write the recorded interactions to `path` (readable JSON, secrets removed)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {"format": FORMAT, "interactions": self.interactions}
        self.path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    # ---- what the transports call ------------------------------------------------------------------------

    def request_fields(
        self, method: str, url: str, headers: Iterable[tuple[str, str]], body: bytes, content_type: str
    ) -> dict[str, Any]:
        """A request as stored (and as matched)."""
        fields: dict[str, Any] = {
            "method": method.upper(),
            "url": self.secrets.url(url),
            "headers": self.secrets.headers(headers),
        }
        fields.update(body_fields(body, content_type, self.secrets))
        return fields

    def record(
        self,
        request: dict[str, Any],
        status: int,
        headers: Iterable[tuple[str, str]],
        chunks: Sequence[bytes],
        content_type: str,
    ) -> None:
        """Keep one exchange (a response read to its end, in the chunks the SDK's transport gave)."""
        response: dict[str, Any] = {"status": status, "headers": self.secrets.headers(headers, response=True)}
        response.update(chunk_fields(chunks, content_type, self.secrets))
        with self._lock:
            self.interactions.append({"request": request, "response": response})

    def answer(self, request: dict[str, Any]) -> tuple[int, dict[str, str], list[bytes]]:
        """The recorded response to `request`: status, headers and body chunks. Raises `CassetteMiss`."""
        key = request_key(request)
        with self._lock:
            matches = [i for i, item in enumerate(self.interactions) if request_key(item["request"]) == key]
            if not matches:
                message = self._miss(request)
                self._misses.append(message)
                raise CassetteMiss(message)
            fresh = [i for i in matches if i not in self._used]
            index = fresh[0] if fresh else matches[-1]  # the same request again: the same answer
            self._used.add(index)
            self.played += 1
        response = self.interactions[index]["response"]
        return int(response["status"]), dict(response.get("headers", {})), stored_chunks(response)

    def _miss(self, request: dict[str, Any]) -> str:
        method, target, _ = request_key(request)
        where = f"{method} {target}"
        if not self.interactions:
            return f"no recording in {self.path} answers {where}: the cassette is empty. {_FIX}"
        best: tuple[int, int, list[tuple[str, Any, Any]]] | None = None
        for index, item in enumerate(self.interactions):
            recorded = item["request"]
            other = request_key(recorded)
            penalty = (other[0] != method) + (other[1] != target)
            found = differences(_body(recorded), _body(request))
            if best is None or (penalty, len(found)) < (best[0], len(best[2])):
                best = (penalty, index, found)
        assert best is not None
        penalty, index, found = best
        nearest = self.interactions[index]["request"]
        lines = [f"no recording in {self.path} matches {where}; the nearest is recording {index} "]
        if penalty:
            lines[0] += f"({request_key(nearest)[0]} {request_key(nearest)[1]}), which differs"
        else:
            lines[0] += "(same endpoint), whose body differs"
        lines[0] += " at:" if found else " in its raw body."
        for path, was, now in found[:12]:
            lines.append(f"  {path}: recorded {show(was)}, sent {show(now)}")
        if len(found) > 12:
            lines.append(f"  ... and {len(found) - 12} more")
        lines.append(_FIX)
        return "\n".join(lines)


_FIX = 'Record it again (Cassette(..., mode="record"), or delete the file) if the change is meant.'


def _body(request: Mapping[str, Any]) -> Any:
    return request.get("json", request.get("text", request.get("base64")))


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise CassetteMiss(
            f"cassette {path} does not exist and the mode is replay: record it first (mode='once' or 'record', "
            "e.g. AGENTKIT_CASSETTES=once, outside CI)"
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CassetteMiss(f"cassette {path} is not valid JSON: {exc}") from None
    if not is_object(document) or document.get("format") != FORMAT:
        raise CassetteMiss(f"{path} is not an agentkit cassette (expected format {FORMAT!r})")
    interactions = document.get("interactions")
    if not is_array(interactions) or not all(is_object(item) and "request" in item for item in interactions):
        raise CassetteMiss(f"cassette {path} has no list of interactions")
    return [dict(item) for item in interactions]
