"""The method table: name -> params model, handler, read-only flag, one-line summary.

Params are validated here, at the edge, with pydantic; handlers receive a typed model and the
open ``Services``. A validation failure becomes ``UsageError`` (JSON-RPC -32602, exit 2) with
pydantic's message, so every transport reports bad input the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sidecar.errors import MethodNotFound, UsageError

if TYPE_CHECKING:
    from sidecar.services.context import Services


class Params(BaseModel):
    """Base of every params model: unknown fields are an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(Params):
    """For methods that take nothing."""


NOTE_FIELD_HELP = "Vault-relative path (with or without .md), or a unique note name."


class NoteParams(Params):
    note: str = Field(description=NOTE_FIELD_HELP)


Handler = Callable[["Services", Any], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    params: type[Params]
    handler: Handler
    summary: str
    read_only: bool = True
    needs_vectors: bool = False  # answers better once pending chunks are embedded


class Registry:
    def __init__(self, methods: Iterable[Method]) -> None:
        self._methods: dict[str, Method] = {}
        for method in methods:
            if method.name in self._methods:
                raise ValueError(f"method {method.name} registered twice")
            self._methods[method.name] = method

    def __iter__(self) -> Iterator[Method]:
        return iter(sorted(self._methods.values(), key=lambda m: m.name))

    def __contains__(self, name: object) -> bool:
        return name in self._methods

    def get(self, name: str) -> Method:
        try:
            return self._methods[name]
        except KeyError:
            raise MethodNotFound(f"no method '{name}'") from None

    def validate(self, name: str, params: dict[str, Any] | None) -> tuple[Method, Params]:
        method = self.get(name)
        try:
            return method, method.params.model_validate(params or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'params'}: {err['msg']}"
                for err in exc.errors()
            )
            raise UsageError(f"invalid params for {name}: {problems}") from None

    def call(self, services: Services, name: str, params: dict[str, Any] | None) -> dict[str, Any]:
        method, model = self.validate(name, params)
        return method.handler(services, model)


def build_registry() -> Registry:
    from sidecar.api import (
        agent_methods,
        editor_methods,
        graph_methods,
        index_methods,
        lint_methods,
        memory_methods,
        relation_methods,
        search_methods,
    )

    return Registry(
        [
            *index_methods.METHODS,
            *graph_methods.METHODS,
            *search_methods.METHODS,
            *lint_methods.METHODS,
            *relation_methods.METHODS,
            *memory_methods.METHODS,
            *agent_methods.METHODS,
            *editor_methods.METHODS,
        ]
    )
