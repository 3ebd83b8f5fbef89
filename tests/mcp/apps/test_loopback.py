"""The loopback ViewServer over real sockets with httpx: the token, Host and Origin checks, the exact security
headers and CSPs of the three documents, the SSE stream (queued messages after connect, one page at a time), POSTs
reaching the inbox in order, the bounds, and `close()` ending every connection and task."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from mini_claude.mcp.apps import loopback
from mini_claude.mcp.apps.channel import ViewChannel, ViewPage
from mini_claude.mcp.apps.csp import DEFAULT_CSP
from mini_claude.mcp.apps.loopback import MAX_BODY_BYTES, MAX_VIEWS, ViewLimitError, ViewServer
from mini_claude.mcp.apps.pages import (
    PROXY_SCRIPT_HASH,
    PROXY_STYLE_HASH,
    SESSION_SCRIPT_HASH,
    SESSION_STYLE_HASH,
)
from tests.helpers import eventually
from tests.mcp.apps.fakes import PageWords

PAGE_A = "a" * 32
PAGE_B = "b" * 32
COMMON = {"cache-control": "no-store", "referrer-policy": "no-referrer", "x-content-type-options": "nosniff"}


class Inbox:
    def __init__(self) -> None:
        self.got: list[tuple[str, dict[str, Any]]] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self, view_id: str, message: dict[str, Any]) -> None:
        await self.gate.wait()
        self.got.append((view_id, message))


@pytest.fixture
async def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
def said() -> PageWords:
    """What the page says of itself to the `server` fixture (its colour scheme, a mode the user switched)."""
    return PageWords()


@pytest.fixture
async def server(inbox: Inbox, said: PageWords) -> AsyncIterator[ViewServer]:
    made = ViewServer(inbox, events=said)
    await made.start()
    yield made
    await made.close()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5.0) as made:
        yield made


def view(view_id: str = "v1", html: str = "<p>hello</p>", csp: str = DEFAULT_CSP, allow: str = "") -> ViewPage:
    return ViewPage(view_id, f"srv · {view_id}", html, csp, allow)


class Stream:
    """An open `events` stream: `next()` is the next envelope (within 5 s)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.lines = response.aiter_lines()

    async def next(self) -> dict[str, Any]:
        async def read() -> dict[str, Any]:
            async for line in self.lines:
                if line.startswith("data: "):
                    return dict(json.loads(line[6:]))
            raise AssertionError("the stream ended")
        return await asyncio.wait_for(read(), 5.0)

    async def ended(self) -> bool:
        async def drain() -> None:
            async for _ in self.lines:
                pass
        await asyncio.wait_for(drain(), 5.0)
        return True


@asynccontextmanager
async def events(client: httpx.AsyncClient, server: ViewServer, page: str = PAGE_A) -> AsyncIterator[Stream]:
    async with client.stream("GET", f"{server.page_url}events?page={page}") as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        yield Stream(response)


async def post(client: httpx.AsyncClient, server: ViewServer, body: Any, **headers: str) -> httpx.Response:
    sent = {"Origin": server.host_origin, **headers}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await client.post(f"{server.page_url}rpc", content=content, headers=sent)


async def test_it_is_a_view_channel_with_token_urls(server: ViewServer) -> None:
    assert isinstance(server, ViewChannel)
    assert server.page_url == f"{server.host_origin}/{server.token}/"
    assert server.host_origin.startswith("http://127.0.0.1:")
    assert len(server.token) == 32
    assert server.add_view(view()) == server.page_url + "#view-v1"
    server.add_view(view("v2"))
    origins = {server.host_origin, server.view_origin("v1"), server.view_origin("v2")}
    assert len(origins) == 3  # every view has an origin of its own
    assert server.view_origin("v1").startswith("http://localhost:") and server.view_origin("nope") == ""


async def test_the_three_documents_have_their_exact_headers(server: ViewServer, client: httpx.AsyncClient) -> None:
    server.add_view(view(csp=DEFAULT_CSP, allow="clipboard-write"))
    host, sandbox = server.host_origin, server.view_origin("v1")
    page = await client.get(server.page_url)
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == (
        f"default-src 'none'; script-src {SESSION_SCRIPT_HASH}; style-src {SESSION_STYLE_HASH}; connect-src 'self'; "
        "frame-src http://localhost:*; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    assert page.headers["x-frame-options"] == "DENY"
    proxy = await client.get(f"{sandbox}/{server.token}/v/v1/sandbox")
    assert proxy.headers["content-security-policy"] == (
        f"default-src 'none'; script-src {PROXY_SCRIPT_HASH}; style-src {PROXY_STYLE_HASH}; "
        f"frame-src {sandbox}/{server.token}/v/v1/view; connect-src 'none'; object-src 'none'; base-uri 'none'; "
        f"form-action 'none'; frame-ancestors {host}")
    assert '"allow":"clipboard-write"' in proxy.text and f'"hostOrigin":"{host}"' in proxy.text
    shown = await client.get(f"{sandbox}/{server.token}/v/v1/view")
    assert shown.text == "<p>hello</p>"
    assert shown.headers.get_list("content-security-policy") == [DEFAULT_CSP, f"frame-ancestors {sandbox} {host}"]
    for response in (page, proxy, shown):
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert {k: response.headers[k] for k in COMMON} == COMMON


async def test_a_data_block_cannot_close_its_script_element(server: ViewServer, client: httpx.AsyncClient) -> None:
    server.add_view(view(allow="</script><script>alert(1)</script>"))
    proxy = await client.get(f"{server.view_origin('v1')}/{server.token}/v/v1/sandbox")
    assert proxy.text.count("</script>") == 2  # the data block's and the script's own
    assert "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)" in proxy.text


@pytest.mark.parametrize("where", ["token", "view-token", "other-view", "kind", "extra", "view-path-on-host"])
async def test_unknown_paths_are_404_without_detail(server: ViewServer, client: httpx.AsyncClient,
                                                    where: str) -> None:
    server.add_view(view())
    server.add_view(view("v2"))
    token, host, sandbox = server.token, server.host_origin, server.view_origin("v1")
    wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # one character off, never the token itself
    url = {"token": f"{host}/{wrong}/", "view-token": f"{sandbox}/{wrong}/v/v1/view",
           "other-view": f"{sandbox}/{token}/v/v2/view",  # a view's port serves that view only
           "kind": f"{sandbox}/{token}/v/v1/other", "extra": f"{host}/{token}/events/x",
           "view-path-on-host": f"{host}/{token}/v/v1/view"}[where]
    response = await client.get(url)
    assert (response.status_code, response.text) == (404, "not found")
    assert {k: response.headers[k] for k in COMMON} == COMMON


@pytest.mark.parametrize("which", ["host", "sandbox"])
@pytest.mark.parametrize("fake", ["evil.example", "the-other-name", "no-port"])
async def test_a_wrong_host_header_is_403(server: ViewServer, client: httpx.AsyncClient, which: str,
                                          fake: str) -> None:
    server.add_view(view())
    origin = server.host_origin if which == "host" else server.view_origin("v1")
    port = origin.rpartition(":")[2]
    url = server.page_url if which == "host" else f"{origin}/{server.token}/v/v1/view"
    assert (await client.get(url)).status_code == 200
    own_name = origin.removeprefix("http://").rpartition(":")[0]
    host = {"the-other-name": f"{'localhost' if which == 'host' else '127.0.0.1'}:{port}", "no-port": own_name,
            "evil.example": f"evil.example:{port}"}[fake]
    response = await client.get(url, headers={"Host": host})
    assert (response.status_code, response.text) == (403, "forbidden")


async def test_post_needs_the_host_pages_origin(server: ViewServer, client: httpx.AsyncClient,
                                                inbox: Inbox) -> None:
    server.add_view(view())
    body = {"page": PAGE_A, "view": "v1", "message": {"jsonrpc": "2.0", "method": "m"}}
    async with events(client, server):
        no_origin = await client.post(f"{server.page_url}rpc", content=json.dumps(body).encode())
        assert no_origin.status_code == 403
        for origin in (server.view_origin("v1"), "null", "http://127.0.0.1", f"{server.host_origin}/"):
            assert (await post(client, server, body, Origin=origin)).status_code == 403
        assert (await client.get(server.page_url, headers={"Origin": "http://evil.example"})).status_code == 403
        assert (await post(client, server, body)).status_code == 204
        await eventually(lambda: inbox.got, "the message in the inbox")
    assert inbox.got == [("v1", {"jsonrpc": "2.0", "method": "m"})]


async def test_browser_fetch_metadata_must_fit_each_document(server: ViewServer, client: httpx.AsyncClient) -> None:
    server.add_view(view())
    page, views = server.page_url, f"{server.view_origin('v1')}/{server.token}/v/v1/"
    for url, site, status in ((page, "none", 200), (page, "same-origin", 200), (page, "cross-site", 403),
                              (page, "same-site", 403), (f"{page}events?page={PAGE_A}", "none", 403),
                              (f"{page}events?page={PAGE_A}", "cross-site", 403)):
        assert (await client.get(url, headers={"Sec-Fetch-Site": site})).status_code == status, (url, site)
    for kind in ("sandbox", "view"):
        assert (await client.get(views + kind, headers={"Sec-Fetch-Dest": "iframe"})).status_code == 200
        assert (await client.get(views + kind, headers={"Sec-Fetch-Dest": "document"})).status_code == 403
    async with events(client, server):
        body = {"page": PAGE_A, "view": "v1", "message": {}}
        assert (await post(client, server, body, **{"Sec-Fetch-Site": "cross-site"})).status_code == 403
        assert (await post(client, server, body, **{"Sec-Fetch-Site": "same-origin"})).status_code == 204


async def test_messages_sent_before_a_page_connects_are_delivered_after(server: ViewServer,
                                                                      client: httpx.AsyncClient) -> None:
    server.add_view(view("v1"))
    server.add_view(view("v2", allow="camera"))
    for n in range(3):
        server.send("v1", {"jsonrpc": "2.0", "method": "m", "params": {"n": n}})
    server.send("v2", {"jsonrpc": "2.0", "id": 7, "result": {}})
    server.send("nope", {"jsonrpc": "2.0", "method": "ignored"})
    async with events(client, server) as stream:
        sandbox = f"{server.view_origin('v1')}/{server.token}/v/v1/sandbox"
        assert await stream.next() == {"view": "v1", "added": {"title": "srv · v1", "sandbox": sandbox,
                                                               "allow": "", "prefersBorder": None,
                                                               "mode": "inline"}}
        assert (await stream.next())["added"]["allow"] == "camera"
        assert await stream.next() == {"live": ["v1", "v2"]}
        assert [await stream.next() for _ in range(4)] == [
            *({"view": "v1", "message": {"jsonrpc": "2.0", "method": "m", "params": {"n": n}}} for n in range(3)),
            {"view": "v2", "message": {"jsonrpc": "2.0", "id": 7, "result": {}}}]
        server.send("v2", {"jsonrpc": "2.0", "method": "live"})  # while connected: at once
        assert await stream.next() == {"view": "v2", "message": {"jsonrpc": "2.0", "method": "live"}}
        server.add_view(view("v3"))
        assert (await stream.next())["view"] == "v3"
        gone = server.view_origin("v1")
        assert (await client.get(f"{gone}/{server.token}/v/v1/view")).status_code == 200
        server.remove_view("v1")
        assert await stream.next() == {"view": "v1", "removed": True}
    with pytest.raises(httpx.ConnectError):  # the view's port is closed with it
        await client.get(f"{gone}/{server.token}/v/v1/view")


async def test_posts_reach_the_inbox_in_order_without_waiting_for_it(server: ViewServer, client: httpx.AsyncClient,
                                                                     inbox: Inbox) -> None:
    server.add_view(view("v1"))
    inbox.gate.clear()  # the session side is busy: the 204s must not wait for it
    async with events(client, server):
        for n in range(20):
            body = {"page": PAGE_A, "view": "v1", "message": {"jsonrpc": "2.0", "id": n, "method": "m"}}
            assert (await post(client, server, body)).status_code == 204
        assert inbox.got == []
        inbox.gate.set()
        await eventually(lambda: len(inbox.got) == 20, "twenty messages in the inbox")
    assert [m["id"] for _, m in inbox.got] == list(range(20))


@pytest.mark.parametrize(("body", "status"), [
    (b"{not json", 400),
    (b"[" * 100_000 + b"]" * 100_000, 400),
    (json.dumps({"page": PAGE_A, "view": "v1", "message": [1]}).encode(), 400),
    (json.dumps({"page": PAGE_A, "view": "v9", "message": {}}).encode(), 404),
    (json.dumps({"page": PAGE_B, "view": "v1", "message": {}}).encode(), 409),
    (b"x" * (MAX_BODY_BYTES + 1), 413),
])
async def test_bad_posts_are_refused(server: ViewServer, client: httpx.AsyncClient, inbox: Inbox, body: bytes,
                                     status: int) -> None:
    server.add_view(view("v1"))
    async with events(client, server):
        assert (await post(client, server, body)).status_code == status
    assert inbox.got == []


async def test_the_current_page_alone_says_its_colour_scheme(server: ViewServer, said: PageWords, inbox: Inbox,
                                                             client: httpx.AsyncClient) -> None:
    themes = said.themes
    server.add_view(view("v1"))
    assert (await post(client, server, {"page": PAGE_A, "theme": "light"})).status_code == 409  # no page yet
    async with events(client, server, PAGE_A):
        for theme in ("light", "dark"):
            assert (await post(client, server, {"page": PAGE_A, "theme": theme})).status_code == 204
        for bad in ({"page": PAGE_B, "theme": "light"}, {"page": PAGE_A, "theme": "blue"},
                    {"page": PAGE_A, "theme": ["dark"]}):
            assert (await post(client, server, bad)).status_code in (400, 409)
        # a view's message that also names a theme is the view's message, never the page's scheme
        both = {"page": PAGE_A, "view": "v1", "theme": "light", "message": {"jsonrpc": "2.0", "method": "m"}}
        assert (await post(client, server, both)).status_code == 204
        await eventually(lambda: inbox.got, "the view's message")
    assert themes == ["light", "dark"] and said.modes == []


async def test_display_modes_go_both_ways(server: ViewServer, said: PageWords, inbox: Inbox,
                                          client: httpx.AsyncClient) -> None:
    switched = said.modes
    server.add_view(view("v1"))
    server.set_mode("v1", "fullscreen")  # no page yet: the page that connects gets it in `added`
    server.set_mode("v1", "pip")  # not a mode of this host: nothing
    server.set_mode("nope", "fullscreen")
    async with events(client, server, PAGE_A) as stream:
        assert (await stream.next())["added"]["mode"] == "fullscreen"
        assert await stream.next() == {"live": ["v1"]}
        server.set_mode("v1", "inline")
        assert await stream.next() == {"view": "v1", "mode": "inline"}
        # the user's button on the page: the page says so; saying the mode it has changes nothing
        assert (await post(client, server, {"page": PAGE_A, "view": "v1", "mode": "fullscreen"})).status_code == 204
        assert (await post(client, server, {"page": PAGE_A, "view": "v1", "mode": "fullscreen"})).status_code == 204
        for bad, status in (({"page": PAGE_A, "view": "v9", "mode": "inline"}, 404),
                            ({"page": PAGE_A, "view": "v1", "mode": "pip"}, 400),
                            ({"page": PAGE_A, "view": "v1", "mode": "inline", "extra": 1}, 400),
                            ({"page": PAGE_A, "view": ["v1"], "mode": "inline"}, 404),
                            ({"page": PAGE_B, "view": "v1", "mode": "inline"}, 409)):
            assert (await post(client, server, bad)).status_code == status, bad
    assert switched == [("v1", "fullscreen")] and said.themes == []
    assert inbox.got == []  # the page's word never reaches a view's inbox


async def test_a_post_with_no_page_connected_or_no_length_is_refused(server: ViewServer,
                                                                     client: httpx.AsyncClient) -> None:
    server.add_view(view("v1"))
    body = {"page": PAGE_A, "view": "v1", "message": {}}
    assert (await post(client, server, body)).status_code == 409

    async def chunks() -> AsyncIterator[bytes]:
        yield json.dumps(body).encode()

    async with events(client, server):
        chunked = await client.post(f"{server.page_url}rpc", content=chunks(), headers={"Origin": server.host_origin})
        assert chunked.status_code == 411


async def test_a_newer_page_supersedes_the_older(server: ViewServer, client: httpx.AsyncClient) -> None:
    server.add_view(view("v1"))
    async with events(client, server, PAGE_A) as first:
        assert (await first.next())["view"] == "v1"
        assert await first.next() == {"live": ["v1"]}
        async with events(client, server, PAGE_B) as second:
            assert await first.next() == {"superseded": True}
            assert await first.ended()
            assert (await second.next())["view"] == "v1"
            stale = {"page": PAGE_A, "view": "v1", "message": {}}
            assert (await post(client, server, stale)).status_code == 409
            server.send("v1", {"jsonrpc": "2.0", "method": "to-second"})
            await second.next()
            assert (await second.next())["message"]["method"] == "to-second"
    for bad in ("short", "A" * 32, ""):
        assert (await client.get(f"{server.page_url}events?page={bad}")).status_code == 400


async def test_bounds_on_views_and_their_fields(inbox: Inbox) -> None:
    server = ViewServer(inbox)
    with pytest.raises(RuntimeError, match="start"):
        server.add_view(view())
    await server.start()
    try:
        for n in range(MAX_VIEWS):
            server.add_view(view(f"v{n}"))
        with pytest.raises(ViewLimitError, match="at most 32 views"):
            server.add_view(view("one-more"))
        server.remove_view("v0")
        server.add_view(view("one-more"))
        with pytest.raises(ValueError, match="already shown"):
            server.add_view(view("one-more"))
        for bad in ("", "a/b", "a b", "x" * 65, "é"):
            with pytest.raises(ValueError, match="view id"):
                server.add_view(view(bad))
        with pytest.raises(ValueError, match="csp must be printable ASCII on one line"):
            server.add_view(view("x", csp=DEFAULT_CSP + "\r\nSet-Cookie: a=b"))
    finally:
        await server.close()


async def test_a_silent_or_oversized_request_is_cut(server: ViewServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loopback, "HEADER_TIMEOUT_S", 0.2)
    port = int(server.host_origin.rpartition(":")[2])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    assert await asyncio.wait_for(reader.read(), 5.0) == b""  # nothing sent: closed after the timeout
    writer.close()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nX: " + b"y" * 20_000 + b"\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 5.0)
    assert answer.startswith(b"HTTP/1.1 431 ")
    writer.close()


async def test_close_ends_the_stream_the_ports_and_the_inbox_workers(client: httpx.AsyncClient, inbox: Inbox) -> None:
    server = ViewServer(inbox)
    await server.start()
    server.add_view(view("v1"))
    view_origin = server.view_origin("v1")
    inbox.gate.clear()  # a handler that never returns: close() must cancel it
    async with events(client, server) as stream:
        await stream.next()
        await stream.next()
        body = {"page": PAGE_A, "view": "v1", "message": {"jsonrpc": "2.0", "method": "m"}}
        assert (await post(client, server, body)).status_code == 204
        await asyncio.wait_for(server.close(), 5.0)
        assert await stream.next() == {"closed": True}
        assert await stream.ended()
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    assert [t for t in tasks if "_deliver" in repr(t.get_coro()) or "_serve" in repr(t.get_coro())] == []
    for origin in (server.host_origin, view_origin):
        with pytest.raises(httpx.ConnectError):
            await client.get(f"{origin}/{server.token}/")
    await server.close()  # twice is fine
