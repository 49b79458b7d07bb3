r"""What a JSON Schema ``pattern`` uses, read without compiling or running it.

Strict (constrained-decoding) engines turn a ``pattern`` into a grammar, and a grammar cannot express
every regular-expression feature: OpenAI answers a lookaround with HTTP 400 ("regex lookaround is not
supported"), Anthropic's strict mode documents no backreferences, lookaround or word boundaries, Cohere's
no anchors or lookahead, and llama-cpp-python's JSON-Schema-to-grammar compiler (what the e2e suite
checks payloads with) raises on any ``(?`` group, ``(?:`` included, and on ``\p{...}``, and wants
``^...$``; it compiles ``\1`` and ``\b`` as literal characters. Each dialect names the features its
engine lacks and moves such a pattern into the description (where the model still reads it and local
validation still enforces it).

The scan follows ECMA-262 syntax (what JSON Schema patterns are): escapes are skipped as a whole,
character classes are read as one unit, so ``[\b]`` (a backspace) and ``\(?=`` (a literal) are not
mistaken for a word boundary or a lookahead.
"""

from __future__ import annotations as _annotations

from functools import lru_cache

__all__ = [
    "ANCHOR",
    "ATOMIC",
    "BACKREFERENCE",
    "GRAMMAR_UNSUPPORTED",
    "INLINE_FLAGS",
    "LOOKAROUND",
    "UNICODE_PROPERTY",
    "WORD_BOUNDARY",
    "pattern_features",
    "unsupported_features",
]

LOOKAROUND = "lookaround"
"""``(?=``, ``(?!``, ``(?<=``, ``(?<!``."""
BACKREFERENCE = "backreference"
"""``\\1`` ... ``\\9``, ``\\k<name>``, ``(?P=name)``."""
WORD_BOUNDARY = "word boundary"
"""``\\b`` or ``\\B`` outside a character class."""
UNICODE_PROPERTY = "Unicode property escape"
"""``\\p{...}`` or ``\\P{...}`` (Python's ``re``, which OpenAI compiles patterns with, has none)."""
INLINE_FLAGS = "inline flags"
"""``(?i)``, ``(?s:...)`` and other modifier groups (not ECMA-262 syntax)."""
ATOMIC = "atomic group or possessive quantifier"
"""``(?>...)``, ``a++``, ``a*+``, ``a?+``, ``a{2}+`` (not ECMA-262 syntax)."""
ANCHOR = "anchor"
"""``^`` or ``$`` outside a character class."""

GRAMMAR_UNSUPPORTED = frozenset({LOOKAROUND, BACKREFERENCE, WORD_BOUNDARY, UNICODE_PROPERTY, INLINE_FLAGS, ATOMIC})
"""What no regular grammar can enforce (or no grammar engine parses): OpenAI's and Mistral's strict modes."""


@lru_cache(maxsize=4096)
def pattern_features(pattern: str) -> frozenset[str]:
    """The features of `pattern` named in this module (cached: the same patterns recur across tools)."""
    found: set[str] = set()
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt in ("p", "P", "u") and pattern[i + 2 : i + 3] == "{":
                if nxt != "u":
                    found.add(UNICODE_PROPERTY)
                end = pattern.find("}", i + 3)
                i = n if end < 0 else end + 1  # the braces are the escape's, not a quantifier
                continue
            if not in_class:
                if (nxt and nxt in "123456789") or (nxt == "k" and pattern[i + 2 : i + 3] == "<"):
                    found.add(BACKREFERENCE)
                elif nxt and nxt in "bB":
                    found.add(WORD_BOUNDARY)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True  # ECMA-262: the first "]" ends the class ("[]" is an empty class)
        elif c == "(" and pattern[i + 1 : i + 2] == "?":
            found.update(_group_kind(pattern[i + 2 : i + 4]))
        elif c in "^$":
            found.add(ANCHOR)
        elif c in "*+?}" and pattern[i + 1 : i + 2] == "+" and i > 0:
            found.add(ATOMIC)
            i += 1  # the "+" that makes it possessive is no quantifier of its own
        i += 1
    return frozenset(found)


def _group_kind(head: str) -> tuple[str, ...]:
    """What a ``(?`` group opening with `head` (its next two characters) is, as features."""
    if head[:1] in ("=", "!") or head in ("<=", "<!"):
        return (LOOKAROUND,)
    if head == "P=":
        return (BACKREFERENCE,)
    if head[:1] in (":", "<", "P"):
        return ()  # non-capturing or named groups: plain groups to a grammar
    if head[:1] == ">":
        return (ATOMIC,)
    return (INLINE_FLAGS,)


def unsupported_features(pattern: str, unsupported: frozenset[str]) -> list[str]:
    """The features of `pattern` that a strict engine lacking `unsupported` cannot take, sorted."""
    return sorted(pattern_features(pattern) & unsupported)
