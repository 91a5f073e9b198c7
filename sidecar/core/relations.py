"""The relation taxonomy: which relation names exist, and which name is the inverse of which.

A typed fact can be written from either end: ``A supersedes B`` in A's frontmatter and
``B superseded_by A`` in B's are the same fact. Lint, traversal and ranking all need to see that,
so they map every edge to its canonical (forward) spelling here and nowhere else.

Frontmatter keys that hold links without meaning a typed relation (kepano's ``categories``,
``author``, ``topics``...) are *known but untyped*: never reported as unknown, never expected to
have an inverse. Names are compared in the normalised form ``links.normalise_relation`` gives
(lowercase, ``_`` for spaces and dashes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sidecar.core.links import normalise_relation

LINK = "link"  # a plain body link: known, untyped
SUPERSEDES = "supersedes"
SUPERSEDED_BY = "superseded_by"
DEPENDS_ON = "depends_on"

DEFAULT_PAIRS: Mapping[str, str] = MappingProxyType(
    {
        SUPERSEDES: SUPERSEDED_BY,
        DEPENDS_ON: "required_by",
        "caused": "caused_by",
        "decided_by": "decides",
    }
)
DEFAULT_SYMMETRIC: tuple[str, ...] = ("contradicts", "relates_to")

# Link-valued properties common in real vaults (kepano's template vault, LYT's up/down, people and
# project notes) that organise notes rather than assert a typed fact.
DEFAULT_UNTYPED: tuple[str, ...] = (
    "up", "down", "parent", "parents", "child", "children", "previous", "prev", "next",
    "related", "see_also", "same_as", "source", "sources", "via",
    "categories", "category", "type", "types", "topics", "topic", "tags", "status", "genre",
    "author", "authors", "people", "person", "owner", "owners",
    "project", "projects", "company", "org", "organization", "loc", "location",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Taxonomy:
    """``forward`` maps each forward name to its inverse name; ``symmetric`` names are their own
    inverse; ``untyped`` names are known but carry no inverse."""

    forward: Mapping[str, str]
    symmetric: frozenset[str]
    untyped: frozenset[str]
    backward: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        back = MappingProxyType({inv: fwd for fwd, inv in self.forward.items()})
        object.__setattr__(self, "backward", back)

    @classmethod
    def default(cls) -> Taxonomy:
        return cls.from_config({}, [], [])

    @classmethod
    def from_config(
        cls,
        extra: Mapping[str, str],
        symmetric: Iterable[str],
        ignore: Iterable[str],
        *,
        defaults: bool = True,
    ) -> Taxonomy:
        """Defaults plus user pairs (``{"blocks": "blocked_by"}``), symmetric names, and names
        to treat as known but untyped. A user pair overrides a default using the same name."""
        pairs: dict[str, str] = dict(DEFAULT_PAIRS) if defaults else {}
        sym = set(DEFAULT_SYMMETRIC if defaults else ())
        for fwd, inv in extra.items():
            f, i = normalise_relation(fwd), normalise_relation(inv)
            for old in [k for k, v in pairs.items() if {k, v} & {f, i}]:
                del pairs[old]
            sym -= {f, i}
            if f == i:
                sym.add(f)
            else:
                pairs[f] = i
        sym |= {normalise_relation(s) for s in symmetric}
        for name in sym:
            pairs.pop(name, None)
        untyped = {normalise_relation(u) for u in (*(DEFAULT_UNTYPED if defaults else ()), *ignore)}
        typed = set(pairs) | set(pairs.values()) | sym
        return cls(MappingProxyType(pairs), frozenset(sym), frozenset(untyped - typed))

    def inverse(self, relation: str) -> str | None:
        """The name the other end states the same fact with; None for untyped or unknown."""
        if relation in self.symmetric:
            return relation
        if relation in self.forward:
            return self.forward[relation]
        return self.backward.get(relation)

    def is_typed(self, relation: str) -> bool:
        return self.inverse(relation) is not None

    def is_known(self, relation: str) -> bool:
        return relation == LINK or relation in self.untyped or self.is_typed(relation)

    def is_backward(self, relation: str) -> bool:
        return relation not in self.forward and relation in self.backward

    def canonical(self, source: str, relation: str, target: str) -> tuple[str, str, str]:
        """One spelling per fact: ``(B, superseded_by, A)`` -> ``(A, supersedes, B)``; symmetric
        facts get their ends in sorted order; untyped and unknown facts are returned as given."""
        if relation in self.symmetric:
            a, b = sorted((source, target))
            return a, relation, b
        back = self.backward.get(relation)
        if back is not None and relation not in self.forward:
            return target, back, source
        return source, relation, target

    def names(self) -> list[str]:
        """Every typed name, forward then inverse, for docs and completion."""
        out = [n for pair in self.forward.items() for n in pair]
        return out + sorted(self.symmetric)
