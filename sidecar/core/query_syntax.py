"""Obsidian's search syntax, read out of a query before it is ranked.

Understood, with Obsidian's meanings: ``"exact phrase"``, ``-term`` and ``-"phrase"`` (notes
without it), ``tag:#x`` / ``tag:x`` (the tag or a nested one), ``path:Folder`` (the path holds
it), ``file:name`` (the file name holds it), ``OR`` between two items (either), ``term*`` (a
word starting with it). Path, file and tag tests ignore case, as Obsidian's do. Plain words
are ranked as before (BM25 and the model), not required one by one; phrases and prefixes
rank by their words and are required. Anything else that looks like syntax (``content:``,
``/regex/``, parentheses, ``[property:value]``) is an error naming it, never a plain word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from sidecar.errors import UsageError

Kind = Literal["word", "phrase", "prefix", "tag", "path", "file"]
OPERATORS = ("tag", "path", "file")
# Obsidian operators we do not implement, named in the error instead of read as words.
UNSUPPORTED = ("content", "line", "block", "section", "task", "task-todo", "task-done",
               "match-case", "ignore-case")  # fmt: skip
_TOKEN = re.compile(r'-?"[^"]*"|-?[^\s"]+|"', re.UNICODE)
_OPERATOR = re.compile(r"^(-?)([A-Za-z][\w-]*):(.*)$", re.S)


@dataclass(frozen=True, slots=True)
class Term:
    kind: Kind
    value: str  # lowercased for tag/path/file; as written otherwise
    negated: bool = False


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """``rank``: the words to rank by. ``clauses``: each must hold (a clause of several terms
    came from ``OR`` and holds when any of them does)."""

    rank: str
    clauses: tuple[tuple[Term, ...], ...] = field(default=())

    @property
    def filters(self) -> bool:
        return bool(self.clauses)


def parse_query(text: str) -> SearchQuery:
    items: list[Term | str] = []  # "OR" marks stay strings until grouped
    words: list[str] = []
    for token in _TOKEN.findall(text):
        if token == '"' or (token.count('"') % 2 and token.startswith(('"', '-"'))):
            raise UsageError(f"unbalanced quote in search: {text!r}")
        if token == "OR":
            items.append("OR")
            continue
        term = _term(token)
        items.append(term)
        if not term.negated and term.kind in ("word", "phrase", "prefix"):
            words.append(term.value)
    clauses: list[list[Term]] = []
    join = False
    for item in items:
        if item == "OR":
            if not clauses or join:
                raise UsageError("OR needs a search term on each side")
            join = True
            continue
        assert isinstance(item, Term)
        if join:
            clauses[-1].append(item)
            join = False
        else:
            clauses.append([item])
    if join:
        raise UsageError("OR needs a search term on each side")
    required = tuple(
        tuple(c) for c in clauses if len(c) > 1 or c[0].negated or c[0].kind != "word"
    )  # fmt: skip
    return SearchQuery(" ".join(words), required)


def _term(token: str) -> Term:
    negated = token.startswith("-") and len(token) > 1
    body = token[1:] if negated else token
    if body.startswith('"'):
        return Term("phrase", body.strip('"').strip(), negated)
    if "://" in body:  # a URL is a word
        return Term("word", body, negated)
    op = _OPERATOR.match(body)
    if op is not None:
        name, value = op.group(2).lower(), op.group(3).strip('"')
        if name not in OPERATORS and not value and name not in UNSUPPORTED:
            return Term("word", body.rstrip(":"), negated)  # "deploy:" ends a phrase of prose
        if name not in OPERATORS:
            known = ", ".join(f"{o}:" for o in OPERATORS)
            why = "is not supported" if name in UNSUPPORTED else "is not a search operator"
            raise UsageError(f"'{name}:' {why} (understood: {known}, \"phrase\", -term, "
                             f"OR, term*)")  # fmt: skip
        if not value:
            raise UsageError(f"'{name}:' needs a value, e.g. {name}:Projects")
        if name == "tag":
            value = value.lstrip("#")
        return Term(name, value.lower(), negated)  # type: ignore[arg-type]
    if body.startswith("/") and body.endswith("/") and len(body) > 2:
        raise UsageError(f"regular expressions are not supported in search: {body}")
    if body.startswith("(") or (body.endswith(")") and "(" not in body):
        raise UsageError(f"parentheses are not supported in search: {body}")
    if body.startswith("[") and body.endswith("]") and ":" in body:
        raise UsageError(f"property searches are not supported: {body} (use --filter KEY=VALUE)")
    if body.endswith("*") and len(body) > 1:
        stem = body.rstrip("*")
        if not stem or "*" in stem:
            raise UsageError(f"'*' works at the end of a word only: {body}")
        return Term("prefix", stem, negated)
    if "*" in body:
        raise UsageError(f"'*' works at the end of a word only: {body}")
    return Term("word", body, negated)


def path_holds(path: str, value: str) -> bool:
    """``path:`` as Obsidian reads it: the vault path holds the text, ignoring case."""
    return value.lower() in path.lower()


def file_holds(path: str, value: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return value.lower() in name.lower()
