"""read_file, write_file and edit_file against real files."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from mini_claude.tools.base import ToolContext
from mini_claude.tools.files import EditFileTool, WriteFileTool
from mini_claude.tools.read import MAX_LINE_CHARS, MAX_READ_OUTPUT_CHARS, ReadFileTool

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


async def read(ctx: ToolContext, path: str, **kw: object):
    return await ReadFileTool().run({"file_path": path, **kw}, ctx)


async def edit(ctx: ToolContext, path: str, old: str, new: str, **kw: object):
    return await EditFileTool().run({"file_path": path, "old_string": old, "new_string": new, **kw}, ctx)


def touch_changed(path: Path) -> None:
    """Change a file on disk so its recorded state no longer matches (mtime moved for sure)."""
    st = path.stat()
    path.write_bytes(path.read_bytes() + b"x")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


# ------------------------------------------------------------------------------------------------ read_file


async def test_read_numbers_lines_like_cat_n(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("alpha\nbeta\ngamma\n")
    result = await read(ctx, "a.txt")
    assert not result.is_error
    assert result.as_text() == "     1\talpha\n     2\tbeta\n     3\tgamma"


async def test_read_records_file_state(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("x\n")
    await read(ctx, "a.txt")
    st = path.stat()
    state = ctx.read_files[path]
    assert (state.mtime_ns, state.size) == (st.st_mtime_ns, st.st_size)


async def test_read_offset_and_limit_with_note(ctx: ToolContext) -> None:
    (ctx.cwd / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await read(ctx, "n.txt", offset=4, limit=3)
    text = result.as_text()
    assert text.splitlines()[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "(file has 10 lines; showing 4-6; use offset/limit to read more)" in text


async def test_read_default_limit_notes_long_file(ctx: ToolContext) -> None:
    (ctx.cwd / "long.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    text = (await read(ctx, "long.txt")).as_text()
    assert "  2000\t2000" in text
    assert "\t2001" not in text
    assert "(file has 2500 lines; showing 1-2000; use offset/limit to read more)" in text


async def test_read_counts_last_line_without_newline(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("a\nb\nc")
    text = (await read(ctx, "f.txt", limit=1)).as_text()
    assert "(file has 3 lines; showing 1-1;" in text
    assert (await read(ctx, "f.txt")).as_text() == "     1\ta\n     2\tb\n     3\tc"


async def test_read_offset_past_end_is_error(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("a\nb\n")
    result = await read(ctx, "f.txt", offset=5)
    assert result.is_error and "past the end" in result.as_text() and "2 lines" in result.as_text()


async def test_read_truncates_long_lines_and_strips_crlf(ctx: ToolContext) -> None:
    (ctx.cwd / "w.txt").write_bytes(b"x" * (MAX_LINE_CHARS + 500) + b"\r\nshort\r\n")
    lines = (await read(ctx, "w.txt")).as_text().splitlines()
    assert lines[0].startswith("     1\t" + "x" * MAX_LINE_CHARS)
    assert "line truncated" in lines[0] and len(lines[0]) < MAX_LINE_CHARS + 100
    assert lines[1] == "     2\tshort"


async def test_read_caps_total_output(ctx: ToolContext) -> None:
    (ctx.cwd / "big.txt").write_text(("y" * 1000 + "\n") * 1000)
    text = (await read(ctx, "big.txt")).as_text()
    assert len(text) < MAX_READ_OUTPUT_CHARS + 300
    assert "output capped" in text and "file has 1000 lines" in text


async def test_read_empty_file(ctx: ToolContext) -> None:
    (ctx.cwd / "e.txt").write_bytes(b"")
    result = await read(ctx, "e.txt")
    assert not result.is_error and "empty" in result.as_text()
    assert ctx.cwd / "e.txt" in ctx.read_files


async def test_read_missing_file(ctx: ToolContext) -> None:
    result = await read(ctx, "nope.txt")
    assert result.is_error and "does not exist" in result.as_text()


async def test_read_directory_suggests_glob(ctx: ToolContext) -> None:
    (ctx.cwd / "d").mkdir()
    result = await read(ctx, "d")
    assert result.is_error and "directory" in result.as_text() and "Glob" in result.as_text()


async def test_read_binary_is_error(ctx: ToolContext) -> None:
    (ctx.cwd / "b.bin").write_bytes(b"\x00\x01\x02binary\x00")
    result = await read(ctx, "b.bin")
    assert result.is_error and "binary" in result.as_text()
    assert ctx.cwd / "b.bin" not in ctx.read_files


async def test_read_png_returns_image_block(ctx: ToolContext) -> None:
    (ctx.cwd / "p.png").write_bytes(PNG_1PX)
    result = await read(ctx, "p.png")
    assert not result.is_error
    image = next(b for b in result.content if b["type"] == "image")
    assert image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == PNG_1PX


async def test_read_oversized_image_is_error(ctx: ToolContext) -> None:
    (ctx.cwd / "huge.png").write_bytes(PNG_1PX[:16] + b"\0" * (5 * 1024 * 1024 + 1))
    result = await read(ctx, "huge.png")
    assert result.is_error and "image" in result.as_text()


async def test_read_absolute_and_dotdot_paths_share_a_key(ctx: ToolContext) -> None:
    (ctx.cwd / "sub").mkdir()
    path = ctx.cwd / "f.txt"
    path.write_text("x\n")
    await read(ctx, "sub/../f.txt")
    assert list(ctx.read_files) == [path]
    await read(ctx, str(path))
    assert list(ctx.read_files) == [path]


async def test_read_bad_arguments(ctx: ToolContext) -> None:
    assert (await ReadFileTool().run({}, ctx)).is_error
    (ctx.cwd / "f.txt").write_text("x\n")
    assert (await read(ctx, "f.txt", limit=0)).is_error
    assert (await read(ctx, "f.txt", offset="x")).is_error


# ------------------------------------------------------------------------------------------------ write_file


async def test_write_creates_file_and_parents(ctx: ToolContext) -> None:
    result = await WriteFileTool().run({"file_path": "new/dir/f.txt", "content": "héllo\n"}, ctx)
    path = ctx.cwd / "new/dir/f.txt"
    assert not result.is_error
    assert result.as_text() == f"Wrote 7 bytes to {path} (created)"
    assert path.read_bytes() == "héllo\n".encode()
    assert ctx.read_files[path].size == 7


async def test_overwrite_requires_read(ctx: ToolContext) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("old\n")
    result = await WriteFileTool().run({"file_path": "f.txt", "content": "new\n"}, ctx)
    assert result.is_error and "Read" in result.as_text()
    assert path.read_text() == "old\n"
    await read(ctx, "f.txt")
    result = await WriteFileTool().run({"file_path": "f.txt", "content": "new\n"}, ctx)
    assert not result.is_error and "overwrote" in result.as_text()
    assert path.read_text() == "new\n"


async def test_overwrite_refused_when_changed_since_read(ctx: ToolContext) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("old\n")
    await read(ctx, "f.txt")
    touch_changed(path)
    result = await WriteFileTool().run({"file_path": "f.txt", "content": "new\n"}, ctx)
    assert result.is_error and "changed on disk" in result.as_text()


async def test_write_then_write_again_needs_no_read(ctx: ToolContext) -> None:
    tool = WriteFileTool()
    assert not (await tool.run({"file_path": "f.txt", "content": "1"}, ctx)).is_error
    assert not (await tool.run({"file_path": "f.txt", "content": "2"}, ctx)).is_error
    assert (ctx.cwd / "f.txt").read_text() == "2"


async def test_write_onto_directory_is_error(ctx: ToolContext) -> None:
    (ctx.cwd / "d").mkdir()
    assert (await WriteFileTool().run({"file_path": "d", "content": "x"}, ctx)).is_error


# ------------------------------------------------------------------------------------------------ edit_file


async def test_edit_unique_string_returns_diff(ctx: ToolContext) -> None:
    path = ctx.cwd / "f.py"
    path.write_text("def f():\n    return 1\n")
    await read(ctx, "f.py")
    result = await edit(ctx, "f.py", "return 1", "return 2")
    assert not result.is_error, result.as_text()
    assert path.read_text() == "def f():\n    return 2\n"
    text = result.as_text()
    assert "-    return 1" in text and "+    return 2" in text and "@@ -1,2 +1,2 @@" in text
    assert ctx.read_files[path].size == path.stat().st_size


async def test_edit_not_found(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("abc\n")
    await read(ctx, "f.txt")
    result = await edit(ctx, "f.txt", "xyz", "q")
    assert result.is_error and result.as_text().startswith(f"old_string not found in {ctx.cwd / 'f.txt'}")


async def test_edit_multiple_needs_replace_all(ctx: ToolContext) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("a = 1\nb = 1\nc = 1\n")
    await read(ctx, "f.txt")
    result = await edit(ctx, "f.txt", "= 1", "= 2")
    assert result.is_error
    assert result.as_text() == (
        f"old_string occurs 3 times in {path}; add context to make it unique or set replace_all"
    )
    assert path.read_text() == "a = 1\nb = 1\nc = 1\n"
    result = await edit(ctx, "f.txt", "= 1", "= 2", replace_all=True)
    assert not result.is_error and "3 occurrences" in result.as_text()
    assert path.read_text() == "a = 2\nb = 2\nc = 2\n"


async def test_edit_requires_prior_read(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("abc\n")
    result = await edit(ctx, "f.txt", "abc", "def")
    assert result.is_error and "Read" in result.as_text()
    assert (ctx.cwd / "f.txt").read_text() == "abc\n"


async def test_edit_refused_when_changed_on_disk(ctx: ToolContext) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("abc\n")
    await read(ctx, "f.txt")
    touch_changed(path)
    result = await edit(ctx, "f.txt", "abc", "def")
    assert result.is_error
    assert result.as_text() == f"{path} changed on disk since it was read; read it again"


async def test_edit_same_strings_and_missing_file(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("abc\n")
    await read(ctx, "f.txt")
    assert (await edit(ctx, "f.txt", "abc", "abc")).is_error
    assert (await edit(ctx, "f.txt", "", "x")).is_error
    missing = await edit(ctx, "gone.txt", "a", "b")
    assert missing.is_error and "does not exist" in missing.as_text()


async def test_read_edit_read_chain_exact_bytes(ctx: ToolContext) -> None:
    path = ctx.cwd / "crlf.txt"
    original = b"\xef\xbb\xbfone\r\ntwo\r\nthree \xff raw\r\nfour"
    path.write_bytes(original)
    first = await read(ctx, "crlf.txt")
    assert first.as_text().splitlines()[:2] == ["     1\tone", "     2\ttwo"]
    # The model copies lines as shown (no \r): the edit still matches the CRLF file.
    result = await edit(ctx, "crlf.txt", "two\nthree", "TWO\nTHREE")
    assert not result.is_error, result.as_text()
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\nTWO\r\nTHREE \xff raw\r\nfour"
    again = await read(ctx, "crlf.txt")
    assert again.as_text().splitlines()[1:3] == ["     2\tTWO", "     3\tTHREE \ufffd raw"]
    result = await edit(ctx, "crlf.txt", "four", "4\r\n")
    assert not result.is_error
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\nTWO\r\nTHREE \xff raw\r\n4\r\n"


async def test_edit_diff_line_numbers_deep_in_file(ctx: ToolContext) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("".join(f"l{i}\n" for i in range(1, 101)))
    await read(ctx, "f.txt")
    result = await edit(ctx, "f.txt", "l50\n", "fifty\n")
    text = result.as_text()
    assert "@@ -47,7 +47,7 @@" in text
    assert "-l50" in text and "+fifty" in text and "l46" not in text
