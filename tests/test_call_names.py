"""A JSON call object whose name is missing, empty or not a string is refused saying which.

"the call has no 'name' string" covered four different mistakes; the
reason now names the one the model made, for every JSON kind the name's
value may take, read directly and through the formats that write JSON
call objects.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.formats import get_format
from templatestudio.wire.base import CallSyntaxError
from templatestudio.wire.jsonbody import call_from

MISSING = object()
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
                           lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner,
                                                                                       max_size=2), max_leaves=4)


def expected_reason(name: object) -> str:
    if name is MISSING:
        return "the call has no 'name'"
    if name == "" and isinstance(name, str):
        return "the call's 'name' is an empty string"
    kind = ("null" if name is None else "a boolean" if isinstance(name, bool) else
            "a number" if isinstance(name, (int, float)) else "an array" if isinstance(name, list) else "an object")
    return f"the call's 'name' is {kind}, not a string"


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.one_of(st.just(MISSING), st.just(""), json_values.filter(lambda v: not isinstance(v, str))),
       st.booleans())
def test_the_reason_names_what_the_name_is(name, extra):
    payload = {"arguments": {}} if name is MISSING else {"name": name, "arguments": {}}
    if extra:
        payload["id"] = "x"
    with pytest.raises(CallSyntaxError) as raised:
        call_from(payload, extras={"id": lambda value: True})
    assert str(raised.value) == expected_reason(name)


@pytest.mark.parametrize("fmt", ["hermes", "fenced-json"])  # the formats that write {"name": ..., "arguments": ...}
@pytest.mark.parametrize("name", [MISSING, "", None, 7, True, ["f"], {"f": 1}])
def test_a_reader_refuses_the_call_with_that_reason(fmt, name):
    form = get_format(fmt)
    written = form.write_call(ParsedToolCall("get_weather", {"city": "Paris"}))
    body = {"name": "get_weather", "arguments": {"city": "Paris"}}
    broken = {"arguments": {"city": "Paris"}} if name is MISSING else {"name": name, "arguments": {"city": "Paris"}}
    old, new = json.dumps(body, ensure_ascii=False), json.dumps(broken, ensure_ascii=False)
    assert old in written
    with pytest.raises(UnparsedToolCall, match=expected_reason(name).replace("'", ".")):
        read_events(written.replace(old, new), form)
