"""Wire names and call ids: the maps the codecs resolve once per request (issue 9 §2)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentkit.providers._ids import IdRule
from agentkit.providers._names import NameRule, resolve_names

RULE = NameRule(pattern=r"^[a-zA-Z0-9_-]{1,64}$", allowed="[a-zA-Z0-9_-]", max_length=64)


def test_a_map_says_whether_any_key_is_renamed() -> None:
    plain = resolve_names(("search", "fetch_page"), "test", RULE, aliases=True)
    aliased = resolve_names(("search", "fetch.page"), "test", RULE, aliases=True)
    assert not plain.renames and plain.name_for("search") == "search"
    assert aliased.renames and aliased.name_for("fetch.page") != "fetch.page"


RULES = (
    IdRule(pattern=r"^[a-zA-Z0-9]{9}$", allowed="[a-zA-Z0-9]", exact_length=9),
    IdRule(pattern=r"^[a-zA-Z0-9_-]+$", allowed="[a-zA-Z0-9_-]"),
    IdRule(pattern=r"^.{1,64}$", allowed=".", max_length=64),
)


@given(call_id=st.text(max_size=80), rule=st.sampled_from(RULES))
def test_an_id_maps_to_one_accepted_id_every_time(call_id: str, rule: IdRule) -> None:
    first = rule.apply(call_id)
    assert rule.accepts(first)
    assert rule.apply(call_id) == first  # the cached repair gives what the first one gave
    assert (first == call_id) == rule.accepts(call_id)


def test_rules_with_the_same_fields_are_equal_and_repair_alike() -> None:
    a, b = IdRule(pattern=r"^[a-z]+$", allowed="[a-z]"), IdRule(pattern=r"^[a-z]+$", allowed="[a-z]")
    assert a == b and hash(a) == hash(b) and "_match" not in repr(a)
    assert a.apply("call 1") == b.apply("call 1") != "call 1"
