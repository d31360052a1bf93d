"""A bot that floods its stdout or stderr (arena/sandbox/launcher.py ``_Capture``): the first
``limit`` bytes go to its log, the rest is dropped, and past the limit the pipe is drained no faster
than ``DRAIN_BYTES_PER_SECOND``, so the flood costs the referee little CPU (an outside review: a
bot writing 64 KiB chunks on both pipes cost the referee's event loop 9 s of CPU in an 8 s match)
and the bot blocks on its own writes. A real process, a real pipe."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from arena.sandbox import launcher
from arena.sandbox.launcher import DRAIN_BYTES_PER_SECOND, _Capture

FLOOD = "import os\nb = b'E' * 65536\nwhile True:\n    os.write(1, b)\n"
LIMIT = 1 << 20
SECONDS = 1.5


def test_a_flood_past_the_limit_is_drained_slowly_and_the_log_keeps_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "bot.stdout.log"

    async def main() -> tuple[int, float, float, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", FLOOD, stdout=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
        )
        assert proc.stdout is not None
        cpu, wall = time.process_time(), time.monotonic()
        capture = _Capture(proc.stdout, log.open("wb"), LIMIT)
        await asyncio.sleep(SECONDS)
        read, cpu, wall = capture.read, time.process_time() - cpu, time.monotonic() - wall
        proc.kill()
        await proc.wait()
        await asyncio.wait_for(capture.task, 5)
        return read, cpu, wall, capture.text()

    read, cpu, wall, tail = asyncio.run(main())
    # at most the limit, then the drain rate (and one pipe's worth): not the gigabytes a free read takes
    most = LIMIT + DRAIN_BYTES_PER_SECOND * wall + (1 << 20)
    assert LIMIT < read <= most, (read, most)
    assert cpu < wall / 2, f"the capture took {cpu:.2f} s of CPU in {wall:.2f} s"
    text = log.read_bytes()
    assert text.startswith(b"E" * LIMIT) and text[LIMIT:].startswith(b"\n[arena: ")
    assert text.endswith(b" further bytes dropped]\n")
    assert tail.endswith("E" * 100) and len(tail) == launcher.TAIL_BYTES  # the tail stays current
