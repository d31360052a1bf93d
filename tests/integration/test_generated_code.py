"""The committed protobuf/gRPC code in arena/v1 is exactly what scripts/gen_proto.py generates
from proto/ with the pinned grpcio-tools (README "Architecture": regenerating must change nothing)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .helpers import ROOT

V1 = ROOT / "arena" / "v1"


def _generate(out: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(out)


def _sources(folder: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(folder.iterdir())
        if p.is_file() and p.suffix in (".py", ".pyi")
    }


def test_regenerated_code_is_byte_identical(tmp_path: Path) -> None:
    out = tmp_path / "v1"
    _generate(out)
    generated, committed = _sources(out), _sources(V1)
    assert set(committed) == {"__init__.py", "arena_pb2.py", "arena_pb2.pyi", "arena_pb2_grpc.py"}
    assert sorted(generated) == sorted(committed)
    for name in committed:
        assert generated[name] == committed[name], f"arena/v1/{name} differs from the generated code"
    assert not (out / "arena").exists()  # protoc's nested output was cleaned up
