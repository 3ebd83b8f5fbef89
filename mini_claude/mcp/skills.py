"""MCP-served skills (the skills extension, SEP-2640): list a server's skills, fetch their files lazily, verify.

A server that declares `capabilities.extensions["io.modelcontextprotocol/skills"]` answers `skills/list` with
entries `{uri, frontmatter, resources: [{uri, digest, size}]}`: `uri` is the skill's `SKILL.md`, `frontmatter`
its YAML front matter as JSON, `resources` every file of the skill with its SHA-256 digest (`sha256:<64 lowercase
hex>` of the raw bytes) and byte size. The files themselves are ordinary resources, read with `resources/read`.

The rules this module enforces (the SEP's "Integrity and verification"):

* Nothing is read ahead of need: `list_skills()` reads no file; `McpSkill.load()` reads `SKILL.md`,
  `McpSkill.read_file()` one supporting file.
* Every file read is checked against the listed entry before it is used: its size, then its digest; a
  `SKILL.md` also has its front matter parsed and compared field by field with the entry's `frontmatter`.
* A failed check refuses the skill: `SkillVerificationError`, and the `McpSkill` reads nothing more (every later
  call raises the same refusal). A file the entry does not list is never read (it is not part of the skill).
* Skills whose entry omits `resources` (dynamically generated, so unverifiable) are declined, as the SEP allows;
  so are entries that break the SEP's shape rules (reported by `SkillEntry.problem` at load time).

`list_skills()` calls `skills/list` only when the server declared the extension, and follows `nextCursor`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, NoReturn

from mini_claude.errors import FrontmatterError, SkillVerificationError
from mini_claude.frontmatter import parse_frontmatter, same_value
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.lists import MAX_LIST_PAGES

__all__ = [
    "MAX_SKILL_FILES",
    "MAX_SKILL_TOTAL_BYTES",
    "SKILLS_EXTENSION",
    "McpSkill",
    "SkillEntry",
    "SkillFile",
    "list_skills",
    "sha256_digest",
    "supports_skills",
]

log = logging.getLogger(__name__)

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE_NAME = "SKILL.md"
MAX_SKILL_FILES = 512  # the SEP's limits on one entry: resources per skill, and their total size
MAX_SKILL_TOTAL_BYTES = 16 * 1024 * 1024
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def sha256_digest(data: bytes) -> str:
    """The SEP's digest form: `sha256:` + 64 lowercase hex digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class SkillFile:
    """One listed file of a skill. `size` is None when the server did not list one (digest still checked)."""

    uri: str
    digest: str
    size: int | None


@dataclass(frozen=True)
class SkillEntry:
    """One `skills/list` entry. `files` is None when the entry lists no `resources` (a dynamic skill);
    `problem` says why the entry cannot be loaded (None: it can be tried)."""

    server: str
    uri: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...] | None
    problem: str | None = None

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    @property
    def root(self) -> str:
        """The skill's directory URI: `uri` without `/SKILL.md`."""
        return self.uri[: -len(SKILL_FILE_NAME) - 1]

    @property
    def path(self) -> str:
        """The skill path (`acme/billing/refunds`): the root without its scheme."""
        root = self.root
        return root.split("://", 1)[1] if "://" in root else root

    def listed(self, uri: str) -> SkillFile | None:
        for item in self.files or ():
            if item.uri == uri:
                return item
        return None

    def resolve(self, uri_or_relpath: str) -> str:
        """A file of this skill as an absolute URI: a URI is taken as is, a relative path (`references/X.md`)
        resolves against the skill's root. Raises ValueError when the result is outside the skill."""
        target = uri_or_relpath.strip()
        if "://" not in target:
            rel = posixpath.normpath(target.lstrip("/")) if target else ""
            if rel in ("", ".") or rel == ".." or rel.startswith("../"):
                raise ValueError(f"{uri_or_relpath!r} is not a file inside skill {self.name!r}")
            target = f"{self.root}/{rel}"
        if target != self.uri and not target.startswith(self.root + "/"):
            raise ValueError(f"{uri_or_relpath!r} is not a file of skill {self.name!r} ({self.root}/...)")
        if "/../" in target[len(self.root):] or target.endswith("/.."):
            raise ValueError(f"{uri_or_relpath!r} is not a file inside skill {self.name!r}")
        return target

    @classmethod
    def from_wire(cls, raw: Any, *, server: str) -> SkillEntry | None:
        """An entry from a `skills/list` item; None (logged) when it lacks a usable `uri` or `frontmatter`."""
        if not isinstance(raw, dict):
            log.warning("%s: skills/list: ignoring an entry that is not an object: %.200r", server, raw)
            return None
        uri, frontmatter = raw.get("uri"), raw.get("frontmatter")
        if not isinstance(uri, str) or not uri.endswith("/" + SKILL_FILE_NAME) or not isinstance(frontmatter, dict):
            log.warning("%s: skills/list: ignoring an entry without a SKILL.md uri and frontmatter: %.200r",
                        server, raw)
            return None
        name, description = frontmatter.get("name"), frontmatter.get("description")
        if not isinstance(name, str) or not name or not isinstance(description, str):
            log.warning("%s: skills/list: ignoring %s: frontmatter has no name or description", server, uri)
            return None
        files, problem = _files(raw.get("resources"), uri)
        if problem is None and uri.rsplit("/", 2)[-2] != name:
            problem = f"the skill's directory in {uri} is not its name {name!r}"
        return cls(server=server, uri=uri, frontmatter=dict(frontmatter), files=files, problem=problem)


def _files(raw: Any, uri: str) -> tuple[tuple[SkillFile, ...] | None, str | None]:
    """The entry's `resources` as SkillFiles, and the problem that makes the entry unloadable (or None)."""
    if raw is None:
        return None, "its entry lists no resources (a dynamically generated skill), so it cannot be verified"
    if not isinstance(raw, list):
        return None, "its entry's resources is not a list"
    files: list[SkillFile] = []
    seen: set[str] = set()
    root = uri[: -len(SKILL_FILE_NAME)]
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            return None, "a resources item has no uri"
        file_uri, digest, size = item["uri"], item.get("digest"), item.get("size")
        if not isinstance(digest, str) or not _DIGEST.match(digest):
            return None, f"resource {file_uri} has no valid digest (sha256:<64 lowercase hex>)"
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            return None, f"resource {file_uri} has an invalid size {size!r}"
        if file_uri != uri and not file_uri.startswith(root):
            return None, f"resource {file_uri} is outside the skill"
        if file_uri in seen:
            return None, f"resource {file_uri} is listed twice"
        seen.add(file_uri)
        files.append(SkillFile(file_uri, digest, size))
    if uri not in seen:
        return None, f"its resources do not list {uri} itself"
    if len(files) > MAX_SKILL_FILES:
        return None, f"it lists {len(files)} files (the limit is {MAX_SKILL_FILES})"
    if sum(f.size or 0 for f in files) > MAX_SKILL_TOTAL_BYTES:
        return None, f"its files exceed {MAX_SKILL_TOTAL_BYTES // (1024 * 1024)} MiB in total"
    return tuple(files), None


def supports_skills(client: McpClient) -> bool:
    """Whether the server declared the skills extension (`capabilities.extensions`)."""
    extensions = client.server_capabilities.get("extensions")
    return isinstance(extensions, dict) and SKILLS_EXTENSION in extensions


async def list_skills(client: McpClient) -> list[SkillEntry]:
    """Every skill entry the server lists (following `nextCursor`); [] when it does not declare the extension.
    Reads no skill file. Raises like `McpClient.request` (JsonRpcError, McpTimeoutError, TransportError)."""
    if not supports_skills(client):
        return []
    entries: list[SkillEntry] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        result = await client.request("skills/list", {"cursor": cursor} if cursor is not None else {})
        page = result.get("skills") if isinstance(result, dict) else None
        if not isinstance(page, list):
            log.warning("%s: skills/list: result has no skills list: %.200r", client.name, result)
            return entries
        for raw in page:
            entry = SkillEntry.from_wire(raw, server=client.name)
            if entry is not None:
                entries.append(entry)
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or cursor == "":
            return entries
        if cursor in seen:
            log.warning("%s: skills/list: nextCursor %.50r came back; stopping", client.name, cursor)
            return entries
        seen.add(cursor)
    log.warning("%s: skills/list: still more after %d pages; stopping", client.name, MAX_LIST_PAGES)
    return entries


@dataclass
class McpSkill:
    """One listed skill of one server: `load()` fetches and verifies `SKILL.md`, `read_file()` a supporting file.

    Verified content is kept (a second call reads nothing). After any verification failure the skill is
    refused for good: `refused` holds the error and every call raises it without reading anything.
    """

    client: McpClient
    entry: SkillEntry
    refused: SkillVerificationError | None = None
    _verified: dict[str, str] = field(default_factory=dict)

    @property
    def loaded(self) -> bool:
        return self.entry.uri in self._verified

    async def load(self) -> str:
        """The verified `SKILL.md` text. Raises SkillVerificationError (and refuses the skill)."""
        self._check_usable()
        cached = self._verified.get(self.entry.uri)
        if cached is not None:
            return cached
        if self.entry.problem is not None:
            self._refuse(f"skill {self.entry.name!r} refused: {self.entry.problem}", self.entry.uri)
        listed = self.entry.listed(self.entry.uri)
        assert listed is not None  # _files() guarantees SKILL.md is listed when there is no problem
        text = await self._fetch(listed)
        try:
            actual = parse_frontmatter(text)
        except FrontmatterError as exc:
            self._refuse(f"skill {self.entry.name!r} refused: {self.entry.uri}: {exc}", self.entry.uri)
        differing = _differing_fields(self.entry.frontmatter, actual)
        if differing:
            self._refuse(f"skill {self.entry.name!r} refused: the front matter of {self.entry.uri} does not match "
                         f"the listed entry (field{'s' if len(differing) > 1 else ''} "
                         f"{', '.join(differing)})", self.entry.uri)
        self._verified[self.entry.uri] = text
        return text

    async def read_file(self, uri_or_relpath: str) -> str:
        """A verified supporting file (a URI, or a path relative to the skill's root), loading the skill first.
        Raises SkillVerificationError: refused skill, unlisted file, or a failed check (which refuses the skill).
        """
        await self.load()
        try:
            uri = self.entry.resolve(uri_or_relpath)
        except ValueError as exc:
            raise SkillVerificationError(str(exc), server=self.entry.server, skill=self.entry.name,
                                         uri=uri_or_relpath) from None
        cached = self._verified.get(uri)
        if cached is not None:
            return cached
        listed = self.entry.listed(uri)
        if listed is None:
            # the entry is the complete list of the skill's files: an unlisted one is not part of it (not read)
            raise SkillVerificationError(f"{uri} is not a listed file of skill {self.entry.name!r}; not read",
                                         server=self.entry.server, skill=self.entry.name, uri=uri)
        text = await self._fetch(listed)
        self._verified[uri] = text
        return text

    def _check_usable(self) -> None:
        if self.refused is not None:
            raise self.refused

    def _refuse(self, message: str, uri: str) -> NoReturn:
        self.refused = SkillVerificationError(message, server=self.entry.server, skill=self.entry.name, uri=uri)
        raise self.refused

    async def _fetch(self, listed: SkillFile) -> str:
        """Read one listed file and verify its size and digest; refuse the skill on any mismatch."""
        contents = await self.client.read_resource(listed.uri)
        data, problem = _content_bytes(contents, listed.uri)
        name = self.entry.name
        if problem is not None:
            self._refuse(f"skill {name!r} refused: {listed.uri}: {problem}", listed.uri)
        assert data is not None
        if listed.size is not None and len(data) != listed.size:
            self._refuse(f"skill {name!r} refused: {listed.uri} is {len(data)} bytes but the listing says "
                         f"{listed.size}", listed.uri)
        digest = sha256_digest(data)
        if digest != listed.digest:
            self._refuse(f"skill {name!r} refused: {listed.uri} does not match its listed digest "
                         f"(got {digest[:19]}…, listed {listed.digest[:19]}…)", listed.uri)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self._refuse(f"skill {name!r} refused: {listed.uri} is not UTF-8 text", listed.uri)


def _content_bytes(contents: list[dict[str, Any]], uri: str) -> tuple[bytes | None, str | None]:
    """The raw bytes of the one content item for `uri` (text as UTF-8, blob base64-decoded)."""
    items = [item for item in contents if item.get("uri") == uri] or contents
    if len(items) != 1:
        return None, f"resources/read returned {len(items)} content items, expected 1"
    item = items[0]
    if isinstance(item.get("text"), str):
        return item["text"].encode("utf-8"), None
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True), None
        except (binascii.Error, ValueError):
            return None, "resources/read returned a blob that is not base64"
    return None, "resources/read returned no text or blob"


def _differing_fields(listed: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """The top-level front matter fields that differ (missing on either side counts), sorted."""
    keys = sorted(set(listed) | set(actual))
    return [key for key in keys if key not in listed or key not in actual or not same_value(listed[key],
                                                                                               actual[key])]
