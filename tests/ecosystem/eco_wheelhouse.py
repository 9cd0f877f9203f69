"""Tiny wheels written by the tests and a PEP 503 index serving them on loopback.

Each wheel is a real, installable pure-Python wheel (``METADATA``, ``WHEEL``, ``RECORD`` with
hashes) holding one module whose ``__version__`` is the wheel's version. The index is a
directory tree served by :mod:`http.server` in a thread: ``/simple/<name>/`` lists the
files with their ``#sha256=`` fragments, ``/files/<wheel>`` serves them.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import http.server
import ssl
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Wheel", "build_wheel", "serve_index", "wheel_index"]


@dataclass(frozen=True)
class Wheel:
    name: str
    version: str
    path: Path

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_wheel(
    directory: Path,
    name: str,
    version: str,
    requires: tuple[str, ...] = (),
    *,
    modules: dict[str, str] | None = None,
    entry_points: str | None = None,
) -> Wheel:
    """Write ``<name>-<version>-py3-none-any.whl`` into ``directory``.

    ``modules``: more top-level modules (file name -> source); ``entry_points``: the text of
    the distribution's ``entry_points.txt`` (a plugin distribution).
    """
    module = name.replace("-", "_")
    dist_info = f"{module}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {req}\n" for req in requires)
    files = {
        f"{module}/__init__.py": f"__version__ = {version!r}\n".encode(),
        f"{dist_info}/METADATA": metadata.encode(),
        f"{dist_info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: reprobridge-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    for module_file, source in (modules or {}).items():
        files[module_file] = source.encode()
    if entry_points is not None:
        files[f"{dist_info}/entry_points.txt"] = entry_points.encode()
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files.items())
    record += f"{dist_info}/RECORD,,\n"
    files[f"{dist_info}/RECORD"] = record.encode()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in files.items():
            info = zipfile.ZipInfo(member, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return Wheel(name, version, path)


def write_index(root: Path, wheels: list[Path]) -> None:
    """A PEP 503 simple index under ``root/simple`` for the wheel files (copied to files/)."""
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    projects: dict[str, list[Path]] = {}
    for wheel in wheels:
        target = files / wheel.name
        if wheel.resolve() != target.resolve():
            target.write_bytes(wheel.read_bytes())
        project = wheel.name.split("-")[0].lower().replace("_", "-").replace(".", "-")
        projects.setdefault(project, []).append(target)
    simple = root / "simple"
    simple.mkdir(exist_ok=True)
    links = "".join(f'<a href="{p}/">{p}</a>\n' for p in sorted(projects))
    (simple / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    for project, paths in projects.items():
        folder = simple / project
        folder.mkdir(exist_ok=True)
        anchors = "".join(
            f'<a href="../../files/{p.name}#sha256={hashlib.sha256(p.read_bytes()).hexdigest()}">'
            f"{p.name}</a>\n"
            for p in sorted(paths)
        )
        (folder / "index.html").write_text(
            f"<!DOCTYPE html><html><body>\n{anchors}</body></html>\n"
        )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that refuses the certificate ends its connection: not the server's fault


@contextlib.contextmanager
def serve_index(root: Path, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (a free port) and yield the index URL ``.../simple``.

    With ``tls`` (a server context holding its certificate) the index is served over HTTPS;
    each connection's handshake happens in its own thread, on its first read.
    """
    handler = functools.partial(_Quiet, directory=str(root))
    server = _QuietServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(
            server.socket, server_side=True, do_handshake_on_connect=False
        )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    scheme = "https" if tls is not None else "http"
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def wheel_index(root: Path, specs: list[tuple[str, str]]) -> Iterator[tuple[str, dict[str, Wheel]]]:
    """Build wheels for ``(name, version)`` pairs, index and serve them; yield URL and wheels."""
    wheels = {f"{n}=={v}": build_wheel(root / "build", n, v) for n, v in specs}
    write_index(root / "index", [w.path for w in wheels.values()])
    with serve_index(root / "index") as url:
        yield url, wheels
