"""Bot names and upload limits (standard library only, so the CLI can show them without the ORM)."""

from __future__ import annotations

import re

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
FILE_PREFIX = "file:"  # bots used by path without registering them (never a registered name)
HUMAN_PREFIX = "human:"  # a person's seat (arena play): human:<name> (never a registered name)
MAX_BOT_MB_ENV = "ARENA_MAX_BOT_MB"
DEFAULT_MAX_BOT_MB = 50.0
