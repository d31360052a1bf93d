"""Nothing in the repository links outside it: every Markdown link of README.md, docs/*.md and
proto/README.md resolves to a file of the repository (and to an anchor of it, where one is
given), and no file points at the old ``../shared`` documents."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from arena.web.markdown import anchors, links

from .rulesdoc_helpers import REPO

DOCUMENTS = sorted({REPO / "README.md", REPO / "proto" / "README.md", *(REPO / "docs").glob("*.md")})


def broken_links(path: Path, root: Path) -> list[str]:
    """What is wrong with the links of the Markdown file ``path`` (empty when every one resolves
    inside ``root``): external or absolute targets, missing files, missing anchors."""
    problems: list[str] = []
    text = path.read_text(encoding="utf-8")
    for link in links(text):
        where = f"{path.relative_to(root)}:{link.line}: {link.target!r}"
        parts = urlsplit(link.target)
        if parts.scheme or parts.netloc:
            problems.append(f"{where} leaves the repository (a URL)")
            continue
        if parts.path.startswith("/"):
            problems.append(f"{where} is an absolute path")
            continue
        target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
        if not target.is_relative_to(root.resolve()):
            problems.append(f"{where} points outside the repository")
            continue
        if not target.exists():
            problems.append(f"{where}: no such file")
            continue
        if parts.fragment:
            if target.suffix != ".md":
                problems.append(f"{where}: an anchor into a file that is not Markdown")
            elif unquote(parts.fragment) not in anchors(target.read_text(encoding="utf-8")):
                problems.append(f"{where}: {target.name} has no anchor #{parts.fragment}")
    return problems


def test_the_documents_exist() -> None:
    names = {p.relative_to(REPO).as_posix() for p in DOCUMENTS}
    assert {"README.md", "proto/README.md", "docs/rules.md"} <= names


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_link_resolves_inside_the_repository(path: Path) -> None:
    assert links(path.read_text(encoding="utf-8")), f"{path} has no links at all?"
    problems = broken_links(path, REPO)
    assert not problems, "\n".join(problems)


def test_the_checker_catches_each_kind_of_broken_link(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## 5. The dice stream\n", encoding="utf-8")
    doc = tmp_path / "docs" / "page.md"
    doc.write_text(
        "# Page\n\n"
        "[ok](other.md#5-the-dice-stream) [ok too](#page) `[not a link](../x.md)`\n"
        "[shared](../../shared/rules.md) [web](https://example.org/rules) [abs](/etc/passwd)\n"
        "[missing](nothing.md) [bad anchor](other.md#6-notation) [self](#nowhere)\n"
        '<a href="gone.md">html</a>\n',
        encoding="utf-8",
    )
    problems = broken_links(doc, tmp_path)
    assert len(problems) == 7, problems
    text = "\n".join(problems)
    for fragment in (
        "outside the repository",
        "(a URL)",
        "absolute path",
        "no such file",
        "#6-notation",
        "#nowhere",
        "gone.md",
    ):
        assert fragment in text


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
        ).stdout
        files = [REPO / name for name in out.splitlines()]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk the folders
        files = [p for p in REPO.rglob("*") if ".venv" not in p.parts and ".git" not in p.parts]
    return [p for p in files if p.is_file()]


def test_nothing_points_at_the_documents_outside_the_repository() -> None:
    outside = ["../" + "shared", "shared/" + "rules.md", "shared/" + "design.md", "design" + ".md"]
    me = Path(__file__).resolve()
    found = []
    for path in _tracked_files():
        if path.resolve() == me or path.suffix in (".png", ".pyc", ".gz", ".db"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{path.relative_to(REPO)}: {p}" for p in outside if p in text]
    assert not found, found
