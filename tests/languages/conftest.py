"""Fixtures of the bots-in-any-language tests: the Node bot, its single-file build, the binary bot.

The Node bot's dependencies come from ``npm ci --prefix bots/node`` (``./dev test`` runs it);
these tests fail with that instruction when they are missing rather than skip, so CI cannot pass
without them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "bots" / "node"
NODE_BOT = NODE_DIR / "bot.js"
BINARY_DIR = ROOT / "bots" / "binary"
GREEDY = ROOT / "bots" / "greedy_bot.py"
BUF = ROOT / "tools" / "buf" / "node_modules" / ".bin" / "buf"


def _children() -> set[int]:
    """Live (non-zombie) processes whose parent is this test process."""
    me, out = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] not in ("Z", "X"):
            out.add(int(entry))
    return out


@pytest.fixture(autouse=True)
def no_surviving_children() -> Iterator[None]:
    """No test may leave a bot process behind."""
    before = _children()
    yield
    deadline = time.monotonic() + 3.0
    while (left := _children() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"child processes survived the test: {sorted(left)}"


@pytest.fixture(scope="session")
def node_bot() -> Path:
    """bots/node/bot.js, with node and its npm dependencies present."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed: run ./dev test (it installs Debian's nodejs as root)")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.fail("the Node bot's dependencies are missing: npm ci --prefix bots/node (./dev test runs it)")
    return NODE_BOT


@pytest.fixture(scope="session")
def node_bundle(node_bot: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The single-file build of the Node bot (bots/node/build.js), in a temporary folder."""
    out = tmp_path_factory.mktemp("nodebot") / "nodebot.js"
    build = ["node", str(NODE_DIR / "build.js"), str(out)]
    subprocess.run(build, check=True, capture_output=True, timeout=60)
    return out


@pytest.fixture(scope="session")
def binary_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The binary bot (bots/binary/build.py), in a temporary folder."""
    out = tmp_path_factory.mktemp("binbot") / "binbot"
    subprocess.run(
        [sys.executable, str(BINARY_DIR / "build.py"), str(out)], check=True, capture_output=True, timeout=60
    )
    return out
