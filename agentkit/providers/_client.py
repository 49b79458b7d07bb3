"""Plumbing that the SDK-backed model clients share.

Request bodies from `ModelSettings`, client ownership (`aclose`), error bodies and error mapping.

No vendor SDK is imported here; each vendor module keeps its own lazy import and its own quirks (field
names, where sampling options go, which SDK errors mean what).
"""

from __future__ import annotations as _annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..exceptions import ModelSetupError
from ..messages import Message
from ..models._base import ModelSettings
from ..registry import Registry
from ._codec import FormatOptions, Provider

__all__ = [
    "OwnedClient",
    "api_key_from_env",
    "check_client_options",
    "deep_merge",
    "error_body",
    "header_dict",
    "mapped_errors",
    "missing_api_key",
    "provider_request",
    "sampling_options",
    "with_settings",
]


def check_client_options(model: str, client: Any, api_key: str | None, base_url: str | None) -> None:
    """Refuse a caller's client together with options for a client built here (they would be ignored)."""
    if client is not None and (api_key is not None or base_url is not None):
        raise ModelSetupError(
            f"{model}: pass either client= (used as it is) or api_key=/base_url= (for a client built here), not both"
        )


def provider_request(
    provider: Provider, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, shared: bool = True
) -> dict[str, Any]:
    """`Provider.build_request` with the tool options of `settings` (no model name, no sampling).

    With `shared`, the tool fragment's containers are the provider's cached ones, for a body that is sent
    and never edited; `Model.payload` (which callers may edit) passes False for fresh ones.
    """
    options = FormatOptions(
        tool_choice=settings.tool_choice,
        active_tools=settings.active_tools,
        strict=settings.strict,
        parallel_tool_calls=settings.parallel_tool_calls,
        aliases=settings.aliases,
    )
    return provider._request(messages, tools, options, shared=shared)


def sampling_options(settings: ModelSettings, max_tokens_key: str) -> dict[str, Any]:
    """The set sampling settings: ``max_tokens`` under the vendor's `max_tokens_key`, then ``temperature``."""
    options: dict[str, Any] = {}
    if settings.max_tokens is not None:
        options[max_tokens_key] = settings.max_tokens
    if settings.temperature is not None:
        options["temperature"] = settings.temperature
    return options


def with_settings(body: dict[str, Any], settings: ModelSettings, max_tokens_key: str) -> dict[str, Any]:
    """`body` with the sampling settings at its top level, then `settings.extra` (last: the caller's word wins)."""
    body.update(sampling_options(settings, max_tokens_key))
    body.update(settings.extra)
    return body


def deep_merge(target: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Merge `extra` into `target`: nested objects key by key, anything else replaced.

    So ``{"options": {"top_p": 0.9}}`` keeps the ``num_predict`` set from the settings.
    """
    for key, value in extra.items():
        current = target.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            merged = dict(current)
            deep_merge(merged, value)
            target[key] = merged
        else:
            target[key] = value


def error_body(body: Any) -> Any:
    """An error body as JSON data when it is JSON text, else as it came."""
    if isinstance(body, (str, bytes)):
        try:
            return json.loads(body)
        except ValueError:
            return body.decode(errors="replace") if isinstance(body, bytes) else body
    return body


def header_dict(headers: Any) -> dict[str, str]:
    """Response headers as a plain ``str -> str`` dict (none: empty)."""
    return {str(k): str(v) for k, v in headers.items()} if headers is not None else {}


@contextmanager
def mapped_errors(map_error: Callable[[Exception], Exception]) -> Iterator[None]:
    """Raise `map_error`'s agentkit error for an exception in the block (chained to it).

    An exception that `map_error` returns unchanged is not one it knows: it propagates as it is.
    """
    try:
        yield
    except Exception as error:
        mapped = map_error(error)
        if mapped is error:
            raise
        raise mapped from error


class OwnedClient:
    """Client ownership for a `Model`: `aclose` closes the SDK client only when the model built it.

    Subclasses set ``_owns_client`` (True for a client built here, never for one the caller passed)
    and implement `_close_client`.
    """

    _owns_client: bool = False

    async def aclose(self) -> None:
        """Close the SDK client if this model built it (a client passed in is left open)."""
        if self._owns_client:
            await self._close_client()

    async def _close_client(self) -> None:
        raise NotImplementedError


def missing_api_key(vendor: str, env_var: str) -> ModelSetupError:
    """The error for a vendor model created without a key: names the variable and the offline option."""
    return ModelSetupError(
        f"No API key for {vendor}: set the {env_var} environment variable, or pass a configured SDK client "
        f"(client=...). To run without any key, use model='test' (agentkit.testing.TestModel) or a "
        "FunctionModel."
    )


def api_key_from_env(vendor: str, env_var: str) -> str:
    """The API key in `env_var`, or the `missing_api_key` error."""
    key = os.environ.get(env_var)
    if not key:
        raise missing_api_key(vendor, env_var)
    return key
