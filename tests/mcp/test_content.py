"""convert_result: every MCP content type → Anthropic blocks, files for binaries, the output limit, speed."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.content import (
    CHARS_PER_TOKEN,
    DEFAULT_MAX_OUTPUT_TOKENS,
    MAX_IMAGE_BYTES,
    ConvertedResult,
    convert_result,
    output_token_limit,
)
from mini_claude.mcp.protocol import CallToolResult

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 20
GIF = b"GIF89a" + b"\x00" * 20
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def convert(tmp_path: Path, content: list[dict[str, Any]], *, structured: Any = None, is_error: bool = False,
            max_tokens: int | None = None) -> ConvertedResult:
    result = CallToolResult(content=content, structured_content=structured, is_error=is_error,
                            raw={"content": content})
    return convert_result(result, spill_dir=tmp_path / "spill", stem="mcp__srv__tool", max_output_tokens=max_tokens)


def texts(converted: ConvertedResult) -> list[str]:
    return [b["text"] for b in converted.blocks if b["type"] == "text"]


def saved_path(line: str) -> Path:
    return Path(line.rsplit(" saved to ", 1)[1].rstrip("]"))


def test_text_blocks_and_is_error(tmp_path: Path) -> None:
    out = convert(tmp_path, [{"type": "text", "text": "hello"}, {"type": "text", "text": "  "},
                             {"type": "text", "text": "world", "annotations": {"priority": 1}}], is_error=True)
    assert out.blocks == [{"type": "text", "text": "hello"}, {"type": "text", "text": "world"}]
    assert out.is_error and out.warnings == []


def test_empty_result_still_has_a_block(tmp_path: Path) -> None:
    out = convert(tmp_path, [])
    assert out.blocks == [{"type": "text", "text": "(no content)"}] and not out.is_error


@pytest.mark.parametrize(("data", "mime"), [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"),
                                            (WEBP, "image/webp")])
def test_supported_images_become_image_blocks(tmp_path: Path, data: bytes, mime: str) -> None:
    out = convert(tmp_path, [{"type": "image", "data": b64(data), "mimeType": mime}])
    assert out.blocks == [{"type": "image", "source": {"type": "base64", "media_type": mime, "data": b64(data)}}]


def test_image_mime_is_taken_from_the_bytes(tmp_path: Path) -> None:
    # a server that mislabels (or omits) the type must not make the model API reject the whole turn
    wrapped = "\n".join(b64(PNG)[i:i + 20] for i in range(0, len(b64(PNG)), 20))
    out = convert(tmp_path, [{"type": "image", "data": b64(PNG), "mimeType": "image/jpeg"},
                             {"type": "image", "data": "data:image/png;base64," + wrapped}])
    for block in out.blocks:
        assert block["source"]["media_type"] == "image/png" and block["source"]["data"] == b64(PNG)


def test_unsupported_image_goes_to_a_file(tmp_path: Path) -> None:
    svg = b"<svg xmlns='http://www.w3.org/2000/svg'/>"
    out = convert(tmp_path, [{"type": "image", "data": b64(svg), "mimeType": "image/svg+xml"}])
    (line,) = texts(out)
    assert "image/svg+xml" in line and f"{len(svg)} bytes" in line
    path = saved_path(line)
    assert path.read_bytes() == svg and path.suffix == ".svg" and path.parent == tmp_path / "spill"


def test_oversized_image_goes_to_a_file(tmp_path: Path) -> None:
    big = PNG + b"\x00" * MAX_IMAGE_BYTES
    out = convert(tmp_path, [{"type": "image", "data": b64(big), "mimeType": "image/png"}])
    (line,) = texts(out)
    assert "too large" in line and saved_path(line).read_bytes() == big


def test_invalid_base64_is_described(tmp_path: Path) -> None:
    out = convert(tmp_path, [{"type": "image", "data": "***", "mimeType": "image/png"},
                             {"type": "audio", "mimeType": "audio/wav"}])
    assert texts(out) == ["[image: invalid or missing base64 data (image/png)]",
                          "[audio: invalid or missing base64 data (audio/wav)]"]


def test_audio_goes_to_a_file(tmp_path: Path) -> None:
    wav = b"RIFF\x00\x00\x00\x00WAVEfmt "
    out = convert(tmp_path, [{"type": "audio", "data": b64(wav), "mimeType": "audio/wav"}])
    (line,) = texts(out)
    assert line.startswith("[audio (audio/wav, 16 bytes) saved to ")
    assert saved_path(line).read_bytes() == wav and saved_path(line).suffix == ".wav"


def test_embedded_resources(tmp_path: Path) -> None:
    out = convert(tmp_path, [
        {"type": "resource", "resource": {"uri": "file:///a.py", "mimeType": "text/x-python", "text": "x = 1"}},
        {"type": "resource", "resource": {"uri": "demo://b", "mimeType": "application/pdf", "blob": b64(b"%PDF")}},
        {"type": "resource", "resource": {"uri": "demo://img", "mimeType": "image/png", "blob": b64(PNG)}},
        {"type": "resource", "resource": {"uri": "demo://empty"}},
        {"type": "resource", "resource": {"uri": "demo://t", "mimeType": "text/plain", "blob": b64("héllo".encode())}},
        {"type": "resource", "resource": {"uri": "demo://bin", "mimeType": "text/plain", "blob": b64(b"\xff\xfe")}},
        {"type": "resource"},
    ])
    lines = texts(out)
    assert lines[0] == "[resource file:///a.py (text/x-python)]\nx = 1"
    assert lines[1].startswith("[resource demo://b (application/pdf, 4 bytes) saved to ")
    assert saved_path(lines[1]).read_bytes() == b"%PDF"
    assert lines[2] == f"[resource demo://img (image/png, {len(PNG)} bytes) follows]"
    assert {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}} in out.blocks
    assert lines[3] == "[resource demo://empty: no text or blob]"
    assert lines[4] == "[resource demo://t (text/plain)]\nhéllo"
    assert lines[5].startswith("[resource demo://bin (text/plain, 2 bytes) saved to ")
    assert lines[6].startswith("[embedded resource without contents")


def test_resource_links(tmp_path: Path) -> None:
    out = convert(tmp_path, [
        {"type": "resource_link", "uri": "file:///src/main.rs", "name": "main.rs", "mimeType": "text/x-rust",
         "description": "Primary application entry point"},
        {"type": "resource_link", "uri": "demo://x"},
    ])
    assert texts(out) == ["resource link: main.rs <file:///src/main.rs> (text/x-rust) – Primary application entry point",
                          "resource link: <demo://x>"]


def test_structured_content_added_unless_duplicated(tmp_path: Path) -> None:
    data = {"temperature": 22.5, "conditions": "Partly cloudy"}
    alone = convert(tmp_path, [], structured=data)
    assert texts(alone) == [json.dumps(data)]
    duplicated = convert(tmp_path, [{"type": "text", "text": json.dumps(data, indent=2)}], structured=data)
    assert texts(duplicated) == [json.dumps(data, indent=2)]
    different = convert(tmp_path, [{"type": "text", "text": "Weather report"}], structured=data)
    assert texts(different) == ["Weather report", json.dumps(data)]
    # one-field wrappers that carry the text (FastMCP {"result": 42}, filesystem {"content": text})
    assert texts(convert(tmp_path, [{"type": "text", "text": "42"}], structured={"result": 42})) == ["42"]
    assert texts(convert(tmp_path, [{"type": "text", "text": "a\nb"}], structured={"content": "a\nb"})) == ["a\nb"]


def test_unknown_and_malformed_blocks_never_crash(tmp_path: Path) -> None:
    out = convert(tmp_path, [{"type": "hologram", "data": "x" * 1000}, {"no": "type"},
                             {"type": "text", "text": 5}])
    lines = texts(out)
    assert lines[0].startswith("[unsupported MCP content type 'hologram': {") and len(lines[0]) < 400
    assert lines[1].startswith("[unsupported MCP content type None")
    assert lines[2].startswith("[text block without a text string")


def test_output_over_the_limit_goes_to_a_file(tmp_path: Path) -> None:
    body = "".join(f"line {i}\n" for i in range(20_000))  # ~170 KB
    out = convert(tmp_path, [{"type": "text", "text": body}, {"type": "image", "data": b64(PNG),
                                                             "mimeType": "image/png"}], max_tokens=1000)
    assert len(out.warnings) == 1 and "1000-token limit" in out.warnings[0]
    text_block = out.blocks[0]["text"]
    assert text_block.startswith("line 0\n") and "characters omitted" in text_block
    assert len(text_block) < 1000 * CHARS_PER_TOKEN
    path = Path(text_block.rsplit("saved to ", 1)[1].split(" ")[0])
    assert path.read_text() == body
    assert out.blocks[1]["type"] == "image"  # images are kept


def test_output_limit_default_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAX_MCP_OUTPUT_TOKENS", raising=False)
    assert output_token_limit() == DEFAULT_MAX_OUTPUT_TOKENS == 25_000
    under = "x" * (DEFAULT_MAX_OUTPUT_TOKENS * CHARS_PER_TOKEN)
    assert convert(tmp_path, [{"type": "text", "text": under}]).warnings == []
    assert convert(tmp_path, [{"type": "text", "text": under + "y"}]).warnings
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "10")
    assert output_token_limit() == 10
    assert convert(tmp_path, [{"type": "text", "text": "z" * 41}]).warnings
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "junk")
    assert output_token_limit() == DEFAULT_MAX_OUTPUT_TOKENS


def test_40_mb_is_fast(tmp_path: Path) -> None:
    line = "0123456789abcdef" * 4 + "\n"
    big = line * (40 * 1024 * 1024 // len(line))
    blob = b64(b"\x00" * (8 * 1024 * 1024))
    content = [{"type": "text", "text": big}, {"type": "resource", "resource": {"uri": "x://blob", "blob": blob}},
               {"type": "text", "text": '{"a": 1}'}]
    began = time.process_time()  # this process's CPU (~0.4 s here): a loaded machine's stalls do not count in it
    out = convert(tmp_path, content, structured={"rows": [1, 2, 3]})
    elapsed = time.process_time() - began
    print(f"40 MB converted in {elapsed:.2f} s of CPU")
    assert elapsed < 3, elapsed
    assert out.warnings and len(out.blocks[0]["text"]) < 10_000


def test_spill_dir_not_writable(tmp_path: Path) -> None:
    blocker = tmp_path / "spill"
    blocker.write_text("a file where the directory should be")
    out = convert(tmp_path, [{"type": "audio", "data": b64(b"abc"), "mimeType": "audio/mpeg"},
                             {"type": "text", "text": "still here"}])
    assert "could not be saved" in texts(out)[0] and texts(out)[1] == "still here"
    assert out.warnings


def test_oversized_output_with_unwritable_spill_dir(tmp_path: Path) -> None:
    (tmp_path / "spill").write_text("a file where the directory should be")
    out = convert(tmp_path, [{"type": "text", "text": "x" * 10_000}, "junk"], max_tokens=100)  # type: ignore[list-item]
    assert len(out.blocks) == 1 and "saving it failed" in out.blocks[0]["text"]
    assert len(out.blocks[0]["text"]) < 1_000 and "could not be saved" in out.warnings[0]
