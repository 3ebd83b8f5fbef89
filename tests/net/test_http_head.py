"""The strict HTTP/1.x request-head reader both loopback servers share (net/http_head.py)."""

from __future__ import annotations

import pytest

from mini_claude.net.http_head import HeadError, parse_request_head

SINGLE = ("host", "origin", "content-length")


def test_a_plain_head_is_read_with_lower_cased_names_and_joined_repeats() -> None:
    head = b"POST /t/rpc HTTP/1.1\r\nHost: 127.0.0.1:5\r\nAccept: a\r\naccept: b\r\nContent-Length: 2\r\n\r\n"
    request = parse_request_head(head, single=SINGLE)
    assert (request.method, request.target) == ("POST", "/t/rpc")
    assert request.headers == {"host": "127.0.0.1:5", "accept": "a, b", "content-length": "2"}


@pytest.mark.parametrize("head", [
    b"GET http://evil.example/ HTTP/1.1\r\nHost: x\r\n\r\n",  # absolute-form: we are nobody's proxy
    b"GET / HTTP/2\r\n\r\n",
    b"GET /\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost : 127.0.0.1:5\r\n\r\n",  # a space before the colon
    b"GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n",  # an obsolete folded line
    b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
    b"GET / HTTP/1.1\r\n: empty name\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1:5\r\nHost: evil.example\r\n\r\n",  # a second Host
    b"POST / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 99\r\n\r\n",
])
def test_what_two_readers_could_split_differently_is_refused(head: bytes) -> None:
    with pytest.raises(HeadError):
        parse_request_head(head, single=SINGLE)
