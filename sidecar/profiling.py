"""Where the time goes: ``SIDECAR_PROFILE=DIR`` (or ``sidecar --profile DIR ...``).

When set, every call wrapped in ``profiled(name)`` runs under cProfile and its statistics are
merged, across calls and across runs, into ``DIR/<name>.prof`` (read them with ``python -m pstats`` or snakeviz) and
summarised, top functions by own and cumulative time, in ``DIR/<name>.txt``. The stages that
are wrapped: ``index`` (parse, resolve, write), ``embed`` (model batches), ``embed-commit``
(vectors into LanceDB) and ``search`` (every mode, graph stages included).

cProfile follows one thread at a time, so profiled sections of the daemon run one after the
other while profiling is on; it costs roughly 2x in Python-heavy code. Off (the default), a
wrapped call pays one dictionary lookup.
"""

from __future__ import annotations

import functools
import io
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

if TYPE_CHECKING:  # imported when a section is profiled: every command imports this module
    import cProfile
    import pstats

P = ParamSpec("P")
R = TypeVar("R")
ENV = "SIDECAR_PROFILE"
_lock = threading.Lock()
_active = threading.local()  # a section inside a profiled one is part of the outer profile
_merged: dict[str, pstats.Stats] = {}
_calls: dict[str, int] = {}


def target_dir() -> Path | None:
    value = os.environ.get(ENV, "")
    return Path(value).expanduser() if value else None


@contextmanager
def profiled(name: str) -> Iterator[None]:
    directory = target_dir()
    if directory is None or getattr(_active, "on", False):
        yield
        return
    with _lock:
        _active.on = True
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
        try:
            yield
        finally:
            profile.disable()
            _active.on = False
            _record(directory, name, profile)


def _record(directory: Path, name: str, profile: cProfile.Profile) -> None:
    import pstats

    stats = pstats.Stats(profile)
    if name not in _merged:  # the first call in this process: add to what earlier runs left
        _merged[name], _calls[name] = _earlier(directory, name)
    _merged[name].add(stats)
    _calls[name] += 1
    directory.mkdir(parents=True, exist_ok=True)
    _merged[name].dump_stats(str(directory / f"{name}.prof"))
    (directory / f"{name}.txt").write_text(summary(name), "utf-8")


def _earlier(directory: Path, name: str) -> tuple[pstats.Stats, int]:
    import pstats

    prof, text = directory / f"{name}.prof", directory / f"{name}.txt"
    try:
        calls = int(text.read_text("utf-8").split(":", 1)[1].split()[0])
        return pstats.Stats(str(prof)), calls
    except (OSError, ValueError, IndexError, EOFError, TypeError):
        return pstats.Stats(), 0


def summary(name: str, top: int = 25) -> str:
    """The merged profile of ``name`` as text: by own time, then by cumulative time."""
    out = io.StringIO()
    stats = _merged[name]
    stats.stream = out  # type: ignore[attr-defined]  # where print_stats writes
    out.write(f"{name}: {_calls[name]} profiled calls\n\n")
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def profile_as(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator form of ``profiled``."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            with profiled(name):
                return fn(*args, **kwargs)

        return call

    return wrap
