"""The method table: name -> params model, handler, read-only flag, one-line summary.

Params are validated here, at the edge, with pydantic; handlers receive a typed model and the
open ``Services``. A validation failure becomes ``UsageError`` (JSON-RPC -32602, exit 2) with
pydantic's message, so every transport reports bad input the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from sidecar.core.memory import slugify, valid_id
from sidecar.errors import MethodNotFound, PathOutsideVault, UsageError

if TYPE_CHECKING:
    from sidecar.services.context import Services


class Params(BaseModel):
    """Base of every params model: unknown fields are an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoParams(Params):
    """For methods that take nothing."""


_SEPARATORS = re.compile(r"[/\\]")


def confined(value: str) -> str:
    """Refuse a request path that could name something outside the vault.

    The one check for every path or note name a client sends (fields typed ``VaultPath``):
    paths in requests are vault-relative, so an absolute path, a ``..`` component (either
    separator) or a NUL byte is refused here, before any handler runs. Symlinked folders are
    the store's business (``Vault.inside``): the scan never follows them, so nothing indexed
    or read lies behind one. Raises ``PathOutsideVault`` (-32003), which pydantic passes
    through instead of wrapping it as a validation error.
    """
    if "\x00" in value:
        raise PathOutsideVault("path contains a NUL byte", {"path": value})
    if not value.isascii():
        try:  # JSON's "\udc80" escape decodes to a lone surrogate, which no file name holds
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a path cannot hold a lone surrogate (not valid Unicode)") from None
    if value.startswith(("/", "\\")) or ".." in _SEPARATORS.split(value):
        raise PathOutsideVault(
            f"path is outside the vault: {value!r} (give a vault-relative path without '..')",
            {"path": value},
        )
    return value


def entry_id(value: str) -> str:
    """A memory entry id names a file in the memory folder, so it is checked as strictly as a
    path: lowercase letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit."""
    if not valid_id(value):
        raise UsageError(f"'{value}' is not a memory id: use lowercase letters, digits, '.', "
                         f"'_' and '-' (e.g. {slugify(value)})", {"id": value})  # fmt: skip
    return value


VaultPath = Annotated[str, AfterValidator(confined)]
EntryId = Annotated[str, AfterValidator(entry_id)]
NOTE_FIELD_HELP = "Note path (.md optional), name or alias."


class NoteParams(Params):
    note: VaultPath = Field(description=NOTE_FIELD_HELP)


Handler = Callable[["Services", Any], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Agent:
    """How a method is offered to a model as an MCP tool (``sidecar mcp``): a name and title,
    one or two sentences on when to use it, the parameters it shows (None: all), and defaults
    that keep its answer small; the method's own defaults stay what editors and scripts get."""

    name: str
    title: str
    description: str
    params: tuple[str, ...] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    idempotent: bool | None = None  # None: as read_only
    destructive: bool = False


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    params: type[Params]
    handler: Handler
    summary: str
    read_only: bool = True
    needs_vectors: bool = False  # answers better once pending chunks are embedded
    agent: Agent | None = None  # in the agents' toolset, shaped so


MAX_STRING = 10_000  # limits.max_string_chars


def long_text(limit: int) -> Any:
    """For a field holding long text (a note's body, an entry file): strings anywhere in it may
    be ``limit`` characters long instead of ``limits.max_string_chars``."""
    return {"max_chars": limit}


class Registry:
    """``max_string``: the longest string a request may carry anywhere in its params, unless
    its field says otherwise (``max_length`` on a string field, or ``long_text``). Checked
    before pydantic, so a 60 MB query costs one pass over it, not a model and an error copy."""

    def __init__(self, methods: Iterable[Method], max_string: int = MAX_STRING) -> None:
        self.max_string = max_string
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
        self._check_lengths(name, method.params, params or {})
        try:
            return method, method.params.model_validate(params or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'params'}: {err['msg']}"
                for err in exc.errors()
            )
            raise UsageError(f"invalid params for {name}: {problems}") from None

    def _check_lengths(self, name: str, model: type[Params], params: dict[str, Any]) -> None:
        caps = _string_caps(model)
        for key, value in params.items():
            cap = max(caps.get(key, self.max_string), self.max_string)
            where = _too_long(value, cap, str(key)) or _too_long(key, self.max_string, "params")
            if where is not None:
                raise UsageError(
                    f"invalid params for {name}: {where}: a string may hold at most {cap} "
                    "characters (limits.max_string_chars)", {"field": where, "max_chars": cap}
                )  # fmt: skip

    def call(self, services: Services, name: str, params: dict[str, Any] | None) -> dict[str, Any]:
        method, model = self.validate(name, params)
        return method.handler(services, model)


@functools.cache
def _string_caps(model: type[Params]) -> dict[str, int]:
    """Fields whose strings may be longer than the default: their own ``max_length`` (on a
    string field) or ``long_text``."""
    caps: dict[str, int] = {}
    for field_name, info in model.model_fields.items():
        extra = info.json_schema_extra
        if isinstance(extra, dict) and isinstance(extra.get("max_chars"), int):
            caps[field_name] = int(extra["max_chars"])  # type: ignore[arg-type]
        elif info.annotation in (str, str | None):
            for meta in info.metadata:
                if isinstance(getattr(meta, "max_length", None), int):
                    caps[field_name] = meta.max_length
    return caps


def _too_long(value: Any, cap: int, where: str, depth: int = 0) -> str | None:
    """The path of the first string in ``value`` longer than ``cap``, or None."""
    if isinstance(value, str):
        return where if len(value) > cap else None
    if depth > 32:
        return None  # JSON this deep is refused by pydantic anyway
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for k, v in items:
        if isinstance(k, str) and len(k) > cap:
            return f"{where}.<key>"
        found = _too_long(v, cap, f"{where}.{k}", depth + 1)
        if found is not None:
            return found
    return None


def build_registry() -> Registry:
    from sidecar.api import (
        agent_methods,
        editor_methods,
        graph_methods,
        index_methods,
        lint_methods,
        memory_methods,
        note_methods,
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
            *note_methods.METHODS,
        ]
    )
