"""The entry file format of DESIGN section 6 is a contract: fixed key order, ISO 8601 UTC."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from sidecar.core import memory as m
from sidecar.core.memory_format import EntryError, parse, render

T0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=dt.UTC)
PEER_ENTRIES = Path(__file__).resolve().parents[2] / "shared/peers/mdkb/.mdkb/memory/entries"


def entry(**kw: object) -> m.Entry:
    base: dict[str, object] = dict(id="redis-session-ttl", title="Session keys expire after 14 days",
                                   entry_type="decision", created_at=T0, updated_at=T0)  # fmt: skip
    return m.Entry(**{**base, **kw})  # type: ignore[arg-type]


def test_the_design_example_renders_byte_for_byte() -> None:
    e = entry(tags=("sessions", "redis"), relations=(("supports", ("[[Auth Service]]",)),),
              body="Body text.")  # fmt: skip
    assert render(e) == (
        "---\n"
        "id: redis-session-ttl\n"
        'title: "Session keys expire after 14 days"\n'
        "entry_type: decision\n"
        "source_type: user_statement\n"
        "status: active\n"
        "tags: [sessions, redis]\n"
        "created_at: 2026-11-29T10:00:00Z\n"
        "updated_at: 2026-11-29T10:00:00Z\n"
        'relations: {supports: ["[[Auth Service]]"]}\n'
        "---\n"
        "Body text.\n"
    )


def test_optional_keys_keep_their_place_and_everything_round_trips() -> None:
    e = entry(
        entry_type="reminder", status="superseded", superseded_by="newer",
        due_at=T0 + dt.timedelta(days=2), expires_at=T0 + dt.timedelta(days=9),
        agent='claude "code"', confidence=0.7, tags=("a b", "yes", "x/y"),
        relations=(("supports", ("[[A]]",)), ("contradicts", ("[[b]]", "[[C: d]]"))),
        body="Line one\n\n## Heading\n- item: with colon", extra=(("owner", "alice"),),
    )  # fmt: skip
    text = render(e)
    keys = [line.split(":", 1)[0] for line in text.split("---\n")[1].splitlines()]
    assert keys == ["id", "title", "entry_type", "source_type", "status", "tags", "created_at",
                    "updated_at", "due_at", "superseded_by", "relations", "agent", "expires_at",
                    "confidence", "owner"]  # fmt: skip
    back = parse(text, e.id, T0)
    assert back == e
    assert render(back) == text


def test_hand_written_files_are_read_leniently_but_not_guessed() -> None:
    minimal = parse("Just a line of text\n", "scratch", T0)
    assert (minimal.title, minimal.entry_type, minimal.status) == ("Just a line of text", "topic",
                                                                  "active")  # fmt: skip
    assert minimal.created_at == T0
    with pytest.raises(EntryError, match="entry_type 'idea'"):
        parse("---\nentry_type: idea\n---\n", "x", T0)
    with pytest.raises(EntryError, match="invalid YAML"):
        parse("---\ntitle: {{date}}\n---\n", "x", T0)
    with pytest.raises(EntryError, match="not a memory id"):
        parse("---\ntitle: t\n---\n", "Not An Id", T0)


def test_times_are_utc_whatever_was_written() -> None:
    text = "---\ncreated_at: 2026-11-29T12:00:00+02:00\nupdated_at: 1789649840\n---\n"
    e = parse(text, "t", T0)
    assert e.created_at == T0
    assert m.iso(e.updated_at) == "2026-09-17T12:57:20Z"
    assert "created_at: 2026-11-29T10:00:00Z" in render(e)


def test_mdkb_exported_entries_parse() -> None:
    assert PEER_ENTRIES.is_dir(), f"the shared peer fixtures are required: {PEER_ENTRIES}"
    for path in PEER_ENTRIES.glob("*.md"):
        e = parse(path.read_text("utf-8"), path.stem, T0)
        assert e.id == path.stem and e.title and e.entry_type in m.ENTRY_TYPES
        assert e.created_at.year == 2026


def test_near_duplicate_verdicts() -> None:
    key = m.text_key("Use one writer", "All writes go through one queue.")
    same_words = m.text_key("use ONE writer!", "All writes go through one queue")
    assert key == same_words
    assert m.judge_duplicate(key, [("a", 0.1, same_words)]).kind == "duplicate"
    assert m.judge_duplicate(key, [("a", 0.96, "other")]) == m.Verdict("duplicate", "a", 0.96)
    assert m.judge_duplicate(key, [("a", 0.9, "x"), ("b", 0.5, "y")]).kind == "similar"
    assert m.judge_duplicate(key, [("a", 0.5, "x")]).kind == "new"
    assert m.judge_duplicate(key, []).kind == "new"


def test_rules_for_expiry_supersede_links_and_confidence() -> None:
    e = entry(expires_at=T0)
    assert m.is_expired(e, T0) and not m.is_expired(e, T0 - dt.timedelta(seconds=1))
    assert not m.is_expired(m.archived(e, T0), T0)
    s = m.superseded(e, "newer", T0)
    assert (s.status, s.superseded_by) == ("superseded", "newer")
    linked = m.with_relation(m.with_relation(e, "relates_to", "B"), "supports", "[[A|alias]]")
    assert linked.relations == (("supports", ("[[A]]",)), ("relates_to", ("[[B]]",)))
    assert m.with_relation(linked, "supports", "A", remove=True).relations == (
        ("relates_to", ("[[B]]",)),
    )
    assert m.confidence(e, m.Counters()) == 0.8
    assert m.confidence(e, m.Counters(confirmations=2)) == 0.9
    assert m.confidence(e, m.Counters(refutations=1)) == 0.6
    assert m.confidence(entry(status="refuted"), m.Counters()) == 0.0
    assert m.slugify("Sessions in Redis: 14-day TTL!") == "sessions-in-redis-14-day-ttl"
    assert m.unique_id("a", {"a", "a-2"}) == "a-3"
