"""Settings: command-line flags, then environment variables, then one configuration file.

A file inside an artifact is skipped (N030: an artifact never configures its own check).
Every bad file, key or value is E016, never silently ignored. See spec/runner.md §10.3 and
spec/security.md §15.9.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import finding, registry
from reprobridge_sdk.versions import MANIFEST_NAME

__all__ = [
    "CONFIG_FILE",
    "ENV_PREFIX",
    "ConfigChoice",
    "Settings",
    "artifact_configs",
    "choose_config",
    "color_enabled",
    "distrust",
    "find_config",
    "load_settings",
    "read_config",
    "user_config",
]

#: The stand-alone configuration file (its top-level table holds the settings).
CONFIG_FILE = "reprobridge.toml"
ENV_PREFIX = "REPROBRIDGE_"
_EXECUTOR = re.compile(r"[a-z][a-z0-9_-]{0,63}")
_MAX_BYTES = 1 << 20
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

#: TOML key -> (Settings attribute, kind). Kinds: codes, bool, executor, path, format.
_KEYS: dict[str, tuple[str, str]] = {
    "select": ("select", "codes"),
    "ignore": ("ignore", "codes"),
    "strict": ("strict", "bool"),
    "executor": ("executor", "executor"),
    "cache-dir": ("cache_dir", "path"),
    "report.format": ("report_format", "format"),
    "sign": ("sign", "bool"),
}
_ATTRS = {attr: key for key, (attr, _) in _KEYS.items()}


@dataclass(frozen=True)
class Settings:
    """The effective settings; ``origins`` tells where each non-default value came from.

    An origin is ``"flag"``, ``"env:REPROBRIDGE_..."`` or ``"file:PATH"``.
    """

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    strict: bool = False
    executor: str = "local"
    cache_dir: Path | None = None
    report_format: str = "text"
    sign: bool = False
    config_file: Path | None = None
    origins: Mapping[str, str] = field(default_factory=dict)
    #: Configuration files the search found and skipped: they lie inside an artifact.
    skipped: tuple[Path, ...] = ()


@dataclass(frozen=True)
class ConfigChoice:
    """Which configuration file a process reads (the command line's global options).

    ``isolated`` reads none; ``file`` reads that one and searches for none; ``untrusted``
    are trees whose configuration files the search skips (see :func:`distrust`).
    """

    isolated: bool = False
    file: Path | None = None
    untrusted: tuple[Path, ...] = ()


_choice = ConfigChoice()


def choose_config(*, isolated: bool = False, file: str | os.PathLike[str] | None = None) -> None:
    """Set the process's choice of configuration (``--isolated``, ``--config FILE``).

    The command line calls it once per invocation, before the command; it also forgets
    every tree an earlier invocation distrusted.
    """
    global _choice  # noqa: PLW0603 - one choice per process, like the command line's flags
    if isolated and file is not None:
        raise _error(
            "--isolated and --config exclude each other",
            hint="--isolated reads no configuration file; --config names the one to read",
        )
    _choice = ConfigChoice(isolated, Path(file).absolute() if file is not None else None)


def distrust(tree: str | os.PathLike[str]) -> None:
    """Skip configuration files inside ``tree`` from now on (the thing a command checks)."""
    global _choice  # noqa: PLW0603 - see choose_config
    path = Path(tree).absolute()
    if path not in _choice.untrusted:
        _choice = ConfigChoice(_choice.isolated, _choice.file, (*_choice.untrusted, path))


def user_config(environ: Mapping[str, str] | None = None) -> Path:
    """The user's configuration file (it need not exist)."""
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg else Path(env.get("HOME") or Path.home()) / ".config"
    return base / "reprobridge" / CONFIG_FILE


def _inside_artifact(directory: Path, untrusted: tuple[Path, ...]) -> bool:
    real = directory.resolve()
    trees = {*untrusted, *(tree.resolve() for tree in untrusted)}
    if any(directory.is_relative_to(tree) or real.is_relative_to(tree) for tree in trees):
        return True
    return any(_is_file(above / MANIFEST_NAME) for above in (directory, *directory.parents))


def artifact_configs(artifact: str | os.PathLike[str]) -> list[Path]:
    """The configuration files at the root of ``artifact``: what its author may have meant
    to apply to it, and what a check of it ignores."""
    root = Path(artifact)
    if root.name == MANIFEST_NAME:
        root = root.parent
    if not root.is_dir():  # an archive: nothing of it is read as configuration
        return []
    found = [root / CONFIG_FILE] if _is_file(root / CONFIG_FILE) else []
    pyproject = root / "pyproject.toml"
    if _is_file(pyproject) and _has_tool_table(pyproject):
        found.append(pyproject)
    return found


def _error(message: str, *, file: str = "", line: int = 0, col: int = 0, hint: str) -> UsageError:
    item = finding("E016", message, file=file, line=line, col=col, hint=hint)
    return UsageError(message, [item])


def find_config(
    start: str | os.PathLike[str] | None = None,
    *,
    skipped: list[Path] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path | None:
    """The nearest ``reprobridge.toml`` or ``pyproject.toml`` with ``[tool.reprobridge]``
    outside every artifact, else the user's file (see the module docstring).

    Files skipped because they lie inside an artifact are appended to ``skipped``.
    """
    here = Path(start if start is not None else Path.cwd()).absolute()
    if _is_file(here):
        here = here.parent
    for directory in (here, *here.parents):
        found = [directory / CONFIG_FILE] if _is_file(directory / CONFIG_FILE) else []
        pyproject = directory / "pyproject.toml"
        if _is_file(pyproject) and _has_tool_table(pyproject):
            found.append(pyproject)
        if not found:
            continue
        if not _inside_artifact(directory, _choice.untrusted):
            return found[0]
        if skipped is not None:
            skipped.extend(found)
    user = user_config(environ)
    return user if _is_file(user) else None


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; a place this user may not look into (or a name too long)
    holds none, as for git, rather than stopping the command."""
    try:
        return path.is_file()
    except OSError:
        return False


def _has_tool_table(pyproject: Path) -> bool:
    # A cheap textual test first: most pyproject.toml files never mention the tool. Every
    # folder above the working one is looked at, so at most _MAX_BYTES are read: a larger
    # file counts as naming the tool, and read_config reports it (E016).
    try:
        with pyproject.open("rb") as handle:
            raw = handle.read(_MAX_BYTES + 1)
    except OSError:
        return False
    if len(raw) > _MAX_BYTES:
        return True
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if "reprobridge" not in text:
        return False
    from reprobridge_sdk.io import reading  # noqa: PLC0415 - start-up: only when it names the tool

    try:
        data = reading.parse_toml(text)
    except reading.Unreadable:
        return True  # read_config reports the syntax error with its position
    tool = data.get("tool")
    return isinstance(tool, dict) and "reprobridge" in tool


def _key_position(text: str, key: str) -> tuple[int, int]:
    """Line and column of the first assignment of the last part of ``key`` (1-based)."""
    name = key.rsplit(".", 1)[-1]
    pattern = re.compile(rf"^(\s*)[\"']?{re.escape(name)}[\"']?\s*=", re.MULTILINE)
    match = pattern.search(text)
    if match is None:
        return 0, 0
    line = text.count("\n", 0, match.start()) + 1
    return line, len(match.group(1)) + 1


def read_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The settings of one configuration file, checked, as ``{Settings attribute: value}``."""
    source = Path(path)
    label = str(path)
    text, data = _read_toml(source, label)
    table, where = _settings_table(data, source, label)
    values: dict[str, Any] = {}
    for key, value in _flatten(table).items():
        line, col = _key_position(text, key)
        if key not in _KEYS:
            raise _unknown_key(key, where=where, label=label, line=line, col=col)
        attr, kind = _KEYS[key]
        values[attr] = _convert(
            kind, value, label=f"{key!r} in {label}", file=label, line=line, col=col
        )
        if kind == "path":
            values[attr] = (source.parent / values[attr]).absolute()
    return values


def _read_toml(source: Path, label: str) -> tuple[str, dict[str, Any]]:
    """The text of a configuration file and its table; E016 when it cannot be read."""
    from reprobridge_sdk.io import reading  # noqa: PLC0415 - start-up: only with a file to read

    try:
        text = reading.decode(reading.read_bytes(source, max_bytes=_MAX_BYTES))
        return text, reading.parse_toml(text)
    except reading.Unreadable as exc:
        message, hint = {
            "too-large": (
                f"{label} is larger than {_MAX_BYTES} bytes",
                "a configuration file holds a few settings; is this the right file?",
            ),
            "too-deep": (
                f"{label} nests values too deeply to be read",
                "settings are flat values and lists of strings",
            ),
            "syntax": (
                f"{label} is not valid TOML: {exc.message}",
                "fix the TOML syntax (https://toml.io)",
            ),
        }.get(
            exc.problem,
            (
                f"cannot read the configuration file {label}: {exc.message}",
                "the file must be readable UTF-8 TOML",
            ),
        )
        raise _error(message, file=label, line=exc.line, col=exc.col, hint=hint) from None


def _settings_table(data: dict[str, Any], source: Path, label: str) -> tuple[dict[str, Any], str]:
    """The table that holds the settings, and how to name it in a message."""
    if source.name == "pyproject.toml":
        table = data.get("tool", {}).get("reprobridge", {})
        where = "[tool.reprobridge]"
    else:
        table, where = data, "the top level"
    if not isinstance(table, dict):
        raise _error(
            f"{where} of {label} must be a table",
            file=label,
            hint="write the settings as key = value lines under the table",
        )
    return table, where


def _flatten(table: dict[str, Any]) -> dict[str, Any]:
    """The settings with the ``[report]`` sub-table's keys as ``report.<key>``."""
    flat: dict[str, Any] = {}
    for key, value in table.items():
        if key == "report" and isinstance(value, dict):
            flat.update({f"report.{sub}": item for sub, item in value.items()})
        else:
            flat[key] = value
    return flat


def _unknown_key(key: str, *, where: str, label: str, line: int, col: int) -> UsageError:
    close = difflib.get_close_matches(key, list(_KEYS), n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(_KEYS)}"
    return _error(
        f"unknown setting {key!r} in {where} of {label}", file=label, line=line, col=col, hint=hint
    )


class _Bad:
    """Builds the error for a setting whose value is wrong, at the setting's place."""

    def __init__(self, value: Any, *, label: str, file: str, line: int, col: int) -> None:
        self.value, self.label = value, label
        self.file, self.line, self.col = file, line, col

    def error(self, message: str, hint: str) -> UsageError:
        return _error(message, file=self.file, line=self.line, col=self.col, hint=hint)

    def __call__(self, expected: str, hint: str) -> UsageError:
        return self.error(f"{self.label} must be {expected}, not {self.value!r}", hint)


def _convert(
    kind: str, value: Any, *, label: str, file: str = "", line: int = 0, col: int = 0
) -> Any:
    bad = _Bad(value, label=label, file=file, line=line, col=col)
    return _CONVERTERS[kind](value, bad)


def _codes(value: Any, bad: _Bad) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad("a list of code prefixes", 'e.g. ["S", "R010"]')
    prefixes = tuple(v.strip().upper() for v in value if v.strip())
    known = registry()
    for prefix in prefixes:
        if not any(code.startswith(prefix) for code in known):
            raise bad.error(
                f"{bad.label}: {prefix!r} matches no finding code",
                "codes are listed in the spec's catalogue (e.g. S001, R010, L)",
            )
    return prefixes


def _bool(value: Any, bad: _Bad) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise bad("a boolean", "true or false")


def _executor(value: Any, bad: _Bad) -> str:
    if isinstance(value, str) and _EXECUTOR.fullmatch(value):
        return value
    raise bad("an executor name", 'a lower-case name such as "local"')


def _path(value: Any, bad: _Bad) -> Path:
    if isinstance(value, str) and value and "\0" not in value:
        return Path(value)
    raise bad("a non-empty path", "a directory path, relative or absolute")


def _report_format(value: Any, bad: _Bad) -> str:
    from reprobridge_sdk.plugins import BUILT_IN, REPORT_FORMATS, plugin_names  # noqa: PLC0415

    formats = (*BUILT_IN[REPORT_FORMATS], *plugin_names(REPORT_FORMATS))
    if isinstance(value, str) and value in formats:
        return value
    raise bad("a report format", f"one of {', '.join(formats)}")


_CONVERTERS: dict[str, Callable[[Any, _Bad], Any]] = {
    "codes": _codes,
    "bool": _bool,
    "executor": _executor,
    "path": _path,
    "format": _report_format,
}


def _env_name(key: str) -> str:
    return ENV_PREFIX + key.upper().replace("-", "_").replace(".", "_")


def _from_environ(environ: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    values: dict[str, tuple[Any, str]] = {}
    for key, (attr, kind) in _KEYS.items():
        name = _env_name(key)
        raw = environ.get(name, "")
        if not raw:
            continue
        value = _convert(kind, raw, label=f"${name}")
        if kind == "path":
            value = Path(value).absolute()
        values[attr] = (value, f"env:{name}")
    return values


def load_settings(
    flags: Mapping[str, Any] | None = None,
    *,
    start: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    config: str | os.PathLike[str] | None = None,
) -> Settings:
    """The effective settings: ``flags`` over the environment over the configuration file.

    In ``flags`` ``None`` (or an empty tuple, as click gives for an absent repeatable option)
    means "not given". ``config`` names the file to read instead of searching from ``start``.
    """
    env = os.environ if environ is None else environ
    skipped: list[Path] = []
    if config is not None:
        path: Path | None = Path(config)
    elif _choice.file is not None:
        path = _choice.file
    elif _choice.isolated:
        path = None
    else:
        path = find_config(start, skipped=skipped, environ=env)
    chosen: dict[str, Any] = {}
    origins: dict[str, str] = {}
    if path is not None:
        for attr, value in read_config(path).items():
            chosen[attr], origins[attr] = value, f"file:{path}"
    for attr, (value, origin) in _from_environ(env).items():
        chosen[attr], origins[attr] = value, origin
    for attr, value in (flags or {}).items():
        if attr not in _ATTRS:
            msg = f"unknown setting {attr!r}"
            raise ValueError(msg)
        if value is None or value == ():
            continue
        _, kind = _KEYS[_ATTRS[attr]]
        chosen[attr] = _convert(kind, list(value) if kind == "codes" else value, label=attr)
        if kind == "path":
            chosen[attr] = Path(chosen[attr]).absolute()
        origins[attr] = "flag"
    return Settings(**chosen, config_file=path, origins=origins, skipped=tuple(skipped))


def color_enabled(stream: Any, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to write ANSI colour to ``stream`` (no-color.org, then force-color.org, then TTY)."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR", ""):
        return False
    if env.get("FORCE_COLOR", ""):
        return True
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
