"""Obsidian's search syntax, read out of a query before it is ranked.

Understood, with Obsidian's meanings: ``"exact phrase"``, ``-term`` and ``-"phrase"`` (notes
without it), ``tag:#x`` / ``tag:x`` (the tag or a nested one), ``path:Folder`` (the path holds
it), ``file:name`` (the file name holds it), ``OR`` between two items (either), ``term*`` (a
word starting with it), ``(...)`` and ``-(...)`` to group. Path, file and tag tests ignore
case, as Obsidian's do. Plain words are ranked as before (BM25 and the model), not required one
by one; phrases and prefixes rank by their words and are required. Parentheses are read
leniently, because agents paste prose: one left open closes at the end, a stray ``)`` is
punctuation, and a word such as ``f(x)`` stays a word. Anything else that looks like syntax
(``content:``, ``/regex/``, ``[property:value]``) is an error naming it, never a plain word.
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


@dataclass(slots=True)
class _Group:
    """``(...)`` or ``-(...)``: its terms and groups, with "OR" marks between them."""

    negated: bool
    items: list[Term | str | _Group] = field(default_factory=list)


MAX_CLAUSES = 64  # OR over groups multiplies clauses out; past this the query is refused


def parse_query(text: str) -> SearchQuery:
    words: list[str] = []
    stack = [_Group(False)]
    for token in _TOKEN.findall(text):
        if token == '"' or (token.count('"') % 2 and token.startswith(('"', '-"'))):
            raise UsageError(f"unbalanced quote in search: {text!r}")
        for part in _group_marks(token):
            if part in ("(", "-("):
                stack.append(_Group(part == "-("))
            elif part == ")":
                if len(stack) > 1:  # else a stray one: punctuation
                    _close(stack)
            elif part == "OR":
                stack[-1].items.append("OR")
            else:
                term = _term(part)
                stack[-1].items.append(term)
                shown = not term.negated and not any(g.negated for g in stack)
                if shown and term.kind in ("word", "phrase", "prefix"):
                    words.append(term.value)
    while len(stack) > 1:  # left open: closed at the end
        _close(stack)
    clauses = _all_of(stack[0].items)
    required = tuple(
        tuple(c) for c in clauses if len(c) > 1 or c[0].negated or c[0].kind != "word"
    )  # fmt: skip
    return SearchQuery(" ".join(words), required)


def _close(stack: list[_Group]) -> None:
    group = stack.pop()
    if group.items:
        stack[-1].items.append(group)


def _group_marks(token: str) -> list[str]:
    """``(a``, ``-(a``, ``a)`` and ``(a)`` as their marks and the term; a quoted phrase or a
    word with a parenthesis inside (``f(x)``, a URL) is left whole."""
    if token.startswith(('"', '-"')):
        return [token]
    head: list[str] = []
    while token.startswith(("(", "-(")):
        mark = "-(" if token.startswith("-") else "("
        head.append(mark)
        token = token[len(mark) :]
    tail = 0
    while token.endswith(")") and token.count("(") < token.count(")"):
        token, tail = token[:-1], tail + 1
    return [*head, *([token] if token else []), *[")"] * tail]


def _all_of(items: list[Term | str | _Group]) -> list[list[Term]]:
    """The clauses (each a list of terms, any of which holds) that must all hold: items side by
    side are all required; ``OR`` between two items multiplies their clauses out."""
    chains: list[list[list[Term]]] = []
    join = False
    for item in items:
        if item == "OR":
            if not chains or join:
                raise UsageError("OR needs a search term on each side")
            join = True
            continue
        assert not isinstance(item, str)
        clauses = [[item]] if isinstance(item, Term) else _group(item)
        if join:
            chains[-1] = [a + b for a in chains[-1] for b in clauses]
            if len(chains[-1]) > MAX_CLAUSES:
                raise UsageError("this search's OR of groups is too large: write fewer groups")
            join = False
        else:
            chains.append(clauses)
    if join:
        raise UsageError("OR needs a search term on each side")
    return [c for chain in chains for c in chain]


def _group(group: _Group) -> list[list[Term]]:
    clauses = _all_of(group.items)
    if not group.negated:
        return clauses
    # -(a b) is (-a OR -b); -(a OR b) is -a and -b; past that it is not supported
    if all(len(c) == 1 for c in clauses):
        return [[_negate(c[0]) for c in clauses]]
    if len(clauses) == 1:
        return [[_negate(t)] for t in clauses[0]]
    raise UsageError("a negated group may hold terms side by side or terms joined by OR, "
                     "not both")  # fmt: skip


def _negate(t: Term) -> Term:
    return Term(t.kind, t.value, not t.negated)


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
                             f"OR, term*, (group))")  # fmt: skip
        if not value:
            raise UsageError(f"'{name}:' needs a value, e.g. {name}:Projects")
        if name == "tag":
            value = value.lstrip("#")
        return Term(name, value.lower(), negated)  # type: ignore[arg-type]
    if body.startswith("/") and body.endswith("/") and len(body) > 2:
        raise UsageError(f"regular expressions are not supported in search: {body}")
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
