"""Seeds kept secret while their games are played come from the operating system's randomness
(:func:`arena.seeds.secret_seed`), never from :mod:`random`, whose next outputs follow from the
earlier ones that finished games publish."""

from __future__ import annotations

import ast
import random
from pathlib import Path

from arena.engine.chance import SEED_LIMIT
from arena.seeds import secret_seed

ARENA = Path(__file__).resolve().parents[2] / "arena"


def test_a_secret_seed_does_not_follow_from_the_random_module() -> None:
    """Reseeding :mod:`random` the same way twice repeats every one of its outputs: a seed drawn
    from it (as the commands did) repeats too, a secret one does not."""
    drawn = []
    state = random.getstate()
    try:
        for _ in range(2):
            random.seed(1234)
            drawn.append((random.randrange(SEED_LIMIT), secret_seed()))
    finally:
        random.setstate(state)  # other tests in this process see the generator as it was
    assert drawn[0][0] == drawn[1][0]  # the check can see a seed that follows from random
    assert drawn[0][1] != drawn[1][1]
    assert all(0 <= secret_seed() < SEED_LIMIT for _ in range(1000))


def _random_seed_calls(path: Path) -> list[int]:
    """Lines of ``path`` that draw a number below SEED_LIMIT from the global :mod:`random`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        from_random = isinstance(owner, ast.Name) and owner.id == "random"
        names = [n for a in node.args for n in ast.walk(a)]
        below_limit = any(isinstance(n, ast.Name) and n.id == "SEED_LIMIT" for n in names)
        if from_random and node.func.attr in ("randrange", "randint") and below_limit:
            found.append(node.lineno)
    return found


def test_no_command_draws_a_match_or_tournament_seed_from_random() -> None:
    bad = {str(p.relative_to(ARENA)): lines for p in ARENA.rglob("*.py") if (lines := _random_seed_calls(p))}
    assert bad == {}, f"use arena.seeds.secret_seed() for these seeds: {bad}"


def test_the_scan_finds_such_a_draw(tmp_path: Path) -> None:
    sample = tmp_path / "cmd.py"
    sample.write_text("import random\nseed = random.randrange(SEED_LIMIT) if x is None else x\n")
    assert _random_seed_calls(sample) == [2]
