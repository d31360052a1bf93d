"""Bearer-token helpers shared by the referee (checking a token) and the store (keeping its hash).

Imports nothing from the project, so the store can hash a token without loading the referee or gRPC.
"""

from __future__ import annotations

import hashlib


def token_hash(token: str) -> str:
    """The sha256 (hex) under which a long-lived remote bot token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
