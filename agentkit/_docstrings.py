"""Docstring -> description, per-parameter text and returns text.

Google, NumPy and Sphinx styles are detected from the text itself. `docstring_parser` does the
parsing; it is imported on first use so that `import agentkit` stays cheap.
"""

from __future__ import annotations as _annotations

import inspect
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

__all__ = ["ParsedDocstring", "parse_docstring"]

Style = Literal["google", "numpy", "sphinx"]

_SPHINX = re.compile(r"^\s*:(param|parameter|arg|argument|key|keyword|returns?|raises?)\b", re.MULTILINE)
_NUMPY = re.compile(r"^\s*(Parameters|Returns|Other Parameters|Raises|Yields)\s*\n\s*-{3,}\s*$", re.MULTILINE)
# Google sections docstring_parser does not know by default; "Keyword Args" documents parameters too.
_EXTRA_GOOGLE_PARAM_SECTIONS = ("Keyword Args", "Keyword Arguments", "Kwargs", "Other Parameters")


@dataclass(frozen=True)
class ParsedDocstring:
    """What agentkit takes from a docstring."""

    description: str = ""
    """Summary and body, without the parameter, returns and raises sections."""
    params: dict[str, str] = field(default_factory=dict)
    """Parameter name -> its description."""
    returns: str | None = None
    """The returns section's text."""
    style: Style | None = None


def detect_style(doc: str) -> Style:
    """Guess the docstring style: Sphinx field lists, NumPy underlined sections, else Google."""
    if _SPHINX.search(doc):
        return "sphinx"
    if _NUMPY.search(doc):
        return "numpy"
    return "google"


@lru_cache(maxsize=1)
def _google_parser() -> Any:
    from docstring_parser import google

    extra = [google.Section(title, "param", google.SectionType.MULTIPLE) for title in _EXTRA_GOOGLE_PARAM_SECTIONS]
    return google.GoogleParser(sections=[*google.DEFAULT_SECTIONS, *extra])


def parse_docstring(obj: Any) -> ParsedDocstring:
    """Parse the docstring of `obj` (a function or class); an empty result when it has none."""
    doc = inspect.getdoc(obj)
    if not doc:
        return ParsedDocstring()
    style = detect_style(doc)
    if style == "google":
        parsed = _google_parser().parse(doc)
    else:
        from docstring_parser import DocstringStyle, parse

        parsed = parse(doc, style=DocstringStyle.REST if style == "sphinx" else DocstringStyle.NUMPYDOC)
    description = "\n\n".join(p for p in (parsed.short_description, parsed.long_description) if p)
    params = {p.arg_name.lstrip("*"): (p.description or "").strip() for p in parsed.params}
    returns = parsed.returns.description if parsed.returns is not None else None
    return ParsedDocstring(description=description.strip(), params=params, returns=returns, style=style)
