"""The random sample bot started as a remote bot of a test's lobby."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


async def random_remote_bot(
    port: int, token: str, *extra: str, stderr: int = asyncio.subprocess.PIPE
) -> asyncio.subprocess.Process:
    """``bots/random_bot.py`` connecting to 127.0.0.1:``port`` with ``token`` (and ``extra``
    options); its stdout discarded, its stderr piped (or as ``stderr`` says)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPO / "bots" / "random_bot.py"),
        f"--address=127.0.0.1:{port}",
        f"--token={token}",
        *extra,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=stderr,
    )
