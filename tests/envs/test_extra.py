"""The optional `rl` extra: declared in pyproject, installed by ./dev test, present here."""

from __future__ import annotations

import tomllib
from importlib.metadata import version

from packaging.requirements import Requirement

from .helpers import ROOT


def test_the_rl_extra_is_declared_and_installed_by_dev_test() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    wanted = {Requirement(r).name.replace("_", "-"): Requirement(r) for r in extras["rl"]}
    assert set(wanted) == {"pettingzoo", "gymnasium", "open-spiel"}
    for name, req in wanted.items():
        assert req.specifier.contains(version(name)), f"{name} {version(name)} is not {req}"
    dev = (ROOT / "dev").read_text()
    setup = dev[dev.index("setup() {") : dev.index("\n}\n", dev.index("setup() {"))]
    assert 'pip install --quiet -e ".[rl]"' in setup  # so tests/envs always run, never skip
