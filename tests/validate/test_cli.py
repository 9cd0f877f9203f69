"""``reprobridge validate`` as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = Path(__file__).parent / "vectors"
EXAMPLE = REPO / "examples" / "digits-logreg"
LINE = re.compile(
    r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): "
    r"(?P<code>[A-Z]\d{3}) (?P<sev>error|warning|info) "
)


def run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "validate", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A folder of artifacts: two valid, one with errors, one with only warnings."""
    shutil.copytree(EXAMPLE, tmp_path / "a-example")
    shutil.copytree(VECTORS / "valid-minimal", tmp_path / "b-minimal")
    shutil.copytree(VECTORS / "misspelled-task-key", tmp_path / "c-broken")
    shutil.copytree(VECTORS / "version-newer-minor-unknown-key", tmp_path / "d-warnings")
    return tmp_path


def test_clean_artifact_exits_0() -> None:
    proc = run(EXAMPLE)
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert "(ok)" in proc.stdout.splitlines()[-1]


def test_findings_exit_1_with_located_lines(tree: Path) -> None:
    proc = run(tree / "c-broken")
    assert proc.returncode == 1
    assert proc.stderr == ""  # diagnostics go to stdout, as ruff prints them
    matches = [LINE.match(line) for line in proc.stdout.splitlines()]
    found = {(m["code"], m["line"], m["col"]) for m in matches if m}
    assert found == {("S002", "20", "5"), ("S001", "22", "5")}
    assert "    hint: did you mean 'metric'?" in proc.stdout
    assert "\x1b[" not in proc.stdout


def test_json_goes_to_stdout_alone(tree: Path) -> None:
    proc = run("--format", "json", tree)
    assert proc.returncode == 1
    assert proc.stderr == ""
    report = json.loads(proc.stdout)
    assert report["format_version"] == 1
    by_path = {Path(a["path"]).name: a for a in report["artifacts"]}
    assert sorted(by_path) == ["a-example", "b-minimal", "c-broken", "d-warnings"]
    assert by_path["a-example"]["ok"] is True
    assert by_path["c-broken"]["counts"] == {"errors": 2, "warnings": 0, "infos": 0}
    assert {f["code"] for f in by_path["d-warnings"]["findings"]} == {"V003", "S005"}
    assert report["summary"] == {
        "artifacts": 4,
        "errors": 2,
        "warnings": 2,
        "infos": 0,
        "ok": False,
    }
    first = by_path["c-broken"]["findings"][0]
    assert set(first) == {
        "code",
        "severity",
        "message",
        "path",
        "file",
        "line",
        "col",
        "hint",
        "spec",
    }


def test_strict_turns_warnings_into_errors(tree: Path) -> None:
    assert run(tree / "d-warnings").returncode == 0
    proc = run("--strict", "--format", "json", tree / "d-warnings")
    assert proc.returncode == 1
    severities = {f["severity"] for f in json.loads(proc.stdout)["artifacts"][0]["findings"]}
    assert severities == {"error"}


def test_select_and_ignore_by_prefix(tree: Path) -> None:
    proc = run("--format", "json", "--select", "S00", tree / "c-broken")
    codes = [f["code"] for f in json.loads(proc.stdout)["artifacts"][0]["findings"]]
    assert sorted(codes) == ["S001", "S002"]
    proc = run("--format", "json", "--ignore", "S001,S002", tree / "c-broken")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["artifacts"][0]["findings"] == []
    proc = run("--format", "json", "--select", "S", "--ignore", "S002", tree / "c-broken")
    assert [f["code"] for f in json.loads(proc.stdout)["artifacts"][0]["findings"]] == ["S001"]


@pytest.mark.parametrize(
    "args",
    [
        ("--select", "Q9"),
        ("--ignore", "nothing"),
        ("--format", "yaml"),
        ("-j", "0"),
        ("does-not-exist",),
    ],
)
def test_usage_errors_exit_2(tree: Path, args: tuple[str, ...]) -> None:
    proc = run(*args, tree / "b-minimal", cwd=tree)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    # a usage error on stderr; a path that does not exist is a finding (Y010), on stdout
    said = proc.stderr if proc.stderr.strip() else proc.stdout
    assert args[-1].lower() in said.strip().splitlines()[-1].lower()  # names the value


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_a_nonexistent_path_still_gives_a_machine_report(tmp_path: Path, fmt: str) -> None:
    """An I/O error (exit 2) under --format json prints JSON all the same, with Y010."""
    proc = run("--format", fmt, tmp_path / "no-such-dir")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    if fmt == "json":
        report = json.loads(proc.stdout)
        assert [f["code"] for f in report["artifacts"][0]["findings"]] == ["Y010"]
        assert report["summary"]["ok"] is False
    else:
        assert "Y010" in proc.stdout
    text = run(tmp_path / "no-such-dir")
    assert text.returncode == 2
    assert text.stdout.count("Y010") == 1  # printed once, on stdout
    assert "Y010" not in text.stderr


def test_directory_without_artifacts_is_y010(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = run("--format", "json", tmp_path / "empty")
    assert proc.returncode == 1
    assert [f["code"] for f in json.loads(proc.stdout)["artifacts"][0]["findings"]] == ["Y010"]


def test_default_path_is_the_current_directory(tree: Path) -> None:
    proc = run("--format", "json", cwd=tree / "b-minimal")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["artifacts"][0]["path"] == "."


def test_manifest_file_as_path(tree: Path) -> None:
    proc = run("--format", "json", tree / "c-broken" / "rra.yaml")
    assert proc.returncode == 1
    finding = json.loads(proc.stdout)["artifacts"][0]["findings"][0]
    assert finding["file"] == str(tree / "c-broken" / "rra.yaml")


def test_output_file(tree: Path) -> None:
    out = tree / "report.sarif"
    proc = run("--format", "sarif", "--output", out, tree / "c-broken")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert json.loads(out.read_text())["version"] == "2.1.0"


def test_parallel_gives_the_same_report(tree: Path) -> None:
    for index in range(12):
        shutil.copytree(VECTORS / "valid-minimal", tree / f"e-copy-{index:02d}")
    serial = run("--format", "json", tree)
    parallel = run("--format", "json", "-j", "2", tree)
    assert serial.returncode == parallel.returncode == 1
    assert json.loads(serial.stdout) == json.loads(parallel.stdout)
    assert len(json.loads(serial.stdout)["artifacts"]) == 16


def test_fail_fast_stops_at_the_first_failed_artifact(tree: Path) -> None:
    proc = run("--format", "json", "--fail-fast", tree)
    artifacts = json.loads(proc.stdout)["artifacts"]
    assert [Path(a["path"]).name for a in artifacts] == ["a-example", "b-minimal", "c-broken"]
    assert len(artifacts[-1]["findings"]) == 1


def test_no_files_skips_file_layers(tree: Path) -> None:
    shutil.rmtree(tree / "b-minimal" / "samples")
    proc = run("--format", "json", tree / "b-minimal")
    assert proc.returncode == 1
    found = json.loads(proc.stdout)["artifacts"][0]["findings"]
    assert [(f["code"], f["path"]) for f in found] == [("F004", "/launchers/0/samples/0/log")]
    proc = run("--format", "json", "--no-files", tree / "b-minimal")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["artifacts"][0]["findings"] == []


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(root)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_nothing_on_disk_changes(tree: Path) -> None:
    for case in sorted(VECTORS.iterdir()):
        if case.name not in {
            "valid-minimal",
            "misspelled-task-key",
            "version-newer-minor-unknown-key",
        }:
            shutil.copytree(case, tree / f"v-{case.name}")
    before = _snapshot(tree)
    listing = sorted(p.name for p in tree.rglob("*"))
    for fmt in ("text", "json", "sarif", "junit"):
        run("--format", fmt, tree)
    run("-j", "2", tree)
    assert _snapshot(tree) == before
    assert sorted(p.name for p in tree.rglob("*")) == listing


@pytest.mark.parametrize("case", sorted(p.name for p in VECTORS.iterdir()))
def test_bad_input_never_gives_a_traceback(case: str) -> None:
    proc = run(VECTORS / case)
    assert proc.returncode in (0, 1)
    assert proc.stderr == ""
    assert proc.stdout.splitlines()[-1].startswith("1 artifact checked:")


def _on_tty(path: Path, env: dict[str, str]) -> str:
    primary, secondary = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-m", "reprobridge_sdk", "validate", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=subprocess.DEVNULL,
            env=env,
            check=False,
            timeout=60,
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(primary)


def test_colour_only_on_a_tty_and_never_with_no_color(tree: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[31m" in _on_tty(tree / "c-broken", env)
    assert "\x1b[" not in _on_tty(tree / "c-broken", {**env, "NO_COLOR": "1"})


def test_validate_path_imports_no_pydantic_jsonschema_or_ruamel() -> None:
    code = (
        "import sys\n"
        "from reprobridge_sdk.cli import main\n"
        "try:\n"
        f"    main(['validate', {str(EXAMPLE)!r}])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "heavy = {'pydantic', 'jsonschema', 'ruamel', 'pydantic_core'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_help_imports_no_command_modules() -> None:
    code = (
        "import sys\n"
        "from reprobridge_sdk.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('reprobridge_sdk.')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    # ``_forward`` and ``_lazy``: the package root's import-free registration point and its
    # lazy-name loader (they import nothing of the SDK)
    assert proc.stdout.strip().splitlines()[-1] == (
        "['reprobridge_sdk._forward', 'reprobridge_sdk._lazy', 'reprobridge_sdk.cli']"
    )


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (
            b"a: &a [x, x, x, x, x, x, x, x, x]\n"
            + b"".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n".encode()
                for i in range(9)
            ),
            "Y004",
        ),
        (b"a: " + b"[" * 200_000 + b"]" * 200_000 + b"\n", "Y005"),
        (b"# " + b"x" * (9 * 1024 * 1024) + b"\n", "Y006"),
        (b"rra_version: '1.0'\nartifact: {title: caf\xe9}\n", "Y007"),
        (b"rra_version: '1.0'\nartifact: !!python/object:os.system {}\n", "Y008"),
        (b"\x00\x01\x02 not yaml at all \xff", "Y007"),
    ],
    ids=["alias-bomb", "deep", "huge", "not-utf8", "python-tag", "binary"],
)
def test_hostile_manifests_give_located_findings(tmp_path: Path, content: bytes, code: str) -> None:
    (tmp_path / "rra.yaml").write_bytes(content)
    proc = run("--format", "json", tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == ""
    findings = json.loads(proc.stdout)["artifacts"][0]["findings"]
    located = [f for f in findings if f["code"] == code]
    assert len(located) == 1
    assert located[0]["line"] >= 1
    assert located[0]["col"] >= 1
