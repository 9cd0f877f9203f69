"""Helpers of the authoring tests: real git repositories and a loopback git server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Paper Author",
    "GIT_AUTHOR_EMAIL": "author@example.org",
    "GIT_COMMITTER_NAME": "Paper Author",
    "GIT_COMMITTER_EMAIL": "author@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

#: The paper's code: ``train.py`` has a real defect (it reads the seed flag but never seeds
#: the generator, so a run cannot be repeated), which the tests fix with ``code record``.
TRAIN_PY = '''\
"""Train a tiny model and print its accuracy."""

import argparse
import random


def accuracy(rng, steps):
    return sum(rng.random() < 0.9 for _ in range(steps)) / steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    rng = random.Random()
    print("training started", flush=True)
    value = accuracy(rng, args.steps)
    print("training finished", flush=True)
    print(f"accuracy: {value:.4f}", flush=True)


if __name__ == "__main__":
    main()
'''

FIXED_LINE = "    rng = random.Random(args.seed)\n"
DEFECT_LINE = "    rng = random.Random()\n"


def run_git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.strip()


def make_paper_repo(path: Path) -> str:
    """A git repository holding the paper's code; returns its commit."""
    path.mkdir(parents=True)
    run_git("init", "-q", "-b", "main", cwd=path)
    (path / "train.py").write_text(TRAIN_PY, "utf-8")
    (path / "README.md").write_text(
        "# Tiny paper\n\nInstall: `pip install -r requirements.txt`\n\n"
        "Run:\n\n```\npython train.py --seed 1\n```\n",
        "utf-8",
    )
    (path / "requirements.txt").write_text("", "utf-8")
    run_git("add", "-A", cwd=path)
    run_git("commit", "-q", "-m", "paper code", cwd=path)
    return run_git("rev-parse", "HEAD", cwd=path)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """Serve the repositories under ``base`` with a real ``git daemon`` on loopback."""
    port = free_port()
    process = subprocess.Popen(
        [
            "git",
            "daemon",
            "--export-all",
            "--reuseaddr",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={base}",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120  # generous: the daemon is slow to start under load
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None, "git daemon exited before it listened"
            assert time.monotonic() < deadline, "git daemon did not listen"
            time.sleep(0.05)
        yield f"git://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def reprobridge(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def series_artifact(tmp_path: Path) -> Path:
    """An artifact whose refined code is a one-patch series on a local upstream (made in
    ``tmp_path / "paper"``), its checkout in ``code/``."""
    from reprobridge_sdk.authoring.codebase import import_code, record_patch
    from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold

    make_paper_repo(tmp_path / "paper")
    root = tmp_path / "artifact"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    train = root / "code" / "train.py"
    train.write_text(train.read_text("utf-8").replace(DEFECT_LINE, FIXED_LINE), "utf-8")
    record_patch(root, kind="correctness-fix", why="Seed the generator.", tasks=["main-result"])
    return root
