"""Descriptions from Google, NumPy and Sphinx docstrings (issue 2, requirement 2.3)."""

from __future__ import annotations

import warnings
from typing import Annotated

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field

from agentkit import AgentkitWarning, tool
from agentkit._docstrings import parse_docstring


def test_google_with_keyword_args_section() -> None:
    @tool
    def search(query: str, limit: int = 10, *, exact: bool = False) -> list[str]:
        """Search the documents.

        Matches are ranked by relevance.

        Args:
            query: What to look for.
                Multi-line descriptions are kept.
            limit: At most this many results.

        Keyword Args:
            exact: Match the whole phrase.

        Returns:
            The matching titles.

        Raises:
            ValueError: never.
        """
        return []

    assert search.description == "Search the documents.\n\nMatches are ranked by relevance."
    props = search.input_schema["properties"]
    assert props["query"]["description"] == "What to look for.\nMulti-line descriptions are kept."
    assert props["limit"]["description"] == "At most this many results."
    assert props["exact"]["description"] == "Match the whole phrase."
    assert "Args" not in search.description and "Returns" not in search.description


def test_numpy_style() -> None:
    @tool
    def area(width: float, height: float) -> float:
        """Compute an area.

        Parameters
        ----------
        width : float
            The width in metres.
        height : float
            The height in metres.

        Returns
        -------
        float
            Square metres.
        """
        return width * height

    assert area.description == "Compute an area."
    assert area.input_schema["properties"]["width"]["description"] == "The width in metres."
    assert area.input_schema["properties"]["height"]["description"] == "The height in metres."


def test_sphinx_style() -> None:
    @tool
    def greet(name: str) -> str:
        """Greet someone.

        :param name: Who to greet.
        :returns: The greeting.
        """
        return f"hi {name}"

    assert greet.description == "Greet someone."
    assert greet.input_schema["properties"]["name"]["description"] == "Who to greet."


def test_explicit_descriptions_win_over_the_docstring() -> None:
    @tool
    def f(
        a: Annotated[int, Field(description="from Field")],
        b: Annotated[int, "from Annotated text"],
        c: int = Field(3, description="from default Field"),
        d: int = 0,
    ) -> None:
        """F.

        Args:
            a: from docstring a
            b: from docstring b
            c: from docstring c
            d: from docstring d
        """

    props = f.input_schema["properties"]
    assert props["a"]["description"] == "from Field"
    assert props["b"]["description"] == "from Annotated text"
    assert props["c"]["description"] == "from default Field"
    assert props["c"]["default"] == 3
    assert props["d"]["description"] == "from docstring d"


def test_explicit_description_option_wins() -> None:
    @tool(description="Custom text.")
    def f(a: int) -> int:
        """Docstring text."""
        return a

    assert f.description == "Custom text."


def test_documenting_a_missing_parameter_warns_naming_both() -> None:
    @tool
    def f(a: int) -> int:
        """F.

        Args:
            a: fine.
            b: stale.
        """
        return a

    with pytest.warns(AgentkitWarning, match=r"test_docstrings.*\.f.*'b'"):
        _ = f.input_schema
    assert f.description == "F."


def test_no_docstring_gives_empty_description() -> None:
    @tool
    def f(a: int) -> int:
        return a

    assert f.description == ""
    assert "description" not in f.input_schema["properties"]["a"]


# ---- no docstring shape may crash a tool (issue 8, section 2 item 1) ---------------------------------


def test_a_docstring_with_only_an_args_section_is_parsed() -> None:
    @tool
    def scale(x: float, factor: float = 2.0) -> float:
        """Args:
        x: The value.
        factor: The multiplier.
        """
        return x * factor

    @tool
    def indented(x: float) -> float:
        """Args:
        x: The value.
        """
        return x

    @tool
    def opened(x: float, factor: float = 2.0) -> float:
        """
        Args:
            x: The value.
            factor: The multiplier.
        """
        return x * factor

    # issue 17 §2.5: the section on the line after the quotes was the description, raw, with no parameter text
    assert opened.description == ""
    assert opened.input_schema["properties"]["x"]["description"] == "The value."
    assert opened.input_schema["properties"]["factor"]["description"] == "The multiplier."
    assert scale.description == ""
    assert scale.input_schema["properties"]["x"]["description"] == "The value."
    assert scale.input_schema["properties"]["factor"]["description"] == "The multiplier."
    assert indented.description == ""
    assert indented.input_schema["properties"]["x"]["description"] == "The value."
    assert indented.invoke({"x": 2}) == 2


@pytest.mark.parametrize(
    "doc",
    [
        "Args:",
        "Args:\n",
        "Returns:",
        "Raises:\n    ValueError",
        "Summary.\n\nArgs:\n    : no name\n",
        "Summary.\n\nArgs:\n    x (int: broken type\n",
        "Parameters\n----------\n",
        "Parameters\n----------\nx :\n",
        ":param:",
        ":param x",
        ":returns:",
        ":raises ValueError:",
        "Summary.\n\nExample:\n\n",
        "\t\tArgs:\n\t x: tabs\n",
    ],
)
def test_malformed_docstrings_never_crash_a_tool(doc: str) -> None:
    def f(x: int = 0) -> int:
        return x

    f.__doc__ = doc
    made = tool(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgentkitWarning)  # a mangled entry may name a parameter that is not there
        assert isinstance(made.description, str)
        assert made.input_schema["type"] == "object"
    assert made.invoke({"x": 1}) == 1


_LINES = st.sampled_from(
    [
        "Args:",
        "Arguments:",
        "Keyword Args:",
        "Returns:",
        "Yields:",
        "Raises:",
        "Example:",
        "Parameters",
        "Returns",
        "----------",
        "-------",
        ":param x:",
        ":param int x: text",
        ":type x: int",
        ":returns:",
        ":rtype: int",
        ":raises ValueError:",
        "x: text",
        "x (int): text",
        "x (int",
        "x : int",
        ": text",
        "*args: text",
        "",
        "Summary.",
    ]
)
_DOCSTRINGS = st.lists(
    st.tuples(st.sampled_from(["", "  ", "    ", "\t", "        "]), st.one_of(_LINES, st.text(max_size=12))),
    max_size=10,
).map(lambda lines: "\n".join(indent + text for indent, text in lines))


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.one_of(_DOCSTRINGS, st.text(max_size=80)))
def test_fuzzed_docstrings_never_raise(doc: str) -> None:
    class Holder:
        pass

    Holder.__doc__ = doc
    parsed = parse_docstring(Holder)
    assert isinstance(parsed.description, str)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in parsed.params.items())
