"""Regenerate arena/v1 from proto/ with the pinned grpcio-tools.  Usage: python scripts/gen_proto.py [OUT]"""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent


def generate(out: Path) -> None:
    """Write arena_pb2.py, arena_pb2.pyi and arena_pb2_grpc.py for proto/arena/v1 into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    proto_dir = ROOT / "proto"
    include = Path(protoc.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{proto_dir}",
        f"-I{include}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        "arena/v1/arena.proto",
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    gen = out / "arena" / "v1"
    for name in ("arena_pb2.py", "arena_pb2.pyi", "arena_pb2_grpc.py"):
        (out / name).write_text((gen / name).read_text())
    for p in sorted(gen.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    for p in (out / "arena" / "v1", out / "arena"):
        if p.exists():
            p.rmdir()
    init = out / "__init__.py"
    init.write_text('"""Generated protobuf and gRPC code for proto/arena/v1 (never edit by hand)."""\n')


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "arena" / "v1")
