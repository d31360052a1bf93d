"""README commands paste as they are: every line of a ``sh`` block is valid shell with no synopsis
notation (``a | b`` alternatives, ``[--option]``, ``...``), and every ``arena`` line names a real
command (resolved through the CLI's own command tree, as ``arena`` would)."""

from __future__ import annotations

import re
import shlex
import shutil

import typer

from arena.cli.main import build_app

from .helpers import ROOT

SHELL_BLOCK = re.compile(r"^```(?:sh|bash|shell)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def commands() -> list[str]:
    """The command lines of the README's shell blocks (comments and continuations joined)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out: list[str] = []
    for block in SHELL_BLOCK.findall(text):
        pending = ""
        for raw in block.splitlines():
            line = pending + raw
            if line.rstrip().endswith("\\"):
                pending = line.rstrip()[:-1] + " "
                continue
            pending = ""
            code = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
            if code:
                out.append(code)
    return out


def test_the_readme_has_shell_blocks() -> None:
    assert len(commands()) > 20


def tokens(line: str) -> list[str]:
    """Shell words and operators (``|``, ``>``, ... apart), quotes removed; unbalanced quotes raise."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def test_no_synopsis_notation_in_commands() -> None:
    """A pipe must feed a real program (``arena bots list | show mybot`` piped into a ``show``
    that does not exist); ``[--option]``, ``a|b`` and ``...`` are notation, not shell."""
    bad = []
    for line in commands():
        words = tokens(line)
        piped_into = [words[k + 1] for k, w in enumerate(words[:-1]) if w == "|"]
        if (
            any(shutil.which(p) is None and p != "arena" for p in piped_into)
            or words[-1] == "|"
            or any(w.startswith("[") or "..." in w for w in words)
        ):
            bad.append(line)
    assert not bad, "README lines that do not paste into a shell:\n" + "\n".join(bad)


def test_the_old_tour_line_is_caught() -> None:
    line = "arena bots list | show mybot | remove mybot"
    assert [tokens(line)[k + 1] for k, w in enumerate(tokens(line)) if w == "|"] == ["show", "remove"]
    assert shutil.which("show") is None


def test_every_arena_line_names_a_real_command() -> None:
    root = typer.main.get_command(build_app())
    ctx = root.make_context("arena", ["--help"], resilient_parsing=True)
    missing = []
    for line in commands():
        words = tokens(line)
        if not words or words[0] != "arena":
            continue
        group, path = root, ["arena"]
        for word in words[1:]:
            get = getattr(group, "get_command", None)
            if get is None or word.startswith("-"):
                break
            sub = get(ctx, word)
            if sub is None:
                if len(path) == 1 or hasattr(sub, "get_command"):
                    missing.append(line)
                break
            group, path = sub, [*path, word]
        if hasattr(group, "get_command") and not getattr(group, "invoke_without_command", False):
            missing.append(line)  # stopped at a group: the subcommand is missing
    assert not missing, "README lines naming no arena command:\n" + "\n".join(missing)
