"""What a cassette file holds, and how a request is matched against it.

One interaction is one HTTP exchange as the vendor's SDK put it on its transport:

```json
{"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
             "headers": {"authorization": "<redacted>", ...}, "json": {"model": "gpt-4.1", ...}},
 "response": {"status": 200, "headers": {...}, "json": {...}}}
```

A body is stored as ``json`` when it is JSON (readable, and compared as data), else as ``text`` or
``base64``; a streamed response (server-sent events, AWS event streams) as the list of its ``chunks``
(text) or ``chunks_base64``, the pieces the SDK read, replayed one by one.

A request matches a recording with the same method, path and query, and the same body: JSON bodies are
compared as data (key order does not matter, everything else does: the tools' definitions too).
Headers are never compared (they carry dates, retry counts and SDK versions). A request that matches
nothing is a `CassetteMiss` showing how it differs from the nearest recording, path by path
(``tools[0].description``).

Secrets never reach the file: headers whose names carry a credential (``authorization``, ``x-api-key``,
anything with key, token, secret, signature or cookie in its name) and such query parameters are written
as ``<redacted>``; the values of the configured secrets and of the vendors' key variables in the
environment are replaced wherever they appear (bodies included) by ``<secret>``, in what is written and
in what is compared.
"""

from __future__ import annotations as _annotations

import base64
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from .._jsonish import is_array, is_object
from ..exceptions import CassetteMiss

__all__ = ["DROPPED_HEADERS", "CassetteMiss", "Secrets", "body_fields", "chunk_fields", "differences", "request_key"]

REDACTED = "<redacted>"
SECRET = "<secret>"

_CREDENTIAL = re.compile(r"auth|key|token|secret|signature|credential|cookie|password", re.IGNORECASE)
DROPPED_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding", "connection"})
"""Response headers that describe the wire, not the body as stored (decoded, whole)."""
_KEY_VARIABLES = re.compile(r"(API_KEY|_TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_MIN_SECRET = 6  # shorter values would replace ordinary words


class Secrets:
    """The values that must never reach a cassette: configured ones and the key variables of the environment."""

    def __init__(self, configured: Iterable[str] = ()) -> None:
        values = {str(v) for v in configured if v}
        from .._vendors import VENDORS

        names = {name for vendor in VENDORS.values() for name in vendor.env_vars}
        names |= {name for name in os.environ if _KEY_VARIABLES.search(name)}
        values |= {os.environ[name] for name in names if len(os.environ.get(name, "")) >= _MIN_SECRET}
        self.values = sorted(values, key=len, reverse=True)  # longest first: a value inside another is not split

    def scrub(self, value: Any) -> Any:
        """`value` (JSON data) with every secret replaced, in every string."""
        if isinstance(value, str):
            return self.text(value)
        if is_array(value):
            return [self.scrub(item) for item in value]
        if is_object(value):
            return {self.text(k): self.scrub(v) for k, v in value.items()}
        return value

    def headers(self, headers: Iterable[tuple[str, str]], *, response: bool = False) -> dict[str, str]:
        """Headers as written: credentials redacted, secrets scrubbed (wire-only headers of a response dropped)."""
        out: dict[str, str] = {}
        for name, value in headers:
            lower = name.lower()
            if response and lower in DROPPED_HEADERS:
                continue
            out[lower] = REDACTED if _CREDENTIAL.search(lower) else self.text(value)
        return out

    def text(self, value: str) -> str:
        """`value` with every secret replaced."""
        for secret in self.values:
            if secret in value:
                value = value.replace(secret, SECRET)
        return value

    def url(self, url: str) -> str:
        """`url` with credential query parameters redacted and secrets scrubbed."""
        parts = urlsplit(url)
        if not parts.query:
            return self.text(url)
        query = [
            (k, REDACTED if _CREDENTIAL.search(k) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
        ]
        return self.text(parts._replace(query=urlencode(query)).geturl())


def body_fields(data: bytes, content_type: str, secrets: Secrets) -> dict[str, Any]:
    """A whole body as stored: ``json`` when it parses (and the type allows), else ``text``, else ``base64``."""
    if not data:
        return {}
    if "json" in content_type or content_type == "" or data[:1] in (b"{", b"["):
        try:
            return {"json": secrets.scrub(json.loads(data))}
        except ValueError:
            pass
    try:
        return {"text": secrets.text(data.decode())}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode()}


def chunk_fields(chunks: Sequence[bytes], content_type: str, secrets: Secrets) -> dict[str, Any]:
    """A response body as stored: whole (`body_fields`) unless it is a stream, then its chunks in order."""
    streamed = "event-stream" in content_type or "eventstream" in content_type or "ndjson" in content_type
    if not streamed:
        return body_fields(b"".join(chunks), content_type, secrets)
    try:
        return {"chunks": [secrets.text(chunk.decode()) for chunk in chunks]}
    except UnicodeDecodeError:
        return {"chunks_base64": [base64.b64encode(chunk).decode() for chunk in chunks]}


def stored_chunks(fields: Mapping[str, Any]) -> list[bytes]:
    """The body pieces a stored response replays, in order."""
    if "chunks" in fields:
        return [str(chunk).encode() for chunk in fields["chunks"]]
    if "chunks_base64" in fields:
        return [base64.b64decode(chunk) for chunk in fields["chunks_base64"]]
    if "json" in fields:
        return [json.dumps(fields["json"], ensure_ascii=False).encode()]
    if "text" in fields:
        return [str(fields["text"]).encode()]
    if "base64" in fields:
        return [base64.b64decode(fields["base64"])]
    return []


def request_key(request: Mapping[str, Any]) -> tuple[str, str, str]:
    """What a request is matched on: method, path with query, and the body (canonical JSON when JSON)."""
    parts = urlsplit(str(request["url"]))
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    if "json" in request:
        body = json.dumps(request["json"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    else:
        body = str(request.get("text", request.get("base64", "")))
    return str(request["method"]).upper(), target, body


def _path(base: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    text = str(key)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", text):
        return f"{base}.{text}" if base else text
    return f"{base}[{json.dumps(text)}]"


def differences(recorded: Any, sent: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Where two JSON values differ: ``(path, recorded, sent)``, the path as ``tools[0].description``."""
    out: list[tuple[str, Any, Any]] = []
    if is_object(recorded) and is_object(sent):
        for key in [*recorded, *(k for k in sent if k not in recorded)]:
            where = _path(path, key)
            if key not in sent:
                out.append((where, recorded[key], _MISSING))
            elif key not in recorded:
                out.append((where, _MISSING, sent[key]))
            else:
                out.extend(differences(recorded[key], sent[key], where))
        return out
    if is_array(recorded) and is_array(sent):
        for index in range(max(len(recorded), len(sent))):
            where = _path(path, index)
            if index >= len(sent):
                out.append((where, recorded[index], _MISSING))
            elif index >= len(recorded):
                out.append((where, _MISSING, sent[index]))
            else:
                out.extend(differences(recorded[index], sent[index], where))
        return out
    if recorded == sent and type(recorded) is type(sent):
        return out
    return [(path or "(the body)", recorded, sent)]


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


_MISSING: Any = _Missing()


def show(value: Any, width: int = 80) -> str:
    """A short display of a JSON value for a miss message."""
    text = repr(value) if isinstance(value, _Missing) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."
