"""Scanned layer stacks split over stages (placeholder)."""

from __future__ import annotations

from typing import Any


def split_of(name: str) -> Any:
    return None


def bind_split(*args: Any) -> Any:
    raise NotImplementedError
