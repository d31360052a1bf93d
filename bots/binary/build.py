#!/usr/bin/env python3
"""Build the binary bot: ``bots/binary/dist/binbot``, one executable file (a Python zipapp).

Usage: python bots/binary/build.py [OUT] [--python INTERPRETER]

The file is a zip archive behind a shebang line (``#!/usr/bin/env python3`` unless ``--python``
names another interpreter).  It holds ``__main__.py`` (``binbot.py``) and a copy of the project's
own pure-Python modules that the bot needs: ``arena/sdk.py``, ``arena/wire.py``,
``arena/engine/`` and the generated ``arena/v1/`` code.  It imports nothing of the repository at
run time; what it needs from the machine is a Python >= 3.11 with ``grpcio`` and ``protobuf``
(compiled packages cannot be imported from a zip), which the arena's own environment has: the
arena puts its interpreter first on the bot's PATH, inside the sandbox too.

The build is reproducible: the same sources give the same bytes (entries sorted, fixed
timestamps), so ``arena bots add`` of an unchanged rebuild says that nothing changed.
"""

from __future__ import annotations

import argparse
import os
import stat
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ARENA = ROOT / "arena"
DATE = (1980, 1, 1, 0, 0, 0)


def sources() -> dict[str, bytes]:
    """Archive name -> bytes of every file packed."""
    files = {"__main__.py": (HERE / "binbot.py").read_bytes()}
    for name in ("__init__.py", "sdk.py", "wire.py", "py.typed"):
        files[f"arena/{name}"] = (ARENA / name).read_bytes()
    for sub in ("engine", "v1"):
        for path in sorted((ARENA / sub).glob("*.py")):
            files[f"arena/{sub}/{path.name}"] = path.read_bytes()
    return files


def build(out: Path, interpreter: str = "/usr/bin/env python3") -> Path:
    """Write the executable zipapp to ``out`` and return it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with tmp.open("wb") as fh:
        fh.write(f"#!{interpreter}\n".encode())
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, data in sorted(sources().items()):
                info = zipfile.ZipInfo(name, date_time=DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, data)
    os.chmod(tmp, 0o755 | stat.S_IFREG)
    os.replace(tmp, out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="build the single-file binary bot (a Python zipapp)")
    parser.add_argument("out", nargs="?", type=Path, default=HERE / "dist" / "binbot")
    parser.add_argument("--python", default="/usr/bin/env python3", help="the interpreter of the shebang")
    args = parser.parse_args()
    print(build(args.out.resolve(), args.python))


if __name__ == "__main__":
    main()
