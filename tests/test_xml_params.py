"""The shared XML-parameter reader (``wire.xml_params``) against hand-written expectations.

Qwen3-Coder and Seed-OSS read their calls through it; these tests pin its
rules where the formats' samples do not reach: exactly one newline taken
from each end (and only with ``newline_inside``), whitespace between tags,
the refusals and their words, and that what ``XmlParameters.write`` writes
reads back to the same text values.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import CallSyntaxError
from templatestudio.wire.shape import Invoke, XmlParameters
from templatestudio.wire.xml_params import read_invoke, read_parameters, xml_limits

PADDED = XmlParameters("<parameter=", ">", "</parameter>", newline_inside=True)
EXACT = XmlParameters("<parameter=", ">", "</parameter>")
FUNCTION = Invoke("<function=", ">", "</function>")


def parameters(text: str, shape: XmlParameters) -> tuple[dict, int]:
    return read_parameters(text, 0, len(text), shape)


@pytest.mark.parametrize(("written", "padded", "exact"), [
    ("\nEUR\n", "EUR", "\nEUR\n"),
    ("EUR", "EUR", "EUR"),
    ("\n\nEUR\n\n", "\nEUR\n", "\n\nEUR\n\n"),  # one newline each side, no more
    ("\n", "", "\n"),  # the one newline is the leading one
    ("", "", ""),
    (" EUR ", " EUR ", " EUR "),  # spaces are the value's own
])
def test_one_newline_is_taken_from_each_end_only_when_declared(written, padded, exact):
    text = f"<parameter=base>{written}</parameter>"
    assert parameters(text, PADDED)[0] == {"base": padded}
    assert parameters(text, EXACT)[0] == {"base": exact}


def test_whitespace_between_parameters_is_passed_over_and_reading_stops_at_other_text():
    text = "\n <parameter=a>1</parameter>\t\n<parameter=b>2</parameter>\n  </function>"
    arguments, position = parameters(text, EXACT)
    assert arguments == {"a": "1", "b": "2"}
    assert text[position:] == "</function>"


def test_a_repeated_parameter_a_missing_closer_and_a_key_the_tag_cannot_hold():
    with pytest.raises(CallSyntaxError, match="parameter 'x' is given twice"):
        parameters("<parameter=x>1</parameter><parameter=x>2</parameter>", EXACT)
    with pytest.raises(CallSyntaxError, match="the value of 'x' has no </parameter>"):
        parameters("<parameter=x>1", EXACT)
    for text in ("<parameter=>1</parameter>", "<parameter=a\nb>1</parameter>", "<parameter=a<b>1</parameter>"):
        assert parameters(text, EXACT) == ({}, 0), text  # not a parameter: the caller refuses what stands there


def test_the_closer_is_looked_for_only_up_to_end():
    text = "<parameter=x>1</parameter>"
    with pytest.raises(CallSyntaxError, match="has no </parameter>"):
        read_parameters(text, 0, len(text) - 1, EXACT)


def test_an_invoke_reads_its_name_parameters_and_closing_tag():
    text = "  <function=get_rate>\n<parameter=base>EUR</parameter>\n</function>tail"
    call, after = read_invoke(text, 0, len(text), FUNCTION, EXACT)
    assert call == ParsedToolCall("get_rate", {"base": "EUR"})
    assert text[after:] == "tail"


def test_an_invoke_refuses_in_its_own_words_or_the_format_s():
    with pytest.raises(CallSyntaxError, match="^no <function=NAME> at offset 2$"):
        read_invoke("\n <function=>", 0, 13, FUNCTION, EXACT)
    with pytest.raises(CallSyntaxError, match="^where the call should start$"):
        read_invoke("<function=>", 0, 11, FUNCTION, EXACT, no_head="where the call should start")
    # A closer followed by text is the value's own (issue 22): this value never ends.
    text = "<function=f><parameter=a>1</parameter>stray</function>"
    with pytest.raises(CallSyntaxError, match="^the value of 'a' has no </parameter> that ends it$"):
        read_invoke(text, 0, len(text), FUNCTION, EXACT)


def test_the_limits_name_what_the_tags_cannot_carry():
    limits = xml_limits(EXACT, "</function>", "</tool_call>", "written as text")
    boundary = ("a string holding what the template writes between two parameters (</parameter>, then "
                "<parameter=KEY> or </function> </tool_call>; a line starting <parameter=KEY>): it ends the value")

    def applies(arguments: dict) -> list[str]:
        return [limit.description for limit in limits if limit.applies(arguments)]

    assert applies({"a": "fine", "b": "\n<x>\n"}) == []
    # Markers are carried unless the template's boundary stands in the value (issue 22).
    assert applies({"a": "x</parameter>", "b": "</tool_call>", "c": "</parameter> and </function>"}) == []
    assert applies({"a": "x</parameter><parameter=y>"}) == [boundary]
    assert applies({"a": "x</parameter>\n</function>\n</tool_call>"}) == [boundary]
    assert applies({"a": "x\n<parameter=y>"}) == [boundary]
    assert applies({"a<": "x"}) == ["a key that is empty or holds <, > or a newline: the tag cannot hold it"]
    assert applies({"": "x"}) == ["a key that is empty or holds <, > or a newline: the tag cannot hold it"]
    assert applies({"n": 1}) == ["a value that is not a string: written as text"]


KEYS = st.text(st.characters(blacklist_characters="<>\n", blacklist_categories=("Cs",)), min_size=1, max_size=6)
VALUES = st.text(st.sampled_from("ab <>/\n\t=é"), max_size=8).filter(lambda value: "</parameter>" not in value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=4), st.sampled_from([PADDED, EXACT]))
def test_what_the_declaration_writes_reads_back(arguments, shape):
    text = shape.write(arguments)
    assert parameters(text, shape) == (arguments, len(text))
