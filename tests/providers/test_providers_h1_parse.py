"""The sans-IO HTTP/1.1 response parser (`_h1_parse`): framing, any split, strict errors."""

from __future__ import annotations

import itertools

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_bridge.providers.http._h1_parse import Framing, ResponseHead, ResponseParser

OK = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
CHUNKED = (
    OK + b"transfer-encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\n"
    b"1;name=value;flag\r\n \r\n"  # a chunk extension, ignored
    b"A\r\n0123456789\r\n"
    b"0\r\nx-trailer: yes\r\nx-other:\r\n\r\n"
)
FRAMINGS = {
    "chunked": (CHUNKED, b"hello 0123456789", Framing.CHUNKED, True),
    "content-length": (
        OK + b"content-length: 11\r\n\r\nhello world",
        b"hello world",
        Framing.LENGTH,
        True,
    ),
    "close-delimited": (OK + b"\r\nuntil the end", b"until the end", Framing.CLOSE, False),
    "no body (204)": (b"HTTP/1.1 204 No Content\r\n\r\n", b"", Framing.NONE, True),
    "bare LF head": (b"HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", b"hi", Framing.LENGTH, True),
    "interim 100 skipped": (
        b"HTTP/1.1 100 Continue\r\n\r\n" + OK + b"content-length: 2\r\n\r\nok",
        b"ok",
        Framing.LENGTH,
        True,
    ),
    "HTTP/1.0": (b"HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\n1", b"1", Framing.LENGTH, False),
    "connection close": (
        OK + b"connection: keep-alive, Close\r\ncontent-length: 1\r\n\r\n1",
        b"1",
        Framing.LENGTH,
        False,
    ),
}


def parse(pieces: list[bytes]) -> tuple[ResponseHead, bytes, ResponseParser]:
    """Feeds `pieces` as successive socket reads; returns the head and the decoded body."""
    parser = ResponseParser()
    head: ResponseHead | None = None
    body: list[bytes] = []
    for piece in pieces:
        if head is None:
            head = parser.head(piece)
            if head is not None:
                body.append(parser.pending())
        else:
            body.append(parser.body(piece))
    assert head is not None
    if not parser.complete:
        parser.eof()
    assert parser.complete
    return head, b"".join(body), parser


@pytest.mark.requirement("HTTP1-PARSE-001")
@pytest.mark.parametrize("name", sorted(FRAMINGS))
def test_every_framing_decodes_at_every_split(name: str) -> None:
    raw, body, framing, keep_alive = FRAMINGS[name]
    for cut in range(len(raw) + 1):
        head, got, parser = parse([raw[:cut], raw[cut:]])
        assert (got, head.framing, head.keep_alive, parser.extra) == (
            body,
            framing,
            keep_alive,
            False,
        ), cut
    head, got, _ = parse([raw[i : i + 1] for i in range(len(raw))])  # one byte per read
    assert got == body


@pytest.mark.requirement("HTTP1-PARSE-001")
@settings(max_examples=200)
@given(
    chunks=st.lists(st.binary(min_size=1, max_size=40), max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=8),
)
def test_chunked_bodies_survive_any_split(chunks: list[bytes], cuts: list[int]) -> None:
    raw = OK + b"transfer-encoding: chunked\r\n\r\n"
    raw += b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\n\r\n"
    points = sorted({min(cut, len(raw)) for cut in cuts} | {0, len(raw)})
    pieces = [raw[a:b] for a, b in itertools.pairwise(points)]
    _, body, parser = parse(pieces or [raw])
    assert body == b"".join(chunks)
    assert not parser.extra


@pytest.mark.requirement("HTTP1-PARSE-001")
def test_one_read_of_many_chunks_is_one_bytes_object() -> None:
    parser = ResponseParser()
    assert parser.head(OK + b"transfer-encoding: chunked\r\n\r\n") is not None
    events = b"".join(b"%x\r\ndata: %d\n\n\r\n" % (len(b"data: %d\n\n" % i), i) for i in range(50))
    piece = parser.body(events)
    assert piece == b"".join(b"data: %d\n\n" % i for i in range(50))
    assert parser.body(b"0\r\n\r\n") == b""
    assert parser.complete


@pytest.mark.requirement("HTTP1-PARSE-001")
def test_bytes_after_the_body_mark_the_connection_unusable() -> None:
    parser = ResponseParser()
    parser.head(OK + b"content-length: 2\r\n\r\n")
    assert parser.body(b"okHTTP/1.1") == b"ok"
    assert parser.complete
    assert parser.extra


MALFORMED = {
    "status line": (b"HTTP/2 200 OK\r\n\r\n", "malformed status line"),
    "not HTTP": (b"SSH-2.0-OpenSSH\r\n\r\n", "malformed status line"),
    "header without colon": (b"HTTP/1.1 200 OK\r\nbroken header\r\n\r\n", "malformed header"),
    "space before colon": (b"HTTP/1.1 200 OK\r\nname : v\r\n\r\n", "malformed header"),
    "obs-fold": (b"HTTP/1.1 200 OK\r\na: b\r\n  folded\r\n\r\n", "malformed header"),
    "conflicting lengths": (
        b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
        "conflicting Content-Length",
    ),
    "bad length": (b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", "malformed Content-Length"),
    "gzip coding": (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n",
        "unsupported Transfer-Encoding",
    ),
    "switching protocols": (b"HTTP/1.1 101 Switching\r\n\r\n", "switched protocols"),
}


@pytest.mark.requirement("HTTP1-PARSE-002")
@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_heads_are_refused_precisely(name: str) -> None:
    raw, message = MALFORMED[name]
    with pytest.raises(httpx.RemoteProtocolError, match=message):
        ResponseParser().head(raw)


CHUNK_ERRORS = {
    "not hex": (b"zz\r\n", "malformed chunk-size line"),
    "sign": (b"+5\r\nhello\r\n", "malformed chunk-size line"),
    "0x prefix": (b"0x5\r\nhello\r\n", "malformed chunk-size line"),
    "too many digits": (b"1" * 17 + b"\r\n", "malformed chunk-size line"),
    "wrong size": (b"3\r\nhello\r\n", "not followed by CRLF"),
    "long size line": (b"5;" + b"x" * 5000, "longer than 4096 bytes"),
    "bad trailer": (b"0\r\nnot a trailer\r\n\r\n", "malformed trailer line"),
    "huge trailers": (b"0\r\n" + b"x-a: b\r\n" * 3000, "trailer section is larger"),
}


@pytest.mark.requirement("HTTP1-PARSE-002")
@pytest.mark.parametrize("name", sorted(CHUNK_ERRORS))
def test_malformed_chunks_are_refused_precisely(name: str) -> None:
    data, message = CHUNK_ERRORS[name]
    parser = ResponseParser()
    parser.head(OK + b"transfer-encoding: chunked\r\n\r\n")
    with pytest.raises(httpx.RemoteProtocolError, match=message):
        parser.body(data)


@pytest.mark.requirement("HTTP1-PARSE-002")
def test_an_oversized_head_is_refused_before_it_is_complete() -> None:
    parser = ResponseParser(max_head=1024)
    assert parser.head(b"HTTP/1.1 200 OK\r\n") is None
    with pytest.raises(httpx.RemoteProtocolError, match="larger than 1024 bytes"):
        parser.head(b"x-big: " + b"a" * 2000)


@pytest.mark.requirement("HTTP1-PARSE-002")
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (OK + b"content-length: 10\r\n\r\nshort", "5 of the Content-Length bytes missing"),
        (OK + b"transfer-encoding: chunked\r\n\r\n5\r\nhel", "incomplete chunked read"),
    ],
)
def test_a_body_cut_short_is_an_error(raw: bytes, message: str) -> None:
    parser = ResponseParser()
    parser.head(raw)
    parser.pending()
    with pytest.raises(httpx.RemoteProtocolError, match=message):
        parser.eof()
