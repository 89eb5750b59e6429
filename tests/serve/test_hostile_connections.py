"""Hostile connections (issue: slowloris): sockets that never finish a request head, or send
nothing at all, are closed by the server after --header-timeout, and while they are held the
service keeps answering; a kept-alive connection's next head has the same deadline."""

from __future__ import annotations

import socket

import httpx
import pytest

pytestmark = pytest.mark.network

HELD = 40  # sockets held open at once (bounded: the test's own load)


def _open(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _closed_by_server(sock: socket.socket) -> bool:
    """True once the server closes the socket (recv returns b""); the 30 s socket timeout raises."""
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True


def test_heads_that_never_complete_are_closed_and_the_service_answers_meanwhile(start) -> None:
    s = start(header_timeout_s=1.0, max_connections=HELD + 5)
    held = [_open(s.url) for _ in range(HELD)]
    try:
        for i, sock in enumerate(held):
            if i % 2:  # half send part of a head and stop, half send nothing at all
                sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        assert httpx.get(f"{s.url}/livez", timeout=30).status_code == 200  # served beside them
        assert all(_closed_by_server(sock) for sock in held)
    finally:
        for sock in held:
            sock.close()
    assert httpx.get(f"{s.url}/livez", timeout=30).status_code == 200


def test_a_kept_alive_connection_gets_the_same_deadline_for_its_next_head(start) -> None:
    s = start(header_timeout_s=1.0, idle_timeout_s=120.0)
    with _open(s.url) as sock:
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n")  # the second head never ends
        assert _closed_by_server(sock)


def test_a_whole_head_is_not_cut_by_the_head_deadline(start) -> None:
    """A request whose head arrived in time but whose answer takes longer than --header-timeout
    is answered: the deadline covers the head only."""
    s = start(header_timeout_s=0.5)
    hold = s.hold()
    with _open(s.url) as sock:
        body = b'{"q": "Ein Hund.", "source": "de", "target": "en"}'
        sock.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        hold.wait_entered()
        assert not hold.gate.wait(1.0)  # held past the head deadline
        hold.release()
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
