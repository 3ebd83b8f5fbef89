"""Every name a member of an archive may be extracted under, read at gate time the careful way (write_places.py
judges them), bounded in members, bytes and time. What cannot be listed for sure is unknown, with why.

- tar (GNU tar, bsdtar): listed with tarfile's `ignore_zeros`, so members after zero blocks count (`tar -i` and
  bsdtar extract them); a block that is neither a valid header nor zeros (GNU tar warns and skips to the next
  header it finds, extracting what follows) makes the listing unknown, as does a link or a device member. A file
  that is no tar at all but a zip is listed as a zip (bsdtar extracts those).
- zip (unzip): each member's name in the central directory and in its local header, and the name of an Info-ZIP
  Unicode Path extra field (0x7075: unzip extracts under it), each also with `\\` read as `/` (unzip does so for
  archives made on MS-DOS); an extra field that cannot be parsed, or a symbolic link member, is unknown.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import struct
import subprocess
import tarfile
import time
import zipfile
from typing import IO, Self, cast

from mini_claude.permissions.write_base import MAX_MEMBERS, MAX_SECONDS

__all__ = ["member_names"]

_UNICODE_PATH = 0x7075
_NOT_BAD = frozenset({"EOFHeaderError", "EmptyHeaderError"})  # a zero block; the end of the file
_LOCAL_HEADER = struct.Struct("<4s22xHH")


def member_names(archive: str, kind: str) -> tuple[list[str], str]:
    """The names the members of `archive` ("tar" or "zip") may be extracted under, and why they cannot all be
    known ("")."""
    return _zip_names(archive) if kind == "zip" else _tar_names(archive)


class _Bounded:
    """A read-only stream that stops reading past the time or byte budget (a compressed bomb is cut short)."""

    def __init__(self, raw: IO[bytes], deadline: float) -> None:
        self.raw, self.deadline, self.read_bytes = raw, deadline, 0

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self.deadline or self.read_bytes > (1 << 32):
            raise TimeoutError("the archive takes too long to list")
        data = self.raw.read(size if size >= 0 else 1 << 20)
        self.read_bytes += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True


def _noting_bad_headers(bad: list[str]) -> type[tarfile.TarInfo]:
    """A TarInfo that notes every block tarfile (with ignore_zeros) skips as a bad header in `bad`."""
    class Noting(tarfile.TarInfo):
        @classmethod
        def fromtarfile(cls, tarfile_: tarfile.TarFile) -> Self:
            try:
                return super().fromtarfile(tarfile_)
            except tarfile.HeaderError as exc:
                if type(exc).__name__ not in _NOT_BAD:
                    bad.append(str(exc))
                raise
    return Noting


def _tar_names(archive: str) -> tuple[list[str], str]:
    bad: list[str] = []
    names: list[str] = []
    try:
        with open(archive, "rb") as raw:
            magic = raw.read(6)
            raw.seek(0)
            deadline = time.monotonic() + MAX_SECONDS
            # every read passes through a reader that stops past the time budget: a member that inflates without
            # end, or a long run of blocks to skip, is cut short
            bounded = cast(IO[bytes], _Bounded(raw, deadline))
            source = _decompressing(magic, bounded)  # closed with `raw`
            with tarfile.open(fileobj=source, mode="r:", ignore_zeros=True, tarinfo=_noting_bad_headers(bad)) as tar:
                for member in tar:
                    if time.monotonic() > deadline:
                        return [], f"{archive} takes too long to list"
                    if member.issym() or member.islnk() or member.isdev():
                        return [], f"{archive} holds a link or a device ({member.name}), which may point anywhere"
                    names.append(member.name)
                    if len(names) > MAX_MEMBERS:
                        return [], f"{archive} holds more members than the gate lists ({MAX_MEMBERS})"
    except Exception as exc:  # whatever a hostile archive makes a reader raise, it is not listed
        if not names and zipfile.is_zipfile(archive):  # bsdtar extracts zip archives too
            return _zip_names(archive)
        return [], f"the gate cannot list the members of {archive} ({type(exc).__name__})"
    if bad and not names and zipfile.is_zipfile(archive):
        return _zip_names(archive)
    if bad:
        return [], (f"{archive} holds a block that is not a valid tar header ({bad[0]}); tar skips to the next "
                    "header it finds, so the gate cannot list what it extracts")
    other = _gnu_tar_disagrees(archive, names, deadline)
    if other:
        return [], other
    return names, ""


def _gnu_tar_disagrees(archive: str, names: list[str], deadline: float) -> str:
    """Why GNU tar's own listing of `archive` may extract a name Python's reader did not give ("" when it agrees).
    Two readers of one header chain can differ (chained GNU longname and pax headers: the last wins in GNU tar),
    so the program that will extract has the last word: a name it lists that the gate's list lacks, a listing that
    fails or takes too long, is an archive the gate cannot list."""
    tar = shutil.which("tar")
    if tar is None:
        return ""  # no GNU tar here: the command will not run it either
    try:
        listed = subprocess.run([tar, "--quoting-style=escape", "--ignore-zeros", "-tf", archive],
                                capture_output=True, timeout=max(0.5, deadline - time.monotonic() + 1.0),
                                stdin=subprocess.DEVNULL, env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"})
    except (OSError, subprocess.TimeoutExpired):
        return f"tar cannot list {archive} in time"
    if listed.returncode != 0:
        return f"tar's own listing of {archive} fails, so the gate cannot know what it extracts"
    known = {name.rstrip("/") for name in names}
    for line in listed.stdout.decode("utf-8", "surrogateescape").splitlines():
        if line.rstrip("/") not in known:
            return (f"tar reads a member of {archive} as {line!r}, which the gate's own reading did not list "
                    "(the two readers disagree about its headers)")
    return ""


def _decompressing(magic: bytes, raw: IO[bytes]) -> IO[bytes]:
    """`raw` read through the decompressor its first bytes name (GNU tar detects these itself), else as it is."""
    if magic[:2] == b"\x1f\x8b":
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw))
    if magic[:3] == b"BZh":
        return cast(IO[bytes], bz2.BZ2File(raw))
    if magic == b"\xfd7zXZ\x00":
        return cast(IO[bytes], lzma.LZMAFile(raw))
    return raw


def _zip_names(archive: str) -> tuple[list[str], str]:
    path = archive if os.path.exists(archive) or not os.path.exists(archive + ".zip") else archive + ".zip"
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            return [], f"{archive} holds more members than the gate lists ({MAX_MEMBERS})"
        names: list[str] = []
        with open(path, "rb") as raw:
            for info in infos:
                if (info.external_attr >> 16) & 0o170000 == 0o120000:
                    return [], f"{archive} holds a symbolic link ({info.filename}), which may point anywhere"
                local_name, local_extra = _local_header(raw, info)
                found = [info.filename, local_name, *_unicode_paths(info.extra), *_unicode_paths(local_extra)]
                names += [form for name in found for form in dict.fromkeys((name, name.replace("\\", "/")))]
    except (OSError, zipfile.BadZipFile, ValueError, UnicodeDecodeError) as exc:
        return [], f"the gate cannot list the members of {archive} ({type(exc).__name__}: {exc})"
    return list(dict.fromkeys(names)), ""


def _local_header(raw: IO[bytes], info: zipfile.ZipInfo) -> tuple[str, bytes]:
    """The name and the extra field of `info`'s local header."""
    raw.seek(info.header_offset)
    head = raw.read(_LOCAL_HEADER.size)
    if len(head) != _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"no local header for {info.filename}")
    flags = struct.unpack("<H", head[6:8])[0]
    name_length, extra_length = _LOCAL_HEADER.unpack(head)[1:]
    name, extra = raw.read(name_length), raw.read(extra_length)
    if len(name) != name_length or len(extra) != extra_length:
        raise zipfile.BadZipFile(f"the local header of {info.filename} is cut short")
    return name.decode("utf-8" if flags & 0x800 else "cp437"), extra


def _unicode_paths(extra: bytes) -> list[str]:
    """The names of the Info-ZIP Unicode Path fields (0x7075) in a zip extra field; ValueError when the extra
    field cannot be parsed (a length past its end, an unknown version of the field, a name not UTF-8)."""
    names: list[str] = []
    k = 0
    while k + 4 <= len(extra):
        tag, size = struct.unpack("<HH", extra[k:k + 4])
        data = extra[k + 4:k + 4 + size]
        if len(data) != size:
            raise ValueError("an extra field runs past its end")
        if tag == _UNICODE_PATH:
            if size < 5 or data[0] != 1:
                raise ValueError("a Unicode Path extra field of an unknown version")
            names.append(data[5:].decode("utf-8"))
        k += 4 + size
    if extra[k:].strip(b"\x00"):  # zipalign pads with zero bytes
        raise ValueError("an extra field ends in a partial entry")
    return names
