"""One process-wide cache for the explorer's pure computations on frames (Compare's table, bars, ratios and
figures), shared by every session of the server: a later visit, a new tab or a second person gets what the
first computed, without recomputing it.

The key is what the function computes from: every frame argument by its content (an order-sensitive digest
of polars' row hashes, with its schema and height), every other argument by value. Nothing is keyed on a
store version or a time, so nothing can go stale: a run written to the store changes the frame the page
reads (`explorer.data.reads`: a new data version), hence the digest, hence the key. A frame's digest is
computed once per frame object (about 0.05 s for 100,000 runs) and kept while the object lives.

What a cached function returns is shared, never copied: callers must not change it in place (polars frames
are not changed in place; a plotly figure is handed to Streamlit, which only serialises it).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, ParamSpec, TypeVar

import polars as pl

P = ParamSpec("P")
T = TypeVar("T")

_digests: dict[int, tuple[weakref.ref[pl.DataFrame], str]] = {}  # id(frame) -> (the frame, its digest)
# reentrant: a frame's weakref callback (`forget`) takes it, and the garbage collector can run that callback
# in a thread that already holds it (any allocation under the lock may start a collection)
_lock = threading.RLock()
_computing: dict[Hashable, threading.Lock] = {}  # (function, key) -> held while one caller computes it
HITS: dict[str, int] = {}  # function name -> cache hits, read by the tests and the benchmarks
MISSES: dict[str, int] = {}


def digest(frame: pl.DataFrame) -> str:
    """The frame's content as a short text: schema, height and the row hashes in order."""
    key = id(frame)
    with _lock:
        known = _digests.get(key)
        if known is not None and known[0]() is frame:
            return known[1]
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(list(frame.schema.items())).encode())
    h.update(str(frame.height).encode())
    if frame.height and frame.width:
        h.update(frame.hash_rows(seed=0).to_numpy().tobytes())
    text = h.hexdigest()

    def forget(_: object, key: int = key) -> None:
        with _lock:
            entry = _digests.get(key)
            if entry is not None and entry[0]() is None:
                del _digests[key]

    with _lock:
        _digests[key] = (weakref.ref(frame, forget), text)
    return text


def _key_of(value: Any) -> Hashable:
    if isinstance(value, pl.DataFrame):
        return ("frame", digest(value))
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted((k, _key_of(v)) for k, v in value.items())))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__, tuple(_key_of(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key_of(v) for v in value))
    hash(value)  # anything else must be hashable (a frozen dataclass, text, a number): TypeError otherwise
    return value


def shared(max_entries: int) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Cache a pure function of frames and values across sessions (at most `max_entries` answers, the least
    recently used dropped first)."""
    def wrap(compute: Callable[P, T]) -> Callable[P, T]:
        answers: OrderedDict[Hashable, T] = OrderedDict()
        name = compute.__qualname__

        @functools.wraps(compute)
        def cached(*args: P.args, **kwargs: P.kwargs) -> T:
            key = (tuple(_key_of(a) for a in args), tuple(sorted((k, _key_of(v)) for k, v in kwargs.items())))
            with _lock:
                computing = _computing.setdefault((name, key), threading.Lock())
            with computing:  # one computes, the others (another session, explorer.warm) wait for its answer
                with _lock:
                    if key in answers:
                        answers.move_to_end(key)
                        HITS[name] = HITS.get(name, 0) + 1
                        return answers[key]
                    MISSES[name] = MISSES.get(name, 0) + 1
                try:
                    answer = compute(*args, **kwargs)
                    with _lock:
                        answers[key] = answer
                        while len(answers) > max_entries:
                            answers.popitem(last=False)
                finally:
                    with _lock:
                        _computing.pop((name, key), None)
                return answer

        cached.cache_clear = answers.clear  # type: ignore[attr-defined]
        return cached
    return wrap
