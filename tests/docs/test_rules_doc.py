"""docs/rules.md against the code: every cited rule is defined, the board tables and the SVG are
what arena/engine/board.py says, the dice stream is exact enough to reimplement, and every field
of a game record is documented."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from arena.engine import FACES, LOUNGERS, TRACK, play_game, stream_faces
from arena.engine.board import COLOURS, DIVING_BOARD_NAME, blocked_by
from arena.engine.notation import format_throw
from arena.engine.policies import make_policy
from arena.referee.faults import Reason
from arena.rulesdoc import BOARD_SVG, GENERATORS, board_svg, fill_blocks, generated_blocks

from .rulesdoc_helpers import (
    CITATION,
    REPO,
    code,
    defined_rules,
    rules_text,
    section,
    section_numbers,
    tables,
)

SOURCE_SUFFIXES = (".py", ".js", ".html", ".md", ".proto")


def _source_files(*folders: str) -> list[Path]:
    return sorted(
        p
        for folder in folders
        for p in (REPO / folder).rglob("*")
        if p.is_file() and p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts
    )


# ---- rule ids ------------------------------------------------------------------------------


def test_rules_r1_to_r28_are_each_defined_once_in_order() -> None:
    assert defined_rules(rules_text()) == list(range(1, 29))


def test_every_rule_cited_in_arena_and_tests_is_defined() -> None:
    defined = set(defined_rules(rules_text()))
    cited: dict[int, list[str]] = {}
    for path in _source_files("arena", "tests"):
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for m in CITATION.finditer(line):
                cited.setdefault(int(m.group(1)), []).append(f"{path.relative_to(REPO)}:{n}")
    assert len(cited) >= 28, "the scan found too few citations: is it reading the right folders?"
    undefined = {f"R{k}": where[:3] for k, where in cited.items() if k not in defined}
    assert not undefined, f"rules cited but not defined in docs/rules.md: {undefined}"


def test_every_section_cited_as_rules_md_exists() -> None:
    """``rules.md §6`` / ``rules.md section 6`` in the code, the tests and the docs point at a
    numbered section of docs/rules.md (the numbers are part of the contract)."""
    sections = section_numbers(rules_text())
    assert {"1", "3", "4", "5", "6", "6.4", "7"} <= sections
    cite = re.compile(r"rules\.md\)?\s*(?:§|section )(\d+(?:\.\d+)?)")
    missing = []
    for path in [*_source_files("arena", "tests", "proto", "docs", "bots"), REPO / "README.md"]:
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in cite.finditer(text):
            if m.group(1) not in sections:
                missing.append(f"{path.relative_to(REPO)}: §{m.group(1)}")
    assert not missing, missing


# ---- the generated parts ---------------------------------------------------------------------


def test_generated_tables_are_up_to_date() -> None:
    text = rules_text()
    blocks = generated_blocks(text)
    assert set(blocks) == set(GENERATORS), "a generated block is missing from docs/rules.md"
    for name, make in GENERATORS.items():
        assert blocks[name] == make(), f"block {name!r} is stale: run python scripts/rules_tables.py"
    assert fill_blocks(text) == text


def test_a_stale_table_is_detected_and_regenerated() -> None:
    text = rules_text()
    stale = text.replace("| 13 | `red-3` | red | 3 |", "| 13 | `red-3` | red | 4 |")
    assert stale != text
    assert generated_blocks(stale)["loungers"] != GENERATORS["loungers"]()
    assert fill_blocks(stale) == text


def test_lounger_table_matches_the_board() -> None:
    """Read independently of the generator: every row is the engine's lounger."""
    (rows,) = [t for t in tables(section(rules_text(), "1")) if t and t[0][:2] == ["0", "`green-4a`"]]
    assert len(rows) == len(LOUNGERS) == 26
    for row, lo in zip(rows, LOUNGERS, strict=True):
        ident, name, colour, value = int(row[0]), code(row[1]), row[2], int(row[3])
        assert (ident, name, value) == (lo.id, lo.name, lo.value)
        assert colour == (COLOURS[lo.colour] if lo.colour is not None else "none (a five-lounger)")


def test_track_table_matches_the_board() -> None:
    (rows,) = [t for t in tables(section(rules_text(), "1")) if t and t[0][1] == f"`{DIVING_BOARD_NAME}`"]
    assert int(rows[0][0]) == -1 and rows[0][3] == "nothing"
    assert len(rows) == 1 + len(TRACK)
    for row, field in zip(rows[1:], TRACK, strict=True):
        assert (int(row[0]), code(row[1])) == (field.index, field.name)
        names = set(re.findall(r"`([^`]+)`", row[3]))
        assert names == {LOUNGERS[i].name for i in blocked_by(field.index)}


def test_board_svg_is_up_to_date_and_shows_every_id() -> None:
    committed = BOARD_SVG.read_text(encoding="utf-8")
    assert committed == board_svg(), "docs/board.svg is stale: run python scripts/board_svg.py"
    root = ET.fromstring(committed)
    ns = {"s": "http://www.w3.org/2000/svg"}
    groups = {g.get("id"): g for g in root.iter("{http://www.w3.org/2000/svg}g")}
    for lo in LOUNGERS:
        g = groups[f"lounger-{lo.id}"]
        texts = [t.text for t in g.findall("s:text", ns)]
        assert g.get("data-name") == lo.name and texts == [str(lo.value), str(lo.id), lo.name]
    for field in TRACK:
        g = groups[f"field-{field.index}"]
        assert [t.text for t in g.findall("s:text", ns)] == [str(field.index), field.name]
    assert "](board.svg)" in rules_text()


# ---- the dice stream (§5) --------------------------------------------------------------------


def _reference_stream() -> object:
    text = section(rules_text(), "5")
    m = re.search(r"<!-- stream-reference -->\n```python\n(.*?)```", text, flags=re.DOTALL)
    assert m, "§5 lost its reference implementation"
    namespace: dict[str, object] = {}
    exec(compile(m.group(1), "docs/rules.md §5", "exec"), namespace)  # the documented code, as written
    return namespace["stream_faces"]


def test_the_documented_stream_is_the_engines() -> None:
    reference = _reference_stream()
    assert callable(reference)
    rng = random.Random(20261201)
    cases = [(0, 1, 1), (2**63 - 1, 1, 1), (8146625516662860959, 12, 3)]
    cases += [(rng.randrange(2**63), rng.randrange(1, 500), rng.randrange(1, 12)) for _ in range(2000)]
    for seed, turn, throw in cases:
        assert list(reference(seed, turn, throw)) == list(stream_faces(seed, turn, throw)), (
            seed,
            turn,
            throw,
        )


def test_the_stream_vectors_and_the_worked_throw() -> None:
    text = section(rules_text(), "5")
    rows = next(t for t in tables(text) if t)
    assert len(rows) >= 5
    for seed, turn, throw, faces in rows:
        shown = [FACES.index(f.strip()) for f in faces.split(",")]
        assert shown == list(stream_faces(int(seed), int(turn), int(throw)))
    first = stream_faces(0, 1, 1)
    assert f"`{format_throw(first)}`" in text
    assert f"`{format_throw(first[:4])}`" in text


# ---- the game record (§6.4) -------------------------------------------------------------------


def documented_fields() -> dict[str, set[str]]:
    """Field names of §6.4's tables: header, throw, decision, result, and the forfeit entries."""
    kinds = ("header", "throw", "decision", "result")
    found = [t for t in tables(section(rules_text(), "6.4")) if t]
    assert len(found) == len(kinds), "§6.4 should have one table per kind of line"
    out = {kind: {code(row[0]) for row in rows} for kind, rows in zip(kinds, found, strict=True)}
    (forfeits,) = [row for row in found[3] if row[0] == "`forfeits`"]
    out["forfeit"] = set(re.findall(r"`([a-z_]+)`\s*(?:\(|;)", forfeits[2]))
    return out


def record_keys(text: str) -> dict[str, set[str]]:
    """The keys used on each kind of line of a record."""
    import json

    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    keys: dict[str, set[str]] = {k: set() for k in ("header", "throw", "decision", "result", "forfeit")}
    keys["header"] |= set(lines[0])
    keys["result"] |= set(lines[-1])
    for f in lines[-1].get("forfeits", []):
        keys["forfeit"] |= set(f)
    for obj in lines[1:-1]:
        keys["throw" if "throw" in obj else "decision"] |= set(obj)
    return keys


def test_documented_fields_cover_the_referees() -> None:
    documented = documented_fields()
    assert documented["header"] >= {"game", "rules", "players", "seed", "match", "seating", "time_control"}
    assert documented["decision"] >= {"seat", "legal", "action", "forced", "auto", "ms", "cpu_ms", "away_ms"}
    assert documented["result"] >= {"scores", "placings", "termination", "forfeits", "think_s", "cpu_s"}
    assert documented["forfeit"] == {"seat", "reason", "detail", "at_event", "evidence"}
    reasons = section(rules_text(), "6.4")
    for reason in Reason:
        assert f"`{reason.value}`" in reasons, f"forfeit reason {reason.value} is not documented"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_an_engine_record_uses_only_documented_fields(players: int) -> None:
    policies = [make_policy("greedy" if k % 2 else "random", players, k) for k in range(players)]
    game = play_game(players, policies)
    keys = record_keys(game.record)
    documented = documented_fields()
    for kind, used in keys.items():
        assert used <= documented[kind], f"{kind} line: undocumented {used - documented[kind]}"
