"""Every memory entry that is acknowledged reads back identically (issue 24, major 5).

A title holding U+007F-U+009F was written as YAML that could not be read back, and a year-1
``due_at`` as ``1-01-01T00:00:00Z``: acknowledged entries vanished at the next start. Two
properties: the entry file format round-trips any entry, and ``memory.write`` either refuses
its input with -32602 before writing or the entry reads back, after a restart, as acknowledged.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sidecar.api import build_registry
from sidecar.core import memory as m
from sidecar.core.memory_format import parse, render
from sidecar.embed import TinyEmbedder
from sidecar.errors import SidecarError
from sidecar.services.context import Services

REGISTRY = build_registry()
T0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=dt.UTC)

# Any character Python can write as UTF-8: every plane, C0 and C1 controls, NEL, U+2028/9, BOM.
chars = st.characters(exclude_categories=("Cs",))
text = st.text(chars, max_size=40)
words = text.map(str.strip).filter(bool)  # tags and titles are stripped, and never empty
times = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31),
                     timezones=st.just(dt.UTC)).map(lambda t: t.replace(microsecond=0))  # fmt: skip
ids = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True)


@st.composite
def entries(draw: st.DrawFn) -> m.Entry:
    targets = st.lists(words.map(m.as_link).filter(bool), min_size=1, max_size=3, unique=True)
    relations = draw(st.dictionaries(st.sampled_from(["supports", "contradicts", "extends"]),
                                     targets, max_size=2))  # fmt: skip
    return m.Entry(
        id=draw(ids), title=draw(words), entry_type=draw(st.sampled_from(m.ENTRY_TYPES)),
        created_at=draw(times), updated_at=draw(times),
        source_type=draw(st.sampled_from(m.SOURCE_TYPES)), status=draw(st.sampled_from(m.STATUSES)),
        tags=tuple(draw(st.lists(words, max_size=4))), due_at=draw(st.none() | times),
        relations=m.normalise_relations(relations), agent=draw(text.map(str.strip)),
        expires_at=draw(st.none() | times),
        body=draw(st.text(chars, max_size=200)).strip("\n"),
    )  # fmt: skip


@given(entries())
def test_the_entry_format_round_trips_every_entry(entry: m.Entry) -> None:
    written = render(entry)
    assert parse(written, entry.id, T0) == entry
    written.encode("utf-8")


@pytest.mark.parametrize(
    "title", ["del \x7f here", "c1 \x80\x9f", "nel \x85 line", "ls \u2028 ps \u2029", "\ufeffbom"]
)
def test_titles_the_issue_found_round_trip(title: str) -> None:
    entry = m.Entry(id="e1", title=title, entry_type="topic", created_at=T0, updated_at=T0,
                    tags=(title.strip(),), agent=title.strip())  # fmt: skip
    assert parse(render(entry), "e1", T0) == entry


def test_year_one_and_year_9999_are_written_with_four_digits() -> None:
    for year in (1, 999, 9999):
        t = dt.datetime(year, 1, 1, tzinfo=dt.UTC)
        assert m.iso(t) == f"{year:04d}-01-01T00:00:00Z"
        assert m.parse_time(m.iso(t)) == t


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"])
def test_a_time_past_the_calendar_in_utc_is_a_value_error(value: str) -> None:
    with pytest.raises(ValueError):
        m.parse_time(value)


# -- through memory.write, across a restart -----------------------------------------------------

params = st.fixed_dictionaries(
    {"title": st.text(st.characters(), max_size=30)},  # surrogates too: JSON can carry them
    optional={"content": st.text(st.characters(), max_size=80),
              "tags": st.lists(st.text(st.characters(), max_size=10), max_size=3),
              "due_at": times.map(m.iso) | st.sampled_from(
                  ["1-01-01T00:00:00Z", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-01:00",
                   "2026-02-30T00:00:00Z", "0001-01-01"])},
)  # fmt: skip


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(params)
@example({"title": "del \x7f c1 \x85\x9f", "tags": [" nel\x85 ", "ls\u2028"]})
@example({"title": "lone \ud800 surrogate"})
@example({"title": "\x85"})  # NEL alone: str.strip() leaves an empty title
@example({"title": "t", "content": "body \udfff"})
@example({"title": "t", "due_at": "1-01-01T00:00:00Z"})
@example({"title": "t", "due_at": "0001-01-01T00:00:00Z"})
@example({"title": "t", "due_at": "0001-01-01T00:00:00+05:00"})
@example({"title": "t", "due_in": 1e15})
@example({"title": "t", "ttl": 1e300})
def test_an_acknowledged_write_reads_back_after_a_restart(
    tmp_path: Path, write: dict[str, Any]
) -> None:
    vault, data = tmp_path / "v", tmp_path / "d"
    shutil.rmtree(vault, ignore_errors=True)
    shutil.rmtree(data, ignore_errors=True)
    vault.mkdir()
    (vault / "n.md").write_text("# n\n", "utf-8")
    s = Services.open(vault, data, embedder=TinyEmbedder(64))
    try:
        acked = REGISTRY.call(s, "memory.write", {"id": "e1", **write})["entry"]
    except SidecarError as exc:
        assert exc.code == -32602, exc.message  # refused as invalid, before anything is written
        assert not (vault / ".sidecar" / "memory" / "e1.md").exists()
        return
    finally:
        s.close()
    s = Services.open(vault, data, embedder=TinyEmbedder(64))
    try:
        back = REGISTRY.call(s, "memory.get", {"id": "e1"})["entry"]
        REGISTRY.call(s, "session.start", {})
    finally:
        s.close()
    assert back == acked
