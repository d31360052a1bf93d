#!/usr/bin/env python3
"""Dies before it ever connects: writes its last words to stderr and exits with status 4."""

import sys

print("crash_bot: cannot even start", file=sys.stderr, flush=True)
raise SystemExit(4)
