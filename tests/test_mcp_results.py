"""MCP results: a CallToolResult built with the SDK's own types becomes one tool message."""

from __future__ import annotations

import base64
import sys

import pytest

types = pytest.importorskip("mcp.types", reason="the mcp extra is not installed")

from pydantic import ValidationError  # noqa: E402  (the SDK's models are pydantic)

from templatestudio.mcp_results import (  # noqa: E402
    mcp_result_text,
    mcp_result_to_tool_message,
)
from templatestudio.pairing import assert_paired  # noqa: E402
from templatestudio.parallel import parallel_tool_call_message  # noqa: E402
from templatestudio.render import render  # noqa: E402

PNG_BYTES = bytes(range(256)) * 4 + b"\x89PNG"  # 1028 bytes; only the size is reported
WAV_BYTES = b"RIFF" + b"\x00" * 96


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def text(value: str):
    return types.TextContent(type="text", text=value)


def test_text_blocks_keep_their_order():
    result = types.CallToolResult(content=[text("EUR/JPY 162.4"), text("USD/GBP 0.79")])
    assert mcp_result_to_tool_message("get_exchange_rate", result) == {
        "role": "tool",
        "name": "get_exchange_rate",
        "content": "EUR/JPY 162.4\nUSD/GBP 0.79",
    }


def test_mixed_content_is_marked_in_place():
    result = types.CallToolResult(
        content=[
            text("Here is the chart:"),
            types.ImageContent(type="image", data=b64(PNG_BYTES), mime_type="image/png"),
            types.AudioContent(type="audio", data=b64(WAV_BYTES), mime_type="audio/wav"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="file:///rates.csv", mime_type="text/csv", text="EUR,JPY,162.4"
                ),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="file:///rates.parquet", blob=b64(b"PAR1" * 8)
                ),
            ),
            types.ResourceLink(
                type="resource_link", name="history", uri="https://example.org/history.json",
                mime_type="application/json",
            ),
            text("Rates are mid-market."),
        ]
    )
    assert mcp_result_text(result) == "\n".join(
        [
            "Here is the chart:",
            "[image: image/png, 1028 bytes]",
            "[audio: audio/wav, 100 bytes]",
            "[resource: file:///rates.csv, text/csv]",
            "EUR,JPY,162.4",
            "[resource: file:///rates.parquet, 32 bytes]",
            "[resource link: history, https://example.org/history.json, application/json]",
            "Rates are mid-market.",
        ]
    )


def test_structured_content_is_added_as_compact_json():
    result = types.CallToolResult(
        content=[text("Rate found.")],
        structured_content={"base": "EUR", "quote": "JPY", "rate": 162.4, "note": "moyen ¥"},
    )
    assert mcp_result_text(result) == (
        'Rate found.\n{"base":"EUR","quote":"JPY","rate":162.4,"note":"moyen ¥"}'
    )


def test_the_servers_json_echo_is_replaced_not_repeated():
    structured = {"base": "EUR", "quote": "JPY", "rate": 162.4}
    echo = '{\n  "base": "EUR",\n  "quote": "JPY",\n  "rate": 162.4\n}'
    result = types.CallToolResult(
        content=[text(echo), text("Source: ECB")], structured_content=structured
    )
    assert mcp_result_text(result) == '{"base":"EUR","quote":"JPY","rate":162.4}\nSource: ECB'


def test_error_result_reads_as_a_tool_error():
    result = types.CallToolResult(
        content=[text("unknown currency 'XYZ'")], is_error=True
    )
    message = mcp_result_to_tool_message("get_exchange_rate", result, tool_call_id="call00001")
    assert message == {
        "role": "tool",
        "name": "get_exchange_rate",
        "content": "error: unknown currency 'XYZ'",
        "tool_call_id": "call00001",
    }


def test_error_result_without_content_still_says_it_failed():
    result = types.CallToolResult(content=[], is_error=True)
    assert mcp_result_text(result) == "error: the tool failed without saying why"


def test_empty_result_is_marked():
    assert mcp_result_text(types.CallToolResult(content=[])) == "[empty result]"


def test_a_wire_dict_of_the_same_shape_is_accepted():
    wire = {
        "content": [
            {"type": "text", "text": "chart:"},
            {"type": "image", "data": b64(b"\x00" * 10), "mimeType": "image/png"},
        ],
        "structuredContent": {"ok": True},
        "isError": False,
    }
    assert mcp_result_text(wire) == 'chart:\n[image: image/png, 10 bytes]\n{"ok":true}'


def test_a_malformed_dict_is_refused_by_the_sdk():
    with pytest.raises(ValidationError):
        mcp_result_text({"content": [{"type": "video", "url": "x"}]})


def test_something_else_entirely_is_a_type_error():
    with pytest.raises(TypeError, match="expected an MCP CallToolResult or a dict of one, got str"):
        mcp_result_text("162.4")


def test_data_that_is_not_base64_is_named():
    result = types.CallToolResult(
        content=[
            text("a"),
            types.ImageContent(type="image", data="not base64!", mime_type="image/png"),
        ]
    )
    expected = r"content block 1 \(image\) carries data that is not valid base64"
    with pytest.raises(ValueError, match=expected):
        mcp_result_text(result)


def test_a_result_that_is_not_final_is_refused():
    pending = types.CallToolResult(content=[text("...")], result_type="input_required")
    with pytest.raises(ValueError, match="the MCP result is not final"):
        mcp_result_text(pending)


def test_tool_call_id_must_be_a_str():
    with pytest.raises(TypeError, match="tool_call_id must be a str, got int"):
        mcp_result_to_tool_message("a", types.CallToolResult(content=[]), tool_call_id=1)


def test_missing_sdk_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.setitem(sys.modules, "mcp.types", None)
    with pytest.raises(ImportError) as caught:
        mcp_result_text({"content": []})
    assert "pip install 'templatestudio[mcp]'" in str(caught.value)


def test_mcp_result_renders_as_a_tool_turn(qwen3, gemma4):
    turn = parallel_tool_call_message(
        [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}]
    )
    result = types.CallToolResult(
        content=[text("Rate found."),
                 types.ImageContent(type="image", data=b64(PNG_BYTES), mime_type="image/png")],
        structured_content={"rate": 162.4},
    )
    message = mcp_result_to_tool_message(
        "get_exchange_rate", result, tool_call_id=turn["tool_calls"][0]["id"]
    )
    conversation = [{"role": "user", "content": "How many yen is one euro?"}, turn, message]
    assert_paired(conversation)
    body = 'Rate found.\n[image: image/png, 1028 bytes]\n{"rate":162.4}'
    assert f"<tool_response>\n{body}\n</tool_response>" in render(qwen3, conversation)
    assert "response:get_exchange_rate{" in render(gemma4, conversation)


def test_a_block_type_the_converter_does_not_know_is_named():
    # model_construct skips validation, as an object from a newer SDK would
    # arrive here: its block type is one this converter has never seen.
    result = types.CallToolResult.model_construct(
        content=[text("a"), {"type": "video", "uri": "file:///clip.mp4"}]
    )
    expected = r"content block 1 \(video\): this converter does not know content blocks"
    with pytest.warns(UserWarning), pytest.raises(ValueError, match=expected):
        mcp_result_text(result)
