"""Resource limits of a sandboxed bot (configurable per tournament)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

MIB = 1024 * 1024


@dataclass(frozen=True)
class SandboxLimits:
    """What one bot (its whole process tree) may use.

    ``cpu_seconds``, ``address_space_mb``, ``open_files`` and ``file_size_mb`` are rlimits set with
    ``prlimit`` on the bot's process (inherited by its children); ``processes`` and ``memory_mb``
    are enforced for the whole tree by a cgroup where the kernel lets us create one.
    """

    cpu_seconds: int = 3600
    memory_mb: int = 1024
    address_space_mb: int = 16384
    open_files: int = 256
    processes: int = 64
    file_size_mb: int = 64
    output_bytes: int = MIB

    def to_json(self) -> dict[str, Any]:
        """Plain data (for the tournament's config)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SandboxLimits:
        """Limits from plain data; unknown keys are rejected with ValueError."""
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown sandbox limits: {', '.join(sorted(unknown))}")
        return cls(**{k: int(v) for k, v in data.items()})
