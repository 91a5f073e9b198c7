"""Obsidian's search syntax in lexical and hybrid search: each operator, and errors that name
what is not understood."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.core.query_syntax import Term, parse_query
from sidecar.embed import TinyEmbedder
from sidecar.errors import UsageError
from sidecar.services.context import Services
from sidecar.services.search import Query
from tests.conftest import corpus, write_files

NOTES = {
    "Projects/Alpha Plan.md": "---\ntags: [Project/Active]\n---\n# Alpha\n\nThe launch window opens in spring. Deploy the service.\n",
    "Projects/Beta (draft).md": "# Beta\n\nWindow launch is later; deployment blocked. #project\n",
    "Archive/Old Alpha.md": "# Old\n\nThe launch window opens in winter. Deployments paused.\n",
    "Notes/Café ideas.md": "# Café\n\nA spring menu, no launch at all. #food\n",
}


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    root = tmp_path_factory.mktemp("syntax")
    write_files(root / "vault", dict(NOTES))
    s = Services.open(root / "vault", root / "data", embedder=TinyEmbedder())
    s.reindex()
    s.embed_stage.run()
    yield s
    s.close()


def paths(s: Services, text: str, mode: str = "lexical") -> set[str]:
    out = s.search.search(Query(text, mode=mode, limit=20))  # type: ignore[arg-type]
    return {r["path"] for r in out["results"]}


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_exact_phrase_requires_the_words_in_order(services: Services, mode: str) -> None:
    assert paths(services, '"launch window"', mode) == {
        "Projects/Alpha Plan.md",
        "Archive/Old Alpha.md",
    }
    assert paths(services, 'spring "launch window"', mode) == {
        "Projects/Alpha Plan.md",
        "Archive/Old Alpha.md",
    }


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_minus_term_and_minus_phrase_exclude(services: Services, mode: str) -> None:
    assert "Archive/Old Alpha.md" not in paths(services, "launch -winter", mode)
    assert paths(services, "launch -winter", mode) >= {"Projects/Alpha Plan.md"}
    got = paths(services, 'launch -"launch window"', mode)
    assert got and not got & {"Projects/Alpha Plan.md", "Archive/Old Alpha.md"}


def test_tag_path_and_file_filters_ignore_case(services: Services) -> None:
    assert paths(services, "launch tag:#project") == {
        "Projects/Alpha Plan.md",
        "Projects/Beta (draft).md",
    }
    assert paths(services, "launch tag:project/active") == {"Projects/Alpha Plan.md"}
    assert paths(services, "launch path:projects") == {
        "Projects/Alpha Plan.md",
        "Projects/Beta (draft).md",
    }
    assert paths(services, "launch file:alpha") == {
        "Projects/Alpha Plan.md",
        "Archive/Old Alpha.md",
    }
    assert paths(services, "launch -path:archive") >= {"Projects/Alpha Plan.md"}
    assert "Archive/Old Alpha.md" not in paths(services, "launch -path:archive")
    assert paths(services, "spring file:café") == {"Notes/Café ideas.md"}
    out = services.search.search(Query("launch", mode="lexical", path="PROJECTS"))
    assert {r["path"] for r in out["results"]} == {
        "Projects/Alpha Plan.md",
        "Projects/Beta (draft).md",
    }


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_or_between_filters_and_phrases(services: Services, mode: str) -> None:
    assert paths(services, "launch tag:food OR path:archive", mode) == {
        "Notes/Café ideas.md",
        "Archive/Old Alpha.md",
    }
    assert paths(services, '"opens in spring" OR "launch is later"', mode) == {
        "Projects/Alpha Plan.md",
        "Projects/Beta (draft).md",
    }


def test_prefix_term(services: Services) -> None:
    assert paths(services, "deploy*") == {"Projects/Alpha Plan.md", "Projects/Beta (draft).md",
                                          "Archive/Old Alpha.md"}  # fmt: skip
    assert paths(services, "launch -deploy*") == {"Notes/Café ideas.md"}


def test_filters_alone_list_their_notes(services: Services) -> None:
    assert paths(services, "path:Projects") == {
        "Projects/Alpha Plan.md",
        "Projects/Beta (draft).md",
    }


@pytest.mark.parametrize("query, named", [
    ("content:launch", "'content:' is not supported"), ("foo:bar", "'foo:' is not a search operator"),
    ("/lau.ch/", "regular expressions"), ("x -(tag:a OR path:b c)", "a negated group"),
    ('"launch window', "unbalanced quote"), ("launch OR", "OR needs"), ("la*ch", "'*'"),
    ("[status:done]", "property searches"),
])  # fmt: skip
def test_unknown_syntax_is_an_error_naming_it(services: Services, query: str, named: str) -> None:
    with pytest.raises(UsageError, match=named.replace("(", r"\(").replace("*", r"\*")):
        services.search.search(Query(query, mode="lexical"))


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_parentheses_group_as_obsidian_reads_them(services: Services, mode: str) -> None:
    assert paths(services, "launch (tag:food OR path:archive)", mode) == {
        "Notes/Café ideas.md",
        "Archive/Old Alpha.md",
    }
    assert paths(services, "(winter OR later) launch", mode) == {
        "Archive/Old Alpha.md",
        "Projects/Beta (draft).md",
    }
    assert paths(services, "launch -(deploy* OR winter)", mode) == {"Notes/Café ideas.md"}
    # -(a b): the notes that lack either; the two notes holding both are left out
    got = paths(services, "launch -(window opens)", mode)
    assert got and not got & {"Projects/Alpha Plan.md", "Archive/Old Alpha.md"}
    # (a b) OR c multiplies out: (a OR c) and (b OR c)
    assert paths(services, "(spring menu) OR paused", mode) == {
        "Notes/Café ideas.md",
        "Archive/Old Alpha.md",
    }


def test_parentheses_in_pasted_prose_are_read_leniently() -> None:
    """An agent pastes a sentence: its words rank as words, nothing is required, no error."""
    for text in ("effects of vitamin D (in mice)", "see (page 3", "1) first, 2) second",
                 "f(x) = x^2"):  # fmt: skip
        q = parse_query(text)
        assert q.clauses == (), text
    assert parse_query("effects (in mice)").rank == "effects in mice"
    assert parse_query("f(x) = x^2").rank == "f(x) = x^2"
    assert parse_query("-(deploy* OR winter) launch").rank == "launch"  # excluded, not ranked


def test_plain_words_stay_words() -> None:
    q = parse_query("deploy: how https://example.com/a ADR-5 10:30")
    assert q.clauses == () and q.rank == "deploy how https://example.com/a ADR-5 10:30"
    assert parse_query("-x").clauses == ((Term("word", "x", True),),)


def test_kepano_tag_and_path_filters_ignore_case(tmp_path: Path) -> None:
    s = Services.open(corpus("kepano-obsidian"), tmp_path / "data")
    try:
        s.reindex()
        upper = {
            r["path"]
            for r in s.search.search(Query("tag:#MOVIES", mode="lexical", limit=50))["results"]
        }
        lower = {
            r["path"]
            for r in s.search.search(Query("tag:movies/genres", mode="lexical", limit=50))[
                "results"
            ]
        }
        assert upper == lower and upper
        refs = s.search.search(Query("kyoto path:references", mode="lexical"))["results"]
        assert refs and all(r["path"].startswith("References/") for r in refs)
    finally:
        s.close()
