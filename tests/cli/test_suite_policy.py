"""The test suite's own rules, checked on a scratch suite run by a real pytest with this project's
``tests/conftest.py`` and ``pyproject.toml``: a skip fails a CI run and is reported everywhere, and
the Hypothesis profiles (``ci`` derandomised, ``dev``, ``fuzz``) are chosen by the environment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import ROOT

SKIPPING = """
import pytest

def test_passes():
    assert True

def test_needs_something_missing():
    pytest.skip("no frobnicator here")
"""

PASSING = """
def test_passes():
    assert True
"""

DRAWING = """
import json, os
from hypothesis import given, settings, strategies as st

SEEN = []

@given(st.integers(0, 2**64))
def test_draws(x):
    SEEN.append(x)

def test_zz_report():
    d = settings.default
    with open(os.environ["REPORT"], "w") as f:
        json.dump({"seen": SEEN, "derandomize": d.derandomize, "max_examples": d.max_examples,
                   "deadline": None if d.deadline is None else 1}, f)
"""


def run_suite(tmp: Path, files: dict[str, str], **env: str) -> subprocess.CompletedProcess[str]:
    """pytest over a scratch directory holding the project's conftest and ``files``."""
    suite = tmp / "suite"
    if suite.exists():
        shutil.rmtree(suite)
    suite.mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", suite / "conftest.py")
    for name, text in files.items():
        (suite / name).write_text(text)
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE", "PYTEST_ADDOPTS")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(suite),
         "-p", "no:cacheprovider", str(suite)],
        cwd=suite, env={**clean, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_skip_fails_a_ci_run(tmp_path: Path) -> None:
    run = run_suite(tmp_path, {"test_x.py": SKIPPING}, CI="true")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "SKIPPED [1]" in run.stdout and "no frobnicator here" in run.stdout, run.stdout
    assert "1 passed, 1 skipped" in run.stdout
    assert "CI=true, so the run fails" in run.stdout


def test_outside_ci_a_skip_is_reported_not_failed(tmp_path: Path) -> None:
    run = run_suite(tmp_path, {"test_x.py": SKIPPING})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SKIPPED [1]" in run.stdout and "no frobnicator here" in run.stdout, run.stdout
    assert "they proved nothing on this machine" in run.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_a_ci_run_without_skips_passes(tmp_path: Path, ci: str) -> None:
    run = run_suite(tmp_path, {"test_x.py": PASSING}, CI=ci)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "hypothesis profile: ci" in run.stdout


def _draws(tmp: Path, **env: str) -> dict[str, object]:
    report = tmp / "report.json"
    run = run_suite(tmp, {"test_h.py": DRAWING}, REPORT=str(report), **env)
    assert run.returncode == 0, run.stdout + run.stderr
    result: dict[str, object] = json.loads(report.read_text())
    return result


def test_ci_profile_draws_the_same_examples_every_run(tmp_path: Path) -> None:
    first, second = _draws(tmp_path, CI="true"), _draws(tmp_path, CI="true")
    assert first["derandomize"] is True and first["deadline"] is None
    assert first["seen"] == second["seen"] and len(first["seen"]) > 10  # type: ignore[arg-type]
    chosen = _draws(tmp_path, HYPOTHESIS_PROFILE="ci")
    assert chosen["seen"] == first["seen"]


def test_dev_is_the_default_and_draws_anew(tmp_path: Path) -> None:
    first, second = _draws(tmp_path), _draws(tmp_path)
    assert first["derandomize"] is False
    assert first["seen"] != second["seen"]


def test_fuzz_profile_runs_many_examples(tmp_path: Path) -> None:
    fuzz = _draws(tmp_path, HYPOTHESIS_PROFILE="fuzz")
    assert fuzz["max_examples"] == 2000 and fuzz["deadline"] is None
    assert len(fuzz["seen"]) > 100  # type: ignore[arg-type]


def test_an_unknown_profile_is_a_clear_error(tmp_path: Path) -> None:
    run = run_suite(tmp_path, {"test_x.py": PASSING}, HYPOTHESIS_PROFILE="banana")
    assert run.returncode != 0
    assert "'banana' is not a Hypothesis profile of this project; use one of ci, dev, fuzz" in (
        run.stdout + run.stderr
    )
