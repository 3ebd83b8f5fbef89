"""What a view asks that reaches past its page, and is asked of the user first: opening a link (`ui/open-link`) and
saving a file (`ui/download-file`). This module checks the request and does the work; the yes or no comes from
the front end (`confirm`, False where nobody can answer).

A link (`checked_link`) must be http(s), printable ASCII (no bidi override, C1 control or look-alike letter; an
international name comes as punycode), at most 4,096 characters, and name its host without a `user@` before it
(`https://bank.example@evil.example/` opens evil.example): what the user is asked about is what opens.

A download (`files_to_save`, `save_files`): `contents` is 1..`MAX_FILES` items, each an embedded resource
(`{"type": "resource", "resource": {uri, mimeType, text | blob}}`) or a resource link (`{"type": "resource_link",
uri, name, mimeType}`) that the host fetches from the view's own server (`resources/read`, nowhere else). Together
at most `MAX_DOWNLOAD_BYTES`. Each file's name comes from the link's `name` or the last part of its `uri`, cut to
letters, digits, `.`, `_` and `-` (no leading dot, at most 100 characters; "download" and an extension from its
MIME type when nothing is left), and it goes to `~/Downloads` of the user's real home (made when missing, as a
browser does; never the project folder, never a HOME a repository's settings set), never over an existing file
(`name (1).ext`, …), created with O_EXCL, never executable. The user is asked once for all the files, with each
name, size and the folder — the folder as it really is (every link in its path resolved: a `Downloads` that is a
link elsewhere is named by where it leads), and the files are written into that very folder (`save_files(...,
same_as=)`: opened once, its identity checked against what was asked about, each file created relative to it), so
a link swapped between the question and the write cannot move them. The result is `{}` when saved,
`{"isError": true}` when the user said no or nobody could answer (the spec's answer for a download that did not
happen).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import mimetypes
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from mini_claude.errors import ViewRefusedError

__all__ = ["MAX_DOWNLOAD_BYTES", "MAX_FILES", "FileToSave", "checked_link", "download_folder", "download_question",
           "files_to_save", "folder_identity", "save_files"]

MAX_LINK_CHARS = 4096
MAX_FILES = 16
MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024
_MAX_NAME_CHARS = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_TOO_MUCH = f"the files are over {MAX_DOWNLOAD_BYTES // (1024 * 1024)} MB together"

ReadResource = Callable[[str], Awaitable[list[dict[str, Any]]]]


def checked_link(url: str) -> str:
    """`url` when a view may ask to open it (see the module docstring); ViewRefusedError with the reason if not."""
    if not url.lower().startswith(("http://", "https://")) or any(c.isspace() or ord(c) < 32 for c in url):
        raise ViewRefusedError("only http(s) links are opened")
    if len(url) > MAX_LINK_CHARS:
        raise ViewRefusedError("the link is too long")
    if not all("!" <= c <= "~" for c in url):
        raise ViewRefusedError("a link must be printable ASCII (percent-encode the rest; punycode for names)")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise ViewRefusedError("the link is not a valid URL") from None
    if not host or "@" in parts.netloc:
        raise ViewRefusedError("a link must name its host, without a user name or password before it")
    return url


@dataclass(frozen=True)
class FileToSave:
    name: str  # already safe as a file name
    data: bytes
    mime: str


async def files_to_save(params: dict[str, Any], read: ReadResource) -> list[FileToSave]:
    """The files a `ui/download-file` request names, their links read through `read` (the view's own server)."""
    contents = params.get("contents")
    if not isinstance(contents, list) or not contents:
        raise ViewRefusedError("ui/download-file needs contents: a list of resources", code=-32602)
    if len(contents) > MAX_FILES:
        raise ViewRefusedError(f"at most {MAX_FILES} files at once", code=-32602)
    files: list[FileToSave] = []
    total = 0
    for item in contents:
        found = await _one_file(item, read)
        total += len(found.data)
        if total > MAX_DOWNLOAD_BYTES:
            raise ViewRefusedError(_TOO_MUCH)
        files.append(found)
    return files


async def _one_file(item: Any, read: ReadResource) -> FileToSave:
    if not isinstance(item, dict):
        raise ViewRefusedError("each content item must be an object", code=-32602)
    if item.get("type") == "resource" and isinstance(item.get("resource"), dict):
        resource, name = item["resource"], None
    elif item.get("type") == "resource_link" and isinstance(item.get("uri"), str):
        read_back = await read(item["uri"])
        resource = next((r for r in read_back if isinstance(r, dict) and ("text" in r or "blob" in r)), None)
        if resource is None:
            raise ViewRefusedError(f"{item['uri'][:200]} has no contents to save")
        name = item.get("name") if isinstance(item.get("name"), str) else None
        resource = {**resource, "uri": item["uri"], "mimeType": resource.get("mimeType") or item.get("mimeType")}
    else:
        raise ViewRefusedError("each content item must be a resource or a resource_link", code=-32602)
    mime = resource.get("mimeType") if isinstance(resource.get("mimeType"), str) else "application/octet-stream"
    if isinstance(resource.get("text"), str):
        if len(resource["text"]) > MAX_DOWNLOAD_BYTES:  # at least a byte a character: refused before encoding
            raise ViewRefusedError(_TOO_MUCH)
        data = resource["text"].encode("utf-8", "surrogatepass")
    elif isinstance(resource.get("blob"), str):
        if len(resource["blob"]) // 4 * 3 > MAX_DOWNLOAD_BYTES + 2:  # what it decodes to, before decoding it
            raise ViewRefusedError(_TOO_MUCH)
        try:
            data = base64.b64decode(resource["blob"], validate=True)
        except (binascii.Error, ValueError):
            raise ViewRefusedError("a blob is not valid base64", code=-32602) from None
    else:
        raise ViewRefusedError("a resource to save needs text or blob", code=-32602)
    uri = resource.get("uri") if isinstance(resource.get("uri"), str) else ""
    return FileToSave(_file_name(name, uri, mime), data, mime)


def _file_name(name: str | None, uri: str, mime: str) -> str:
    """A safe file name from the link's name or the uri's last part (see the module docstring)."""
    raw = name or unquote(urlsplit(uri).path.rsplit("/", 1)[-1] if uri else "")
    safe = _UNSAFE.sub("_", raw).strip("._-")[:_MAX_NAME_CHARS].strip("._-")
    if not safe:
        safe = "download" + (mimetypes.guess_extension(mime.split(";")[0].strip()) or "")
    return safe


def download_folder(home: Path) -> Path:
    """Where downloads go: `~/Downloads` of the user's real home (never a folder a repository could choose: not the
    project, not a HOME its settings set), made when missing as a browser would; links resolved, so the question
    names where the files really go. ViewRefusedError when it cannot be made."""
    downloads = home / "Downloads"
    try:
        downloads.mkdir(mode=0o755, exist_ok=True)
        resolved = downloads.resolve(strict=True)
    except OSError as exc:
        raise ViewRefusedError(f"no folder to save in: {downloads} cannot be made ({exc.strerror or exc})") from None
    if not resolved.is_dir():
        raise ViewRefusedError(f"no folder to save in: {downloads} is not a folder")
    return resolved


def download_question(who: str, files: list[FileToSave], folder: Path) -> str:
    """The one question for all the files: each name and size, and the folder."""
    listed = ", ".join(f"{f.name} ({_size(len(f.data))})" for f in files)
    return f"{who} asks to save {listed} to {folder}. Save {'it' if len(files) == 1 else 'them'}?"


def folder_identity(folder: Path) -> tuple[int, int]:
    """The folder's device and inode, taken when the user is asked (`save_files(..., same_as=)` checks them)."""
    found = os.stat(folder)
    return found.st_dev, found.st_ino


def save_files(files: list[FileToSave], folder: Path, *, same_as: tuple[int, int] | None = None) -> list[Path]:
    """Write each file into `folder` under a name no file has yet (O_EXCL: never over one, never through a
    link); returns where each went. `same_as` (`folder_identity` at question time): the folder opened now must be
    that one (a link in its path swapped since: refused, nothing written); each file is created relative to it."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise ViewRefusedError(f"cannot open {folder}: {exc.strerror or exc}") from None
    try:
        found = os.fstat(dir_fd)
        if same_as is not None and (found.st_dev, found.st_ino) != same_as:
            raise ViewRefusedError(f"{folder} is no longer the folder the user was asked about; nothing was saved")
        saved: list[Path] = []
        for file in files:
            try:
                saved.append(_save_one(file, folder, dir_fd))
            except ViewRefusedError as exc:
                if not saved:
                    raise
                done = ", ".join(str(path) for path in saved)  # what was saved before the failure stays: named
                raise ViewRefusedError(f"{exc.reason} (saved before it: {done})") from None
        return saved
    finally:
        os.close(dir_fd)


def _save_one(file: FileToSave, folder: Path, dir_fd: int) -> Path:
    stem, dot, ext = file.name.rpartition(".") if "." in file.name else (file.name, "", "")
    for n in range(1000):
        name = file.name if n == 0 else f"{stem} ({n}){dot}{ext}"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dir_fd)
        except FileExistsError:
            continue
        except OSError as exc:
            raise ViewRefusedError(f"cannot create {folder / name}: {exc.strerror or exc}") from None
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(file.data)
        except OSError as exc:  # a full disk, a file size limit: no half file is left behind
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            raise ViewRefusedError(f"cannot write {folder / name}: {exc.strerror or exc}") from None
        return folder / name
    raise ViewRefusedError(f"{folder} already has 1,000 files named like {file.name}")


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / (1024 * 1024):.1f} MB"
