"""The advisor: an optional OpenAI-compatible chat-completions client for decisions the
heuristics cannot settle.

Rules:

* **Off by default.** An :class:`Advisor` exists only when the user passes ``--advisor URL``;
  nothing is sent otherwise. The key is read from an environment variable
  (``REPROBRIDGE_ADVISOR_KEY`` unless configured), never from a file or the command line.
* **Where it is asked.** Only at three decision points: which script produces a claim the
  Planner could not map (:meth:`Advisor.choose_script`), how to fix an error no rule
  classifies (:meth:`Advisor.propose_fix`), and which printed line holds a claim's number
  (:meth:`Advisor.choose_line`).
* **Typed answers.** Every request asks for one JSON object of a fixed shape (a pydantic
  model); an answer that is not that object is B014 and counts as no answer. A typed answer
  is then checked by the same gate as a heuristic proposal before anything is applied: a
  script must be an entry point of the repository; a fix must name a file of the repository
  and a text that occurs in it exactly once, and is applied only as a recorded patch after
  the Reproducer's re-run shows its error gone; a line must exist and its number must
  replay through the extractor.
* **Budgets.** Calls, tokens (as the endpoint reports them in ``usage``) and wall time. A
  spent budget is B015 (once); the heuristics then go on alone.
* **Transcript.** Every exchange is appended to ``.rra-build/advisor.jsonl``: the kind of
  decision, the messages sent, the answer, the tokens and the seconds. The key and anything
  that looks like a credential (``sk-...``, ``Bearer ...``, long hex or base64 tokens) are
  replaced by ``[REDACTED]`` before a line is written; request headers are never stored.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reprobridge_sdk.agent.fixes import Failure, Fix
from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.model.build import BuildFinding, EntryPoint, LauncherPlan
from reprobridge_sdk.model.claims import Claim

__all__ = [
    "DEFAULT_KEY_ENV",
    "Advisor",
    "AdvisorConfig",
    "FixAnswer",
    "LineAnswer",
    "ScriptAnswer",
    "redact",
]

#: Environment variable the key is read from by default.
DEFAULT_KEY_ENV = "REPROBRIDGE_ADVISOR_KEY"
_SECRET = re.compile(
    r"(sk-[A-Za-z0-9_-]{8,}|Bearer\s+\S+|\b[0-9a-fA-F]{32,}\b|\b[A-Za-z0-9+/]{40,}={0,2})"
)

AnswerT = TypeVar("AnswerT", bound=BaseModel)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScriptAnswer(_Answer):
    """Which script (and arguments) produce a claim."""

    script: str = Field(min_length=1, max_length=300)
    args: list[str] = Field(default_factory=list, max_length=50)


class FixAnswer(_Answer):
    """A textual edit of one file: replace ``old`` (occurring once) by ``new``."""

    file: str = Field(min_length=1, max_length=300)
    old: str = Field(min_length=1, max_length=4000)
    new: str = Field(max_length=4000)
    summary: str = Field(min_length=1, max_length=200)


class LineAnswer(_Answer):
    """The 1-based line of the log that holds the claim's number."""

    line: int = Field(ge=1)


@dataclass(frozen=True)
class AdvisorConfig:
    """Where the advisor is and what it may spend."""

    base_url: str
    model: str = "gpt-4o-mini"
    key_env: str = DEFAULT_KEY_ENV
    max_calls: int = 20
    max_tokens: int = 50_000
    max_seconds: float = 600.0
    timeout: float = 60.0


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with the given secrets and credential-like tokens replaced."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[REDACTED]")
    return _SECRET.sub("[REDACTED]", text)


@dataclass
class Advisor:
    """A budgeted, transcribed client of one chat-completions endpoint."""

    config: AdvisorConfig
    transcript: Path
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    findings: list[BuildFinding] = field(default_factory=list)
    _spent: bool = False

    # ------------------------------------------------------------------ transport

    def _key(self) -> str:
        return os.environ.get(self.config.key_env, "")

    def _log(self, entry: dict[str, Any]) -> None:
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        line = redact(json.dumps(entry, ensure_ascii=False), (self._key(),))
        with self.transcript.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def _budget_left(self) -> bool:
        cfg = self.config
        if (
            self.calls < cfg.max_calls
            and self.tokens < cfg.max_tokens
            and self.seconds < cfg.max_seconds
        ):
            return True
        if not self._spent:
            self._spent = True
            self.findings.append(
                build_finding(
                    "B015",
                    f"advisor budget spent ({self.calls} calls, {self.tokens} tokens, "
                    f"{self.seconds:.0f} s)",
                    hint="raise the budget or let the heuristics go on alone",
                )
            )
        return False

    def ask(self, kind: str, question: str, answer: type[AnswerT]) -> AnswerT | None:
        """Ask one typed question; None when the budget is spent or the answer is unusable."""
        if not self._budget_left():
            return None
        schema = json.dumps(answer.model_json_schema(), sort_keys=True)
        messages = [
            {
                "role": "system",
                "content": (
                    "You help build a reproducible artifact of a machine-learning repository. "
                    "Answer with one JSON object and nothing else, following this JSON Schema: "
                    + schema
                ),
            },
            {"role": "user", "content": redact(question, (self._key(),))},
        ]
        body = {
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if self._key():
            headers["Authorization"] = f"Bearer {self._key()}"
        request = urllib.request.Request(  # noqa: S310 - the user gave this URL on purpose
            url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )
        self.calls += 1
        started = time.monotonic()
        entry: dict[str, Any] = {"kind": kind, "model": self.config.model, "messages": messages}
        content: str | None = None
        try:
            if not url.startswith(("http://", "https://")):
                raise ValueError("the advisor URL must be http or https")
            with urllib.request.urlopen(request, timeout=self.config.timeout) as response:  # noqa: S310
                raw = response.read(1_000_000)
            reply = json.loads(raw)
            content = reply["choices"][0]["message"]["content"]
            usage = reply.get("usage") or {}
            used = int(usage.get("total_tokens", 0))
            self.tokens += max(used, 0)
            entry["tokens"] = used
            parsed = answer.model_validate_json(content or "")
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            entry["error"] = str(reason)[:500]
            entry["answer"] = content
            self.findings.append(build_finding("B014", f"advisor ({kind}): {str(reason)[:300]}"))
            return None
        except ValidationError as exc:
            entry["error"] = f"not a {answer.__name__}: {exc.errors()[0]['msg']}"
            entry["answer"] = content
            self.findings.append(build_finding("B014", f"advisor ({kind}): {entry['error']}"))
            return None
        finally:
            self.seconds += time.monotonic() - started
            entry["seconds"] = round(time.monotonic() - started, 3)
            self._log(entry)
        return parsed

    # ------------------------------------------------------------------ decisions

    def choose_script(self, claim: Claim, entries: list[EntryPoint]) -> ScriptAnswer | None:
        """Which entry point produces ``claim``; checked against the entry points."""
        listing = "\n".join(
            f"- {e.path}: prints {e.prints[:8]}; options {[o.flags for o in e.options][:10]}"
            for e in entries[:40]
        )
        question = (
            f"Which script prints the number for the claim {claim.measured!r} "
            f"(published {claim.target:g})? Entry points:\n{listing}"
        )
        answer = self.ask("choose-script", question, ScriptAnswer)
        if answer is None:
            return None
        if answer.script not in {e.path for e in entries}:
            self.findings.append(
                build_finding("B008", f"the advisor named {answer.script!r}, not an entry point")
            )
            return None
        return answer

    def propose_fix(self, failure: Failure, launcher: LauncherPlan, code_dir: Path) -> Fix | None:
        """An edit for an unclassified failure; checked to be a well-formed, local edit."""
        context = ""
        if failure.file and failure.line:
            lines = (code_dir / failure.file).read_text("utf-8", "replace").splitlines()
            low = max(0, failure.line - 8)
            context = "\n".join(
                f"{n + 1}: {text}" for n, text in enumerate(lines[low : failure.line + 5], low)
            )
        question = (
            f"Running `{' '.join(launcher.argv)}` fails:\n{failure.tail}\n\n"
            f"{failure.file}, around line {failure.line}:\n{context}\n\n"
            "Propose the smallest edit that fixes it."
        )
        answer = self.ask("propose-fix", question, FixAnswer)
        if answer is None:
            return None
        target = (code_dir / answer.file).resolve()
        try:
            rel = target.relative_to(code_dir.resolve()).as_posix()
        except ValueError:
            self.findings.append(
                build_finding("B008", f"the advisor's fix names {answer.file!r}, outside the code")
            )
            return None
        if not target.is_file():
            self.findings.append(build_finding("B008", f"the advisor's fix names no file: {rel}"))
            return None
        text = target.read_text("utf-8")
        if text.count(answer.old) != 1:
            self.findings.append(
                build_finding(
                    "B008",
                    f"the advisor's fix must replace text that occurs once in {rel}; "
                    f"it occurs {text.count(answer.old)} times",
                )
            )
            return None
        return Fix(
            rule="advisor",
            kind="execution-fix",
            summary=answer.summary,
            files={rel: text.replace(answer.old, answer.new)},
        )

    def choose_line(self, claim: Claim, log: str) -> int | None:
        """The log line holding the claim's number (checked by the caller's replay)."""
        lines = log.splitlines()[-200:]
        offset = max(0, len(log.splitlines()) - 200)
        numbered = "\n".join(f"{n + 1 + offset}: {t[:200]}" for n, t in enumerate(lines))
        question = (
            f"Which line of this log reports {claim.measured!r} (published {claim.target:g})?"
            f"\n{numbered}"
        )
        answer = self.ask("choose-line", question, LineAnswer)
        if answer is None or answer.line > len(log.splitlines()):
            return None
        return answer.line
