"""One valid value for a JSON Schema, deterministic for a seed, without hypothesis (`TestModel`'s arguments).

A value is generated, then checked with `jsonschema` (formats included); another seed is tried when
the check fails, and a schema no attempt satisfies is an error naming the unmet rule. So what
`generate_arguments` returns is valid for the schema, whatever the schema: the generator only has to
be good enough to find such a value quickly.
"""

from __future__ import annotations as _annotations

import datetime as dt
import json
import random
import string
import sys
import uuid
from collections.abc import Callable
from typing import Any

from ._json_schema import JsonSchema
from ._jsonish import is_array, is_object

__all__ = ["generate_arguments", "sample_pattern"]

_MAX_DEPTH = 3  # beyond this many $ref levels, optional fields and array items are left out
_ATTEMPTS = 30

if sys.version_info >= (3, 11):
    import re._constants as _sre
    import re._parser as _sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_constants as _sre
    import sre_parse as _sre_parse

_PRINTABLE = string.ascii_letters + string.digits
_CATEGORIES: dict[Any, str] = {
    _sre.CATEGORY_DIGIT: string.digits,
    _sre.CATEGORY_NOT_DIGIT: string.ascii_letters,
    _sre.CATEGORY_SPACE: " ",
    _sre.CATEGORY_NOT_SPACE: _PRINTABLE,
    _sre.CATEGORY_WORD: _PRINTABLE + "_",
    _sre.CATEGORY_NOT_WORD: "-.",
}


def sample_pattern(pattern: str, rng: random.Random) -> str:
    """A string `re.search(pattern, ...)` is likely to match (look-arounds are not honoured: callers check)."""
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:  # noqa: BLE001 - a pattern Python cannot parse: nothing to imitate
        return ""
    groups: dict[int, str] = {}
    return _sample(list(parsed.data), rng, groups)


def _sample(items: list[Any], rng: random.Random, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, arg in items:
        if op is _sre.LITERAL:
            out.append(chr(arg))
        elif op is _sre.NOT_LITERAL:
            out.append(rng.choice([c for c in _PRINTABLE if ord(c) != arg]))
        elif op is _sre.ANY:
            out.append(rng.choice(_PRINTABLE))
        elif op is _sre.IN:
            out.append(_sample_set(arg, rng))
        elif op is _sre.BRANCH:
            out.append(_sample(list(rng.choice(arg[1])), rng, groups))
        elif op is _sre.SUBPATTERN:
            group, *_, sub = arg
            text = _sample(list(sub), rng, groups)
            if group is not None:
                groups[group] = text
            out.append(text)
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None)):
            low, high, sub = arg
            high = low + 3 if high is _sre.MAXREPEAT else min(high, low + 3)
            out.extend(_sample(list(sub), rng, groups) for _ in range(rng.randint(low, max(low, high))))
        elif op is _sre.GROUPREF:
            out.append(groups.get(arg, ""))
        elif op is _sre.CATEGORY:
            out.append(rng.choice(_CATEGORIES.get(arg, _PRINTABLE)))
        # AT (anchors), ASSERT / ASSERT_NOT (look-arounds) and the rest add no characters
    return "".join(out)


def _sample_set(items: list[Any], rng: random.Random) -> str:
    negate = bool(items) and items[0][0] is _sre.NEGATE
    allowed: list[str] = []
    for op, arg in items:
        if op is _sre.LITERAL:
            allowed.append(chr(arg))
        elif op is _sre.RANGE:
            low, high = arg
            allowed.extend(chr(c) for c in range(low, min(high, low + 200) + 1))
        elif op is _sre.CATEGORY:
            allowed.extend(_CATEGORIES.get(arg, _PRINTABLE))
    if negate:
        allowed = [c for c in _PRINTABLE if c not in allowed]
    return rng.choice(allowed or list(_PRINTABLE))


class _Generator:
    def __init__(self, root: JsonSchema, rng: random.Random) -> None:
        self.defs: dict[str, Any] = {**root.get("definitions", {}), **root.get("$defs", {})}
        self.rng = rng

    def value(self, schema: Any, depth: int = 0) -> Any:
        rng = self.rng
        if schema is True or not is_object(schema) or not schema:
            return rng.choice(["x", 1, True])
        if "$ref" in schema:
            target = self.defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return self.value({**target, **rest}, depth + 1)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema and schema["enum"]:
            return rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema and schema[key]:
                options = schema[key]
                if depth >= _MAX_DEPTH:  # prefer a branch that ends the recursion
                    options = [o for o in options if "$ref" not in o] or options
                rest = {k: v for k, v in schema.items() if k not in (key, "discriminator")}
                choice = rng.choice(options)
                return self.value({**rest, **choice} if is_object(choice) else rest, depth)
        if "allOf" in schema:
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                if is_object(part):
                    merged = _merge(merged, part)
            return self.value(merged, depth)
        kind = schema.get("type")
        if is_array(kind):
            non_null = [k for k in kind if k != "null"]
            kind = rng.choice(non_null) if non_null and (len(non_null) == len(kind) or rng.random() < 0.8) else "null"
        if schema.get("nullable") and rng.random() < 0.2:
            return None
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
        maker = getattr(self, f"_{kind}", self._string)
        return maker(schema, depth)

    def _null(self, schema: JsonSchema, depth: int) -> None:
        return None

    def _boolean(self, schema: JsonSchema, depth: int) -> bool:
        return self.rng.random() < 0.5

    def _integer(self, schema: JsonSchema, depth: int) -> int:
        lo = schema.get("minimum", schema["exclusiveMinimum"] + 1 if "exclusiveMinimum" in schema else None)
        hi = schema.get("maximum", schema["exclusiveMaximum"] - 1 if "exclusiveMaximum" in schema else None)
        lo = int(-(-lo // 1)) if lo is not None else (0 if hi is None or hi >= 0 else int(hi) - 100)
        hi = int(hi // 1) if hi is not None else lo + 100
        value = self.rng.randint(lo, max(lo, hi))
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            value = -(-lo // step) * step  # the smallest multiple within the bounds
        return value

    def _number(self, schema: JsonSchema, depth: int) -> float:
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum", schema.get("exclusiveMaximum"))
        lo = float(lo) if lo is not None else (0.0 if hi is None or hi > 0 else float(hi) - 100.0)
        hi = float(hi) if hi is not None else lo + 100.0
        value = round(lo + (hi - lo) * (0.1 + 0.8 * self.rng.random()), 3)  # strictly inside the bounds
        if not lo < value < hi and lo < hi:
            value = (lo + hi) / 2
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0:
            value = float(-(-lo // step) * step)
            if "exclusiveMinimum" in schema and value <= lo:
                value += step
        return value

    def _string(self, schema: JsonSchema, depth: int) -> str:
        rng = self.rng
        hi_given = schema.get("maxLength")
        lo = int(schema.get("minLength", 1 if hi_given is None or hi_given >= 1 else 0))
        hi = int(hi_given) if hi_given is not None else lo + 8
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            text = sample_pattern(pattern, rng)
            if lo <= len(text) <= hi:
                return text
        fmt = schema.get("format")
        if fmt in _FORMATS:
            return _FORMATS[fmt](rng)
        size = rng.randint(lo, max(lo, min(hi, lo + 8)))
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(size))

    def _array(self, schema: JsonSchema, depth: int) -> list[Any]:
        prefix = schema.get("prefixItems")
        lo = int(schema.get("minItems", 0))
        hi = int(schema.get("maxItems", lo + 3))
        unique = bool(schema.get("uniqueItems"))
        out: list[Any] = []
        seen: set[str] = set()

        def add(item_schema: Any) -> bool:
            for _ in range(8 if unique else 1):
                item = self.value(item_schema, depth)
                marker = json.dumps(item, sort_keys=True, default=str)
                if not unique or marker not in seen:
                    seen.add(marker)
                    out.append(item)
                    return True
            return False

        for item_schema in prefix or ():
            if not add(item_schema):
                break
        extra = schema.get("items", {} if prefix is None else False)
        if extra is not False:
            size = max(lo, len(out)) if depth >= _MAX_DEPTH else self.rng.randint(max(lo, len(out)), max(lo, hi))
            for _ in range(size * 4):
                if len(out) >= size or not add(extra):
                    break
        contains = schema.get("contains")
        if is_object(contains) and len(out) < hi:
            add(contains)
        return out

    def _object(self, schema: JsonSchema, depth: int) -> dict[str, Any]:
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in required or (depth < _MAX_DEPTH and self.rng.random() < 0.5):
                out[name] = self.value(sub, depth)
        dependent: dict[str, Any] = schema.get("dependentRequired") or {}
        for name, needed in dependent.items():
            if name in out:
                for other in needed:
                    if other not in out:
                        out[other] = self.value(properties.get(other, {}), depth)
        for name in required - set(out):
            out[name] = self.value({}, depth)  # required but not described
        extra = schema.get("additionalProperties")
        wanted = int(schema.get("minProperties", 0))
        optional = [n for n in properties if n not in out]
        while len(out) < wanted and optional:
            name = optional.pop(0)
            out[name] = self.value(properties[name], depth)
        if not properties and is_object(extra) and depth < _MAX_DEPTH:
            for n in range(max(wanted, self.rng.randint(0, 2))):
                out[f"key{n}"] = self.value(extra, depth)
        return out


def _merge(base: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **part}
    for key in ("properties", "$defs"):
        if isinstance(base.get(key), dict) and isinstance(part.get(key), dict):
            merged[key] = {**base[key], **part[key]}
    if isinstance(base.get("required"), list) and isinstance(part.get("required"), list):
        merged["required"] = list(dict.fromkeys([*base["required"], *part["required"]]))
    return merged


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _datetime(rng: random.Random) -> dt.datetime:
    return dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=rng.randint(0, 10**8))


_FORMATS: dict[str, Callable[[random.Random], str]] = {
    "date-time": lambda rng: _datetime(rng).isoformat().replace("+00:00", "Z"),
    "date": lambda rng: _datetime(rng).date().isoformat(),
    "time": lambda rng: _datetime(rng).time().isoformat(),
    "duration": lambda rng: f"PT{rng.randint(1, 59)}M",
    "uuid": _uuid,
    "email": lambda rng: f"user{rng.randint(1, 999)}@example.com",
    "uri": lambda rng: f"https://example.com/{rng.randint(1, 999)}",
    "url": lambda rng: f"https://example.com/{rng.randint(1, 999)}",
    "hostname": lambda rng: "example.com",
    "ipv4": lambda rng: f"192.0.2.{rng.randint(1, 254)}",
    "ipv6": lambda rng: f"2001:db8::{rng.randint(1, 9999):x}",
    "path": lambda rng: f"/tmp/file{rng.randint(1, 99)}.txt",  # a sample value, never opened
}


def _validator(schema: JsonSchema) -> Any:
    from jsonschema import Draft202012Validator

    from ._raw_schema import linear_validator_class

    # the schema may be an MCP server's: its patterns are matched by the bounded engine, never Python's `re`
    return linear_validator_class()(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def generate_arguments(schema: JsonSchema, *, seed: int | str = 0) -> dict[str, Any]:
    """One argument object valid for `schema` (a tool's input schema), deterministic for `seed`.

    Handles ``$ref``/``$defs`` (recursion cut after a few levels), ``enum``/``const``, ``anyOf``/``oneOf``,
    ``allOf``, nullable types, arrays (``items``, ``prefixItems``, bounds, ``uniqueItems``, ``contains``),
    nested objects (``minProperties``, ``dependentRequired``), numeric bounds, string lengths and
    ``pattern``, and the common string formats (date-time, date, time, uuid, email, uri, ipv4, ...).
    Every value is checked against `schema` with `jsonschema` before it is returned; other attempts are
    made (derived from `seed`) when one falls short.

    Raises:
        ValueError: the schema does not describe an object, or no attempt satisfied it (the unmet rule
            is named): use `check_tool_contract` (hypothesis) for such schemas.
    """
    if schema.get("type", "object") != "object" and "properties" not in schema:
        raise ValueError(f"the schema does not describe an object: {schema!r}")
    validator = _validator(schema)
    first_error: Any = None
    for attempt in range(_ATTEMPTS):
        rng = random.Random(seed if attempt == 0 else f"{seed}:{attempt}")
        value = _Generator(schema, rng).value(schema)
        if not is_object(value):
            raise ValueError(f"the schema does not describe an object: {schema!r}")
        error = next(iter(validator.iter_errors(value)), None)
        if error is None:
            return value
        first_error = first_error or error
    where = first_error.json_path if first_error is not None else "$"
    message = first_error.message if first_error is not None else "?"
    raise ValueError(
        f"generate_arguments found no value valid for this schema in {_ATTEMPTS} attempts: at {where}, "
        f"{message}. Use agentkit.testing.check_tool_contract (hypothesis) for such schemas"
    )
