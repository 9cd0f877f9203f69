"""Hostile: a file of the code tree swapped for a link to a secret while the tree digest is
computed.

A second process swaps ``a.py`` between a regular file and a symbolic link to a file outside
the tree, atomically (``rename``), in a tight loop. The tree digest lists ``a.py`` either as
the file or as the link (``l`` and its target): never as a file holding the secret's bytes.
The digest opens each entry once without following links, tells its type from the
descriptor and hashes what it opened; a scan that checked the type and then opened the name
again hashed the secret whenever the swap fell between the two.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from reprobridge_sdk.digest import TREE_DIGEST_PREFIX, iter_tree_entries, tree_digest
from reprobridge_sdk.io import safefs

SWAPPER = """
import os, sys
tree, secret = sys.argv[1], sys.argv[2]
target = os.path.join(tree, "a.py")
link, file = os.path.join(tree, ".l.tmp"), os.path.join(tree, ".f.tmp")
print("ready", flush=True)
while True:
    os.symlink(secret, link)
    os.replace(link, target)
    with open(file, "w") as handle:
        handle.write("inside = 1\\n")
    os.replace(file, target)
"""

#: Digests attempted while the swapper runs.
ROUNDS = 1_000


def _digest(entries: list[tuple[str, str, str]]) -> str:
    digest = hashlib.sha256()
    for kind, rel, value in entries:
        digest.update(f"{kind}\0{rel}\0{value}\n".encode())
    return TREE_DIGEST_PREFIX + digest.hexdigest()


def test_a_file_swapped_for_a_link_is_never_hashed_through_the_link(tmp_path: Path) -> None:
    tree = tmp_path / "code"
    tree.mkdir()
    (tree / "a.py").write_text("inside = 1\n")
    (tree / "b.py").write_text("b = 2\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET of the host\n")
    inside = hashlib.sha256(b"inside = 1\n").hexdigest()
    b_digest = hashlib.sha256(b"b = 2\n").hexdigest()
    honest = {
        _digest([("f", "a.py", inside), ("f", "b.py", b_digest)]),
        _digest([("l", "a.py", str(secret)), ("f", "b.py", b_digest)]),
    }
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(tree), str(secret)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert swapper.stdout is not None
        assert swapper.stdout.readline().strip() == "ready"
        seen: dict[str, int] = {}
        deadline = time.monotonic() + 60
        for _ in range(ROUNDS):
            try:
                # the swapper's temporary names come and go: only a.py and b.py are judged
                entries = [e for e in iter_tree_entries(tree) if e[1] in ("a.py", "b.py")]
            except (safefs.UnsafeFileError, FileNotFoundError):
                continue  # the tree changed under the digest: refused, never a wrong digest
            got = _digest(entries)
            seen[got] = seen.get(got, 0) + 1
            if time.monotonic() > deadline:
                break
    finally:
        swapper.kill()
        swapper.wait()
        if swapper.stdout is not None:
            swapper.stdout.close()
    assert set(seen) <= honest, f"a digest of neither tree: {seen}"
    assert hashlib.sha256(secret.read_bytes()).hexdigest() not in str(seen)


def test_special_files_in_the_tree_never_block_the_digest(tmp_path: Path) -> None:
    tree = tmp_path / "code"
    tree.mkdir()
    (tree / "a.py").write_text("a = 1\n")
    os.mkfifo(tree / "pipe")
    started = time.monotonic()
    assert tree_digest(tree) == _digest([("f", "a.py", hashlib.sha256(b"a = 1\n").hexdigest())])
    assert time.monotonic() - started < 10
