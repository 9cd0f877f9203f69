"""The documents: the generated reference is current, the site builds with a strict link
check, and the README, CONTRIBUTING.md and CHANGELOG.md keep their shape.

The site is built by MkDocs (``mkdocs.yml``); ``docs/tools/mkdocs_hooks.py`` checks the links
that leave ``docs/`` (to the specification, the examples, CONTRIBUTING.md), so a broken link
anywhere in the site fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "docs" / "tools"
README = REPO / "README.md"
#: Keep a Changelog's kinds of change, and the project's own ``Performance``.
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security", "Performance"}


def _tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _clean_env() -> dict[str, str]:
    """This environment without the settings that change a command's defaults."""
    return {k: v for k, v in os.environ.items() if not k.startswith("REPROBRIDGE_")}


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=config.parent,
        env=_clean_env(),
        timeout=600,
        check=False,
    )


def test_the_generated_reference_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(TOOLS / "gen_reference.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=_clean_env(),
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_stale_reference_page_fails_the_check_and_is_rewritten(tmp_path: Path) -> None:
    generator = _tool("gen_reference")
    shutil.copytree(REPO / "docs" / "reference", tmp_path, dirs_exist_ok=True)
    codes = tmp_path / "codes.md"
    current = codes.read_text("utf-8")
    codes.write_text(current.replace("### Y001 not-yaml", "### Y001 renamed"), "utf-8")
    (tmp_path / "commands.md").unlink()
    assert generator.main(["--check"], reference=tmp_path) == 1
    assert "Y001 renamed" in codes.read_text("utf-8")  # --check writes nothing
    assert not (tmp_path / "commands.md").exists()
    assert generator.main([], reference=tmp_path) == 0
    assert codes.read_text("utf-8") == current
    assert generator.main(["--check"], reference=tmp_path) == 0


def test_every_code_and_every_command_is_in_the_reference() -> None:
    import json

    codes = (REPO / "docs" / "reference" / "codes.md").read_text("utf-8")
    registry = json.loads((REPO / "validators" / "codes.json").read_text("utf-8"))["codes"]
    for entry in registry:
        assert f'<a id="{entry["code"]}"></a>' in codes
        assert entry["why"] in codes and entry["fix"] in codes
    commands = (REPO / "docs" / "reference" / "commands.md").read_text("utf-8")
    for name in ("validate", "audit", "code record", "references add", "export ro-crate"):
        assert f"\n## reprobridge {name}\n" in commands


def test_the_site_builds_with_a_strict_link_check(tmp_path: Path) -> None:
    done = _mkdocs(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "guides" / "evaluate-submissions" / "index.html").read_text()
    # a link that leaves docs/ points at the file in the repository
    assert "https://github.com/reprobridge/reprobridge/blob/main/spec/security.md" in page


def test_a_broken_link_out_of_the_docs_fails_the_build(tmp_path: Path) -> None:
    """Hostile: links to a missing file, a missing anchor and a file above the repository."""
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "present.md").write_text('# Present\n\n<a id="here"></a>\n\n## A heading\n')
    (tmp_path / "outside.md").write_text("# Outside the repository\n")
    config = repo / "mkdocs.yml"
    config.write_text(
        f"site_name: t\nrepo_url: https://example.org/r\nhooks:\n  - {TOOLS / 'mkdocs_hooks.py'}\n"
    )
    good = "[a](../present.md#here) [b](../present.md#a-heading) [c](../present.md)\n"
    (repo / "docs" / "index.md").write_text(good)
    done = _mkdocs(config, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (
        'href="https://example.org/r/blob/main/present.md#here"'
        in (tmp_path / "site" / "index.html").read_text()
    )
    for link in ("../missing.md", "../present.md#nowhere", "../../outside.md"):
        (repo / "docs" / "index.md").write_text(f"{good}[x]({link})\n")
        done = _mkdocs(config, tmp_path / "site")
        assert done.returncode == 1, link
        assert f"the link '{link}'" in done.stderr


def _links(text: str) -> list[str]:
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def test_the_readme_and_contributing_links_resolve() -> None:
    hooks = _tool("mkdocs_hooks")
    for document in (README, REPO / "CONTRIBUTING.md", REPO / "CHANGELOG.md"):
        for link in _links(document.read_text("utf-8")):
            name, _, anchor = link.partition("#")
            target = (document.parent / name).resolve() if name else document
            assert target.exists(), f"{document.name}: {link}"
            if anchor and target.suffix == ".md":
                assert anchor in hooks.anchors(target), f"{document.name}: {link}"


def test_the_readme_is_short_and_keeps_its_quickstart() -> None:
    text = README.read_text("utf-8")
    assert len(text.splitlines()) <= 200
    quickstart = text[text.index("## Quickstart") :].split("\n## ")[0]
    blocks = re.findall(r"```sh\n(.*?)\n```", quickstart, flags=re.S)
    assert blocks == [
        "python -m pip install . && reprobridge validate examples/digits-logreg && "
        "reprobridge run examples/digits-logreg -j 2 && reprobridge audit examples/digits-logreg",
        "python -m pip install -e '.[test]' && python -m pytest",
    ]
    # CI runs the second command word for word
    assert re.search(f"^{re.escape(blocks[1])}$", (REPO / ".ci" / "run").read_text(), re.M)


def test_contributing_covers_what_a_contributor_needs() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text("utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    for needed in (
        "The layers of the package",
        "Add an extractor kind",
        "Add a finding code",
        "Add a manifest field",
        "Changes, commits and branches",
    ):
        assert needed in headings
    assert "72 characters" in text and "squash-merged" in text
    assert "CONTRIBUTING.md" in README.read_text("utf-8")


def test_the_changelog_is_in_released_sections() -> None:
    text = (REPO / "CHANGELOG.md").read_text("utf-8")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    titles = [s.splitlines()[0] for s in sections]
    assert titles[0] == "[Unreleased]"
    released = titles[1:]
    assert released, "no released section"
    dates = []
    for title in released:
        match = re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})", title)
        assert match, title
        dates.append(match.group(2))
    assert dates == sorted(dates, reverse=True)  # newest first
    for section in sections:
        kinds = re.findall(r"^### (.+)$", section, flags=re.M)
        assert set(kinds) <= KINDS, kinds
        assert len(kinds) == len(set(kinds)), f"a kind twice in {section.splitlines()[0]}"
