"""A small bounded, thread-safe map; each transform owns one (no global state)."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BoundedCache(Generic[V]):
    """A map holding at most `maxsize` entries, evicting the oldest first.

    Reads take no lock (a single dict lookup is atomic in CPython, with or without
    the GIL), so a hit costs one lookup; writes and evictions are serialised.
    """

    __slots__ = ("_data", "_lock", "maxsize")

    def __init__(self, maxsize: int = 256) -> None:
        self.maxsize = maxsize
        self._data: dict[Hashable, V] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        return self._data.get(key)

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.maxsize:
                del self._data[next(iter(self._data))]

    def __len__(self) -> int:
        return len(self._data)
