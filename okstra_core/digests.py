"""Digests and canonical JSON (DECISIONS section 2)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def sha256_bytes(data: bytes) -> str:
    """Lowercase hex SHA-256 of exact bytes."""
    return hashlib.sha256(data).hexdigest()


def canonical_json(value: Any) -> bytes:
    """Canonical JSON: UTF-8, sorted keys, ``,``/``:`` separators, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sha256_json(value: Any) -> str:
    """Digest of a JSON value over its canonical form."""
    return sha256_bytes(canonical_json(value))


def pretty_json(value: Any) -> bytes:
    """The stable on-disk form of JSON artifacts the core writes."""
    return (json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8")
