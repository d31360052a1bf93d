"""The layers hold: the engine and the vocabulary of endings import nothing else of the project, the
sandbox does not import the referee, and the store and the sandbox load without gRPC.

Each check runs in a fresh interpreter (a subprocess), so modules other tests imported do not hide
an import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parents[2] / "arena"

NO_GRPC = (
    "import arena.store, arena.sandbox, arena.endings, sys; "
    "assert not any(m == 'grpc' or m.startswith('grpc.') for m in sys.modules)"
)


def _modules(package: str) -> list[str]:
    """Every module of ``arena/<package>`` (not the migrations' scripts), dotted."""
    root = ARENA / package
    return sorted(
        "arena." + ".".join(p.relative_to(ARENA).with_suffix("").parts).removesuffix(".__init__")
        for p in root.rglob("*.py")
        if "migrations" not in p.parts
    )


def _grpc_after(imports: str) -> list[str]:
    found = "sorted(m for m in sys.modules if m == 'grpc' or m.startswith('grpc.'))"
    code = f"{imports}; import sys; print({found})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return list(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def test_store_sandbox_and_endings_import_without_grpc() -> None:
    done = subprocess.run([sys.executable, "-c", NO_GRPC], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("package", ["store", "sandbox"])
def test_every_module_of_the_package_imports_without_grpc(package: str) -> None:
    modules = _modules(package)
    assert len(modules) >= 5, modules
    assert _grpc_after("import " + ", ".join(modules)) == []


def test_the_check_sees_grpc_when_it_is_loaded() -> None:
    """The check above can fail: the referee's server does load gRPC."""
    assert "grpc" in _grpc_after("import arena.referee.server")


def _project_imports(path: Path) -> set[str]:
    """The ``arena...`` modules a file imports (relative imports resolved against its package)."""
    package = ".".join(path.relative_to(ARENA.parent).with_suffix("").parts[:-1])
    if path.name == "__init__.py":
        package = ".".join(path.relative_to(ARENA.parent).parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "arena")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                found.add(".".join([*base, *([node.module] if node.module else [])]))
            elif node.module and node.module.split(".")[0] == "arena":
                found.add(node.module)
    return found


def _outside(files: list[Path], allowed: tuple[str, ...]) -> dict[str, set[str]]:
    bad: dict[str, set[str]] = {}
    for f in files:
        out = {m for m in _project_imports(f) if not any(m == a or m.startswith(a + ".") for a in allowed)}
        if out:
            bad[str(f.relative_to(ARENA.parent))] = out
    return bad


def test_engine_imports_nothing_else_of_the_project() -> None:
    files = sorted((ARENA / "engine").rglob("*.py"))
    assert len(files) >= 5
    assert _outside(files, ("arena.engine",)) == {}


def test_endings_tokens_safetext_and_pidspace_import_nothing_of_the_project() -> None:
    leaves = [ARENA / "endings.py", ARENA / "tokens.py", ARENA / "safetext.py", ARENA / "pidspace.py"]
    assert _outside(leaves, ()) == {}


def test_sandbox_does_not_import_the_referee() -> None:
    """The sandbox imports only itself and leaf modules that import nothing of the project (the
    text escaping its stderr capture applies: arena.safetext; its cgroup sweep's pid namespace:
    arena.pidspace)."""
    allowed = ("arena.sandbox", "arena.safetext", "arena.pidspace")
    assert _outside(sorted((ARENA / "sandbox").rglob("*.py")), allowed) == {}


def test_the_import_walk_sees_project_imports() -> None:
    """The walk above can fail: the referee's faults module imports the vocabulary and the sandbox."""
    assert {"arena.endings", "arena.sandbox.status"} <= _project_imports(ARENA / "referee" / "faults.py")
