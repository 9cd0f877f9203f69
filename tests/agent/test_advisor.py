"""The advisor against a real OpenAI-compatible server on loopback with scripted answers."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from reprobridge_sdk.agent.advisor import Advisor, AdvisorConfig, ScriptAnswer, redact
from reprobridge_sdk.agent.reproducer import reproduce
from reprobridge_sdk.model.build import ClaimPlan, EntryPoint, Gate, LauncherPlan, PlanRecord
from reprobridge_sdk.model.claims import Claims

KEY = "sk-test-0123456789abcdefSECRET"


class Scripted:
    """The server's script: answers in order, and what it received."""

    def __init__(self) -> None:
        self.answers: list[str | dict[str, object]] = []
        self.requests: list[dict[str, object]] = []
        self.auth: list[str | None] = []


@pytest.fixture
def server() -> Iterator[tuple[str, Scripted]]:
    script = Scripted()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            script.requests.append(body)
            script.auth.append(self.headers.get("Authorization"))
            if self.path != "/v1/chat/completions":
                self.send_response(404)
                self.end_headers()
                return
            answer = script.answers.pop(0) if script.answers else "{}"
            content = answer if isinstance(answer, str) else json.dumps(answer)
            reply = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        httpd.shutdown()
        httpd.server_close()


CLAIMS = Claims.model_validate(
    {
        "claims_version": "1.0",
        "paper": {"title": "P"},
        "claims": [{"id": "acc", "measured": "accuracy", "value": 0.5, "direction": "higher"}],
    }
)


def _plan() -> PlanRecord:
    smoke = LauncherPlan(
        id="main-smoke", script="main.py", argv=["python", "main.py"], scope="smoke"
    )
    scored = smoke.model_copy(update={"id": "main-scored", "scope": "scored"})
    return PlanRecord(
        inputs_digest="0" * 64,
        seconds=0,
        gate=Gate(passed=True),
        launchers=[smoke, scored],
        claims=[
            ClaimPlan(
                claim="acc", status="planned", smoke="main-smoke", scored="main-scored", basis="x"
            )
        ],
    )


def _repo(tmp_path: Path) -> Path:
    code = tmp_path / "code"
    code.mkdir()
    (code / "main.py").write_text(
        'config = {"learning_rate": 0.1}\n'
        'lr = config["lr"]  # the key was renamed upstream\n'
        'print("accuracy: 0.5", lr)\n',
        "utf-8",
    )
    return code


def test_an_advised_fix_passes_the_gate_and_is_recorded(
    server: tuple[str, Scripted], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = server
    monkeypatch.setenv("REPROBRIDGE_ADVISOR_KEY", KEY)
    script.answers = [
        {
            "file": "main.py",
            "old": 'config["lr"]',
            "new": 'config["learning_rate"]',
            "summary": "read the renamed key",
        }
    ]
    code = _repo(tmp_path)
    advisor = Advisor(AdvisorConfig(base_url=url, model="m"), tmp_path / "advisor.jsonl")
    recorded = []
    result = reproduce(
        CLAIMS,
        _plan(),
        code,
        Path(sys.executable),
        inputs_digest="0" * 64,
        record=lambda fix, failure, tasks: recorded.append((fix.rule, failure.type)) or "c1",
        advise=lambda failure, launcher: advisor.propose_fix(failure, launcher, code),
    )
    assert result.gate.passed, result.gate.findings
    assert [(f.rule, f.source, f.change) for f in result.fixes] == [("advisor", "advisor", "c1")]
    assert recorded == [("advisor", "KeyError")]
    assert script.auth == [f"Bearer {KEY}"]
    assert script.requests[0]["model"] == "m"
    assert advisor.calls == 1 and advisor.tokens == 120


def test_a_wrong_advised_fix_is_rejected_by_the_gate_and_undone(
    server: tuple[str, Scripted], tmp_path: Path
) -> None:
    url, script = server
    script.answers = [
        {
            "file": "main.py",
            "old": "# the key was renamed upstream",
            "new": "# fixed",
            "summary": "a comment edit that fixes nothing",
        }
    ]
    code = _repo(tmp_path)
    before = (code / "main.py").read_text("utf-8")
    advisor = Advisor(AdvisorConfig(base_url=url), tmp_path / "advisor.jsonl")
    result = reproduce(
        CLAIMS,
        _plan(),
        code,
        Path(sys.executable),
        inputs_digest="0" * 64,
        record=lambda *args: pytest.fail("a rejected fix must not be recorded"),
        advise=lambda failure, launcher: advisor.propose_fix(failure, launcher, code),
    )
    assert not result.gate.passed
    assert sorted(f.code for f in result.gate.findings) == ["B007", "B008"]
    assert [f.source for f in result.rejected] == ["advisor"]
    assert (code / "main.py").read_text("utf-8") == before


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ("not json at all", "B014"),
        ({"file": "main.py"}, "B014"),
        ({"file": "../outside.py", "old": "x", "new": "y", "summary": "s"}, "B008"),
        ({"file": "main.py", "old": "absent text", "new": "y", "summary": "s"}, "B008"),
    ],
)
def test_malformed_or_unsafe_answers_are_not_applied(
    server: tuple[str, Scripted], tmp_path: Path, answer: object, code: str
) -> None:
    url, script = server
    script.answers = [answer]  # type: ignore[list-item]
    repo = _repo(tmp_path)
    (tmp_path / "outside.py").write_text("x\n", "utf-8")
    advisor = Advisor(AdvisorConfig(base_url=url), tmp_path / "t.jsonl")
    from reprobridge_sdk.agent.fixes import Failure

    failure = Failure("KeyError", "'lr'", "main.py", 2, (("main.py", 2),), "KeyError: 'lr'")
    assert advisor.propose_fix(failure, _plan().launchers[0], repo) is None
    assert [f.code for f in advisor.findings] == [code]
    assert (tmp_path / "outside.py").read_text("utf-8") == "x\n"


def test_the_budget_stops_the_calls(server: tuple[str, Scripted], tmp_path: Path) -> None:
    url, script = server
    script.answers = [{"script": "a.py"}, {"script": "a.py"}]
    advisor = Advisor(AdvisorConfig(base_url=url, max_calls=1), tmp_path / "t.jsonl")
    entries = [EntryPoint(path="a.py", kinds=["main"])]
    claim = CLAIMS.claims[0]
    assert advisor.choose_script(claim, entries) == ScriptAnswer(script="a.py")
    assert advisor.choose_script(claim, entries) is None
    assert advisor.choose_script(claim, entries) is None
    assert [f.code for f in advisor.findings] == ["B015"]
    assert len(script.requests) == 1


def test_an_answer_naming_no_entry_point_is_rejected(
    server: tuple[str, Scripted], tmp_path: Path
) -> None:
    url, script = server
    script.answers = [{"script": "invented.py"}]
    advisor = Advisor(AdvisorConfig(base_url=url), tmp_path / "t.jsonl")
    entries = [EntryPoint(path="a.py", kinds=["main"])]
    assert advisor.choose_script(CLAIMS.claims[0], entries) is None
    assert [f.code for f in advisor.findings] == ["B008"]


def test_an_unreachable_endpoint_is_b014(tmp_path: Path) -> None:
    advisor = Advisor(
        AdvisorConfig(base_url="http://127.0.0.1:9/v1", timeout=5), tmp_path / "t.jsonl"
    )
    assert (
        advisor.choose_script(CLAIMS.claims[0], [EntryPoint(path="a.py", kinds=["main"])]) is None
    )
    assert [f.code for f in advisor.findings] == ["B014"]


def test_the_transcript_has_every_exchange_and_no_secret(
    server: tuple[str, Scripted], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = server
    monkeypatch.setenv("REPROBRIDGE_ADVISOR_KEY", KEY)
    script.answers = [{"line": 2}]
    advisor = Advisor(AdvisorConfig(base_url=url), tmp_path / "advisor.jsonl")
    log = f"token={KEY}\naccuracy: 0.5\nauth Bearer abc.def.ghi\n"
    assert advisor.choose_line(CLAIMS.claims[0], log) == 2
    text = (tmp_path / "advisor.jsonl").read_text("utf-8")
    assert KEY not in text and "abc.def.ghi" not in text
    [entry] = [json.loads(line) for line in text.splitlines()]
    assert entry["kind"] == "choose-line"
    assert entry["tokens"] == 120
    assert "[REDACTED]" in json.dumps(entry["messages"])
    sent = json.dumps(script.requests[0])
    assert KEY not in sent  # the log's copy of the key is redacted before sending too


def test_redact() -> None:
    assert redact("key sk-abcdefghijklmnop here") == "key [REDACTED] here"
    assert redact("x", ("x",)) == "[REDACTED]"
    assert redact("plain words stay") == "plain words stay"
