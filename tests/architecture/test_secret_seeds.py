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


DRAWS = ("randrange", "randint", "getrandbits")


def _seed_sized(node: ast.expr) -> bool:
    """Whether an argument is a seed's range: ``SEED_LIMIT`` or a power of two of 62 bits or
    more (``2**63``, ``2**62``, ``63`` bits)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == "SEED_LIMIT":
            return True
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            base, exp = n.left, n.right
            if isinstance(base, ast.Constant) and base.value == 2 and isinstance(exp, ast.Constant):
                return isinstance(exp.value, int) and exp.value >= 62
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and 62 <= node.value <= 64


def _made_from_random(node: ast.expr) -> bool:
    """Whether ``node`` is ``random.Random(...)``: a generator whose outputs follow from its seed."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "random"
        and node.func.attr == "Random"
    )


def _random_seed_calls(path: Path) -> list[int]:
    """Lines of ``path`` that draw a seed-sized number from :mod:`random`: the module's own
    generator (``random.randrange(SEED_LIMIT)``, ``randrange(2**63)`` imported from it,
    ``random.getrandbits(63)``) or a ``random.Random(...)`` made in the file (in place, or bound
    to a name: ``rng = random.Random(x)`` then ``rng.randrange(2**62)``)."""
    tree = ast.parse(path.read_text(), str(path))
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module == "random" for a in n.names}  # fmt: skip
    generators = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _made_from_random(n.value)
                  for t in n.targets if isinstance(t, ast.Name)}  # fmt: skip
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not any(_seed_sized(a) for a in node.args):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            hit = func.id in DRAWS and func.id in imported
        elif isinstance(func, ast.Attribute) and func.attr in DRAWS:
            owner = func.value
            named = isinstance(owner, ast.Name) and (owner.id == "random" or owner.id in generators)
            hit = named or _made_from_random(owner)
        else:
            hit = False
        if hit:
            found.append(node.lineno)
    return sorted(found)


def test_no_command_draws_a_match_or_tournament_seed_from_random() -> None:
    bad = {str(p.relative_to(ARENA)): lines for p in ARENA.rglob("*.py") if (lines := _random_seed_calls(p))}
    assert bad == {}, f"use arena.seeds.secret_seed() for these seeds: {bad}"


def test_the_scan_finds_such_draws(tmp_path: Path) -> None:
    sample = tmp_path / "cmd.py"
    sample.write_text(
        "import random\n"
        "from random import randrange\n"
        "seed = random.randrange(SEED_LIMIT) if x is None else x\n"
        "b = randrange(2**63)\n"
        "c = random.getrandbits(63)\n"
        "d = random.Random(f'validation-{n}').randrange(2**62)\n"
        "e = random.randrange(6)\n"  # a die, not a seed
        "rng = random.Random(f'validation-{n}')\n"
        "f = rng.randrange(2**62)\n"
        "g = other.randrange(SEED_LIMIT)\n"  # a generator not made here: not judged
    )
    assert _random_seed_calls(sample) == [3, 4, 5, 6, 9]
