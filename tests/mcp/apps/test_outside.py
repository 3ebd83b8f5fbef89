"""What a view asks past its page (mini_claude/mcp/apps/outside.py): the link checks, and the files a
`ui/download-file` names — their names made safe, their bytes decoded or read from the view's own server, bounded,
and written next to (never over, never through) what is already there."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any

import pytest

from mini_claude.errors import ViewRefusedError
from mini_claude.mcp.apps.outside import (
    MAX_FILES,
    FileToSave,
    checked_link,
    download_folder,
    download_question,
    files_to_save,
    save_files,
)


def embedded(uri: str, *, text: str | None = None, blob: bytes | None = None, mime: str = "text/plain") -> dict:
    resource: dict[str, Any] = {"uri": uri, "mimeType": mime}
    if text is not None:
        resource["text"] = text
    if blob is not None:
        resource["blob"] = base64.b64encode(blob).decode()
    return {"type": "resource", "resource": resource}


async def nothing_to_read(uri: str) -> list[dict[str, Any]]:
    raise AssertionError(f"nothing should be read, not {uri}")


@pytest.mark.parametrize(("url", "why"), [
    ("javascript:alert(1)", "only http(s)"), ("https://a.example/ b", "only http(s)"),
    ("https://bank.example@evil.example/", "without a user name"), ("https://ex\u202eample.com/", "printable ASCII"),
    ("https://" + "a" * 5000 + ".example/", "too long"), ("https:///nohost", "name its host"),
])
def test_links_a_view_may_not_ask_to_open(url: str, why: str) -> None:
    with pytest.raises(ViewRefusedError, match=re.escape(why)):
        checked_link(url)


def test_a_plain_link_is_what_opens() -> None:
    assert checked_link("https://example.com/a?b=c#d") == "https://example.com/a?b=c#d"


async def test_embedded_text_and_blobs_with_safe_names() -> None:
    files = await files_to_save({"contents": [
        embedded("ui://board/report%20Q3.csv", text="a,b\n", mime="text/csv"),
        embedded("ui://board/../../.bashrc", text="x"),
        embedded("ui://board/", blob=b"\x89PNG", mime="image/png"),
        embedded("file:///etc/\u202egnp.exe", text="y"),
    ]}, nothing_to_read)
    assert [(f.name, f.data, f.mime) for f in files] == [
        ("report_Q3.csv", b"a,b\n", "text/csv"), ("bashrc", b"x", "text/plain"), ("download.png", b"\x89PNG", "image/png"),
        ("gnp.exe", b"y", "text/plain")]


async def test_a_link_is_read_from_the_views_own_server() -> None:
    read: list[str] = []

    async def reader(uri: str) -> list[dict[str, Any]]:
        read.append(uri)
        return [{"uri": uri, "mimeType": "application/pdf", "blob": base64.b64encode(b"%PDF").decode()}]

    [file] = await files_to_save({"contents": [{"type": "resource_link", "uri": "ui://docs/a", "name": "Plan.pdf"}]},
                                 reader)
    assert read == ["ui://docs/a"] and (file.name, file.data, file.mime) == ("Plan.pdf", b"%PDF", "application/pdf")


@pytest.mark.parametrize(("params", "why"), [
    ({}, "needs contents"), ({"contents": []}, "needs contents"), ({"contents": ["x"]}, "must be an object"),
    ({"contents": [{"type": "image", "data": "x"}]}, "resource or a resource_link"),
    ({"contents": [{"type": "resource", "resource": {"uri": "u"}}]}, "text or blob"),
    ({"contents": [{"type": "resource", "resource": {"uri": "u", "blob": "%%%"}}]}, "not valid base64"),
    ({"contents": [embedded(f"ui://x/{n}", text="") for n in range(MAX_FILES + 1)]}, "at most"),
])
async def test_bad_requests_are_refused(params: dict[str, Any], why: str) -> None:
    with pytest.raises(ViewRefusedError, match=why):
        await files_to_save(params, nothing_to_read)


async def test_too_much_together_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from mini_claude.mcp.apps import outside

    monkeypatch.setattr(outside, "MAX_DOWNLOAD_BYTES", 10)
    with pytest.raises(ViewRefusedError, match="together"):
        await files_to_save({"contents": [embedded("ui://a", text="123456"), embedded("ui://b", text="123456")]},
                            nothing_to_read)


def test_files_land_next_to_what_is_there_never_over_it_nor_through_a_link(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("mine")
    (tmp_path / "target").write_text("secret")
    os.symlink(tmp_path / "target", tmp_path / "b.txt")  # a planted link where the file would go
    saved = save_files([FileToSave("a.csv", b"1", "text/csv"), FileToSave("a.csv", b"2", "text/csv"),
                        FileToSave("b.txt", b"3", "text/plain"), FileToSave("README", b"4", "text/plain")], tmp_path)
    assert [p.name for p in saved] == ["a (1).csv", "a (2).csv", "b (1).txt", "README"]
    assert (tmp_path / "a.csv").read_text() == "mine" and (tmp_path / "target").read_text() == "secret"
    assert [p.read_bytes() for p in saved] == [b"1", b"2", b"3", b"4"]
    assert not any(os.stat(p).st_mode & 0o111 for p in saved)  # never executable


def test_the_folder_and_the_question(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert download_folder(home) == home / "Downloads" and (home / "Downloads").is_dir()  # made, never the project
    assert download_folder(home) == home / "Downloads"  # and found again
    with pytest.raises(ViewRefusedError, match="cannot be made"):
        download_folder(tmp_path / "no-such-home")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "Downloads").write_text("a file")
    with pytest.raises(ViewRefusedError, match="no folder to save in"):
        download_folder(tmp_path / "odd")
    question = download_question("The view of s/t", [FileToSave("a.csv", b"x" * 2048, "text/csv")], home)
    assert question == f"The view of s/t asks to save a.csv (2 KB) to {home}. Save it?"
