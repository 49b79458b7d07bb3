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
_STYLES: tuple[Style, ...] = ("google", "numpy", "sphinx")

_SPHINX = re.compile(r"^\s*:(param|parameter|arg|argument|key|keyword|returns?|raises?)\b", re.MULTILINE)
_NUMPY = re.compile(r"^\s*(Parameters|Returns|Other Parameters|Raises|Yields)\s*\n\s*-{3,}\s*$", re.MULTILINE)
# Google sections docstring_parser does not know by default; "Keyword Args" documents parameters too.
_EXTRA_GOOGLE_PARAM_SECTIONS = ("Keyword Args", "Keyword Arguments", "Kwargs", "Other Parameters")


@dataclass(frozen=True)
class ParsedDocstring:
    """What agentkit takes from a docstring."""

    description: str = ""
    """Summary and body, without the parameter, returns and raises sections."""
    params: dict[str, str] = field(default_factory=lambda: {})
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
    """Parse the docstring of `obj` (a function or class); an empty result when it has none.

    Never raises: a docstring the parsers cannot make sense of becomes the description as it is,
    with no per-parameter text (a tool must not fail because of how its docstring is written).
    """
    try:
        # The object's own docstring: `inspect.getdoc` would inherit one from a base class (BaseModel's,
        # object.__call__'s), which describes the library, not the tool.
        doc = obj.__doc__
    except Exception:  # noqa: BLE001 - a broken __doc__ property: no docstring
        return ParsedDocstring()
    if not doc or not isinstance(doc, str):
        return ParsedDocstring()
    doc = inspect.cleandoc(doc)
    doc = _reindent_leading_section(doc)
    style = detect_style(doc)
    try:
        return _parse(doc, style)
    except Exception:  # noqa: BLE001 - docstring_parser.ParseError and anything else a malformed text causes
        pass
    others: tuple[Style, ...] = tuple(s for s in _STYLES if s != style)
    for other in others:
        try:
            return _parse(doc, other)
        except Exception:  # noqa: BLE001 - try the next style
            continue
    return ParsedDocstring(description=doc.strip(), style=None)


def _parse(doc: str, style: Style) -> ParsedDocstring:
    if style == "google":
        parsed = _google_parser().parse(doc)
    else:
        from docstring_parser import DocstringStyle, parse

        parsed = parse(doc, style=DocstringStyle.REST if style == "sphinx" else DocstringStyle.NUMPYDOC)
    description = "\n\n".join(p for p in (parsed.short_description, parsed.long_description) if p)
    params = {p.arg_name.lstrip("*"): (p.description or "").strip() for p in parsed.params if p.arg_name}
    returns = parsed.returns.description if parsed.returns is not None else None
    return ParsedDocstring(description=description.strip(), params=params, returns=returns, style=style)


_GOOGLE_HEADER = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Kwargs|Other Parameters|"
    r"Returns|Return|Yields|Yield|Raises|Exceptions|Attributes|Examples?|Notes?|Warnings?)"
    r"\s*:\s*$"
)


def _reindent_leading_section(doc: str) -> str:
    """Make a section that opens the docstring (``\"\"\"Args:`` with no summary) read as a section.

    `inspect.getdoc` removes the indentation that lines after the first share, so a docstring whose
    first line is ``Args:`` loses the indentation that makes its entries part of the section.
    """
    lines = doc.splitlines()
    if len(lines) < 2 or not _GOOGLE_HEADER.match(lines[0]):
        return doc
    body = [line for line in lines[1:] if line.strip()]
    if not body:
        return doc
    if body[0][:1].isspace():  # indented already (the docstring opened with a newline): docstring_parser
        return "\n" + doc  # reads a section on the first line as the summary unless a blank line leads
    out = [lines[0]]
    inside = True
    for line in lines[1:]:
        if _GOOGLE_HEADER.match(line):
            inside = False
        out.append("    " + line if inside and line.strip() else line)
    # docstring_parser cleans the text again (`inspect.cleandoc`): a leading blank line keeps the indentation
    return "\n" + "\n".join(out)
