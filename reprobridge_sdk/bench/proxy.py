"""The allow-list network policy of ``bench run`` (``--network allow --allow-host HOST``).

The policy is spec/bench.md §18.5 (step 3, ``allow``): the sandboxed agent keeps only its own
loopback, and a relay inside the sandbox (:data:`RELAY`) carries each connection to the
host's forward proxy (:class:`AllowProxy`) on a unix socket in the run's folder.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["PORT", "RELAY", "AllowProxy", "allowed"]

#: The port of the relay on the sandbox's loopback.
PORT = 3128
_HEAD = 64 * 1024
_CONNECT_TIMEOUT = 30.0

#: The relay inside the sandbox: ``python -I -S -c RELAY SOCKET -- ARGV...``.
RELAY = (
    "import os,socket,subprocess,sys,threading\n"
    "path=sys.argv[1];argv=sys.argv[3:]\n"
    "def pipe(a,b):\n"
    "    try:\n"
    "        while True:\n"
    "            d=a.recv(65536)\n"
    "            if not d: break\n"
    "            b.sendall(d)\n"
    "    except OSError: pass\n"
    "    for s in (a,b):\n"
    "        try: s.shutdown(socket.SHUT_RDWR)\n"
    "        except OSError: pass\n"
    "def serve(conn):\n"
    "    up=socket.socket(socket.AF_UNIX)\n"
    "    try: up.connect(path)\n"
    "    except OSError:\n"
    "        conn.close(); return\n"
    "    threading.Thread(target=pipe,args=(conn,up),daemon=True).start()\n"
    "    pipe(up,conn)\n"
    "srv=socket.socket();srv.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
    f"srv.bind(('127.0.0.1',{PORT}));srv.listen(64)\n"
    "def accept():\n"
    "    while True:\n"
    "        c,_=srv.accept()\n"
    "        threading.Thread(target=serve,args=(c,),daemon=True).start()\n"
    "threading.Thread(target=accept,daemon=True).start()\n"
    "code=subprocess.call(argv)\n"
    "sys.exit(128-code if code<0 else code)\n"
)


def allowed(host: str, hosts: Sequence[str]) -> bool:
    """Whether ``host`` is in the allow-list ``hosts`` (module docstring)."""
    name = host.strip().lower().rstrip(".")
    for entry in hosts:
        wanted = entry.strip().lower().rstrip(".")
        if wanted.startswith("."):
            if name.endswith(wanted):
                return True
        elif name == wanted:
            return True
    return False


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    for side in (source, target):
        with contextlib.suppress(OSError):
            side.shutdown(socket.SHUT_RDWR)


def _target(head: bytes) -> tuple[str, int, bytes | None] | None:
    """The host, the port and the bytes to send first (None: a tunnel) of a request head."""
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        return None
    method, target, version = parts
    if method.upper() == "CONNECT":
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            return None
        return host.strip("[]"), int(port), None
    url = urlsplit(target)
    if url.scheme != "http" or not url.hostname:
        return None
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    first = f"{method} {path} {version}\r\n".encode("latin-1")
    return url.hostname, url.port or 80, first + rest


class AllowProxy:
    """The forward proxy of one run, on the unix socket ``path`` (module docstring)."""

    def __init__(self, path: Path, hosts: Sequence[str]) -> None:
        self.path = path
        self.hosts = list(hosts)
        self.allowed = 0
        self.refused = 0
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        path.chmod(0o777)  # the sandbox's user is another uid
        self._server.listen(64)
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _count(self, allowed_: bool) -> None:
        with self._lock:
            if allowed_:
                self.allowed += 1
            else:
                self.refused += 1

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            try:
                conn.settimeout(_CONNECT_TIMEOUT)
                while b"\r\n\r\n" not in head and len(head) < _HEAD:
                    data = conn.recv(4096)
                    if not data:
                        return
                    head += data
            except OSError:
                return
            target = _target(head)
            if target is None or not allowed(target[0], self.hosts):
                self._count(False)
                with contextlib.suppress(OSError):
                    conn.sendall(
                        b"HTTP/1.1 403 Forbidden\r\nContent-Length: 35\r\nConnection: close"
                        b"\r\n\r\nbench: host not in the allow-list\r\n"
                    )
                return
            host, port, first = target
            try:
                upstream = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT)
            except OSError:
                self._count(False)
                with contextlib.suppress(OSError):
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            self._count(True)
            with upstream:
                conn.settimeout(None)
                upstream.settimeout(None)
                try:
                    if first is None:
                        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    else:
                        upstream.sendall(first)
                except OSError:
                    return
                back = threading.Thread(target=_pipe, args=(upstream, conn), daemon=True)
                back.start()
                _pipe(conn, upstream)
                back.join(timeout=_CONNECT_TIMEOUT)

    def close(self) -> None:
        """Stop listening (tunnels in flight end with the run's sockets)."""
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._server.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
