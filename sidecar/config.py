"""Settings: one table, read from the user's config, the vault's, ``SIDECAR_*`` and flags.

The vault's own ``.sidecar/config.toml`` travels with a shared or cloned vault, so it may not set
what would send note text off the machine or write outside the vault (``USER_ONLY``): those come
from ``$XDG_CONFIG_HOME/sidecar/config.toml``, the environment or flags, and a vault file that sets
one is ignored for that key with one warning naming it.

``SETTINGS`` is the single list of keys: ``sidecar init`` writes it as commented TOML, the docs are
generated from it, and a test checks both. Only composition roots (the CLI group, the daemon's
wiring) call ``load_settings``; everything else receives plain values.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidecar.errors import UsageError, VaultNotFound


@dataclass(frozen=True, slots=True)
class Setting:
    key: str  # "section.name"
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("index.data_dir", "", "Where the index lives; empty means "
            "$XDG_DATA_HOME/sidecar/<vault-id> (kept out of synced vault folders)."),
    Setting("index.ignore", [], "Extra gitignore-style patterns to skip (.sidecarignore works too)."),
    Setting("index.max_file_bytes", 5_000_000, "Notes larger than this are reported, not indexed."),
    Setting("chunk.max_chars", 900, "Longest chunk, in characters (~256 model tokens)."),
    Setting("chunk.overlap_chars", 160, "Overlap carried into the next piece of a split section."),
    Setting("embed.model", "minilm", "Embedding model: minilm, tiny[:DIM], "
            "onnx:MODEL[:TOKENIZER], openai:MODEL[@URL] or ollama:MODEL[@URL]."),
    Setting("embed.batch_size", 8, "Chunks per model call (the requantised default model "
            "runs one at a time regardless)."),
    Setting("embed.threads", 2, "Threads the model may use."),
    Setting("watch.debounce_ms", 300, "Quiet time before a changed note is reindexed when its "
            "writer's end is not seen (no close events, a write still open, a burst of saves)."),
    Setting("watch.settle_ms", 20, "After a save closes or renames a note into place, how long "
            "it waits for the editor's second write before it is reindexed."),
    Setting("watch.close_events", True, "Reindex a note as soon as its writer closes it or "
            "renames it into place (inotify); false: every change waits watch.debounce_ms."),
    Setting("watch.rescan_minutes", 60, "How often the daemon reconciles the index with the "
            "disk (inotify can overflow silently); 0 turns it off."),
    Setting("daemon.compact_idle_seconds", 60, "Compact the index after this long without writes."),
    Setting("daemon.compact_saves", 32, "After this many saves, compact the chunks table once the "
            "daemon has been quiet for 2 s (each save adds a fragment that every search pays "
            "for); a save or a query stops it. 0: only the idle compaction."),
    Setting("daemon.bulk_index_notes", 2000, "At start-up, index this many changed notes or more "
            "in a child process, so the daemon's heap stays as small as after a restart (0: never)."),
    Setting("daemon.stop_seconds", 5, "On SIGTERM, how long queued writes may take to finish; "
            "after that the daemon exits anyway (nothing acknowledged is lost)."),
    Setting("daemon.socket_path", "", "Unix socket path; empty means $XDG_RUNTIME_DIR/sidecar/ "
            "(else /run/user/<uid>/sidecar/, else ~/.local/share/sidecar/<vault-id>/sock/)."),
    Setting("daemon.autostart", False, "When no daemon serves the vault, a command starts one "
            "(detached, logging to daemon.log in the data dir) instead of running in-process."),
    Setting("limits.max_line_bytes", 16 * 2**20, "Longest request line on the socket; a longer "
            "one is answered -32600 and skipped."),
    Setting("limits.max_batch", 100, "Most requests in one JSON-RPC batch."),
    Setting("limits.max_batch_reply_bytes", 25_000_000, "Most bytes of replies to one batch; "
            "the members after that are answered -32600 instead of run."),
    Setting("limits.max_string_chars", 10_000, "Longest string parameter (-32602 beyond it); "
            "note text, memory bodies and recall prompts have their own, larger caps."),
    Setting("limits.max_connections", 256, "Most client connections at once; one more is "
            "answered with an error and closed."),
    Setting("limits.idle_line_seconds", 30, "A connection that holds half a request line this "
            "long without sending more is closed."),
    Setting("limits.max_requests", 64, "Most requests running at once across all connections; "
            "further lines wait in the kernel's socket buffers."),
    Setting("limits.max_buffered_bytes", 256 * 2**20, "Most bytes of replies waiting to be "
            "sent, across all connections; past it the client furthest behind is dropped."),
    Setting("lint.severity", {}, "Per rule: error, warning, info or off, e.g. {orphan = \"off\"}."),
    Setting("lint.schedule", "0 3 * * *", "When the daemon lints the graph (cron, UTC); a run "
            "missed while the machine slept happens at the next start."),
    Setting("lint.report_note", "", "If set, the daemon writes its lint report as this note "
            "(vault-relative path), e.g. \"Sidecar/Lint report.md\"."),
    Setting("lint.exclude", [], "Note path globs or prefixes never reported, e.g. [\"Templates/\"]."),
    Setting("relations.pairs", {}, "Extra typed relations: forward = inverse, e.g. "
            "{blocks = \"blocked_by\"}."),
    Setting("relations.symmetric", [], "Extra symmetric relations."),
    Setting("relations.known", [], "Link-valued frontmatter keys that are not typed relations."),
    Setting("search.stale_statuses", ["abandoned", "archived", "declined", "deprecated",
            "obsolete", "rejected", "replaced", "retired", "superseded", "withdrawn"],
            "A note whose status is one of these steps back in search, like a superseded one."),
    Setting("memory.folder", ".sidecar/memory", "Where memory entry files live: vault-relative "
            "or absolute; a visible folder inside the vault is left out of the notes."),
    Setting("recall.max_notes", 4, "Most notes recall hands an agent for one prompt."),
    Setting("recall.max_memory", 3, "Most memory entries recall hands an agent for one prompt."),
    Setting("recall.threshold", 5.0, "How sure recall must be that a note is about the prompt "
            "before it speaks (docs/agents.md); raise it for less, lower it for more."),
    Setting("recall.min_words", 2, "Prompts with fewer content words get nothing (\"thanks!\", "
            "\"ok\")."),
    Setting("recall.log", False, "Append each recall decision (prompt, scores, why) to "
            "recall-log.jsonl in the data dir, for tuning."),
    Setting("recall.min_score", 0.34, "Cosine floor for memory entries: below it (and without a "
            "strong word match) none is recalled."),
    Setting("recall.min_lexical", 1.5, "BM25 per query word that is evidence alone for a memory "
            "entry (identifiers the model does not know)."),
)  # fmt: skip

_DEFAULTS = {s.key: s.default for s in SETTINGS}
_log = logging.getLogger(__name__)


def _always(value: Any) -> bool:
    return True


def _remote_model(value: Any) -> bool:
    return str(value).strip().partition(":")[0] in ("openai", "ollama")


def _outside_vault(value: Any) -> bool:
    path = Path(str(value))
    return str(value).startswith("~") or path.is_absolute() or ".." in path.parts


# key -> (is this value one only the user may choose?, what it would do from a shared vault)
USER_ONLY: dict[str, tuple[Callable[[Any], bool], str]] = {
    "index.data_dir": (_always, "writes the index outside the vault"),
    "embed.model": (_remote_model, "local models only: openai: and ollama: send note text to a "
                    "server"),
    "daemon.socket_path": (_always, "creates the socket outside the vault"),
    "memory.folder": (_outside_vault, "vault-relative only: an absolute, ~ or .. folder is "
                      "outside the vault"),
    **{s.key: (_always, "limits guard the daemon against its clients; a vault may not loosen "
               "them") for s in SETTINGS if s.key.startswith("limits.")},
}  # fmt: skip
_warned: set[tuple[Path, str]] = set()


def trust(key: str) -> str:
    """What the vault's own config may set for ``key``, in words (the docs' table)."""
    rule = USER_ONLY.get(key)
    if rule is None:
        return "yes"
    return f"no (user-only): {rule[1]}" if rule[0] is _always else rule[1]


def user_only(key: str, value: Any) -> str | None:
    """Why the vault's own config may not set ``key`` to ``value``; None when it may."""
    rule = USER_ONLY.get(key)
    return rule[1] if rule is not None and rule[0](value) else None


@dataclass(frozen=True, slots=True)
class Settings:
    vault: Path
    values: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def vault_id(self) -> str:
        from hashlib import sha1  # OpenSSL's binding: a cost `sidecar --help` need not pay

        digest = sha1(str(self.vault).encode("utf-8")).hexdigest()[:10]
        return f"{self.vault.name[:24] or 'vault'}-{digest}"

    @property
    def data_dir(self) -> Path:
        configured = str(self.values["index.data_dir"])
        if configured:
            return Path(configured).expanduser()
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        return Path(base) / "sidecar" / self.vault_id


def model_cache_dir(env: Mapping[str, str]) -> Path:
    """Shared by every vault: derived model files (the requantised ONNX model)."""
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sidecar" / "models"


def find_vault(explicit: str | None, env: Mapping[str, str], cwd: Path) -> Path:
    """``--vault``, else ``SIDECAR_VAULT``, else the nearest parent with .obsidian/ or .sidecar/."""
    given = explicit or env.get("SIDECAR_VAULT")
    if given:
        path = Path(given).expanduser().resolve()
        if not path.is_dir():
            raise VaultNotFound(f"vault folder not found: {given}")
        return path
    for folder in (cwd, *cwd.parents):
        if (folder / ".obsidian").is_dir() or (folder / ".sidecar").is_dir():
            return folder.resolve()
    raise VaultNotFound(
        "no vault: pass --vault PATH, set SIDECAR_VAULT, or run inside a folder holding "
        ".obsidian/ or .sidecar/ (sidecar init creates .sidecar/)"
    )


def config_path(vault: Path) -> Path:
    return vault / ".sidecar" / "config.toml"


def user_config_path(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "sidecar" / "config.toml"


def load_settings(
    vault: Path, env: Mapping[str, str], overrides: Mapping[str, Any] | None = None
) -> Settings:
    values = dict(_DEFAULTS)
    values.update(_from_file(user_config_path(env)))
    values.update(_vault_safe(config_path(vault), _from_file(config_path(vault)), env))
    values.update(_from_env(env))
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return Settings(vault, values)


def _from_file(path: Path) -> dict[str, Any]:
    import tomllib  # here: `sidecar --help` reads no settings

    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc
    out: dict[str, Any] = {}
    for section, table in data.items():
        if not isinstance(table, dict):
            raise UsageError(f"{path}: [{section}] must be a table")
        for name, value in table.items():
            key = f"{section}.{name}"
            if key not in _DEFAULTS:
                raise UsageError(f"{path}: unknown setting {key}")
            out[key] = _check(key, value)
    return out


def _vault_safe(path: Path, values: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    out = {}
    for key, value in values.items():
        why = user_only(key, value)
        if why is None:
            out[key] = value
        elif (path, key) not in _warned:  # once per process: the daemon re-reads on SIGHUP
            _warned.add((path, key))
            _log.warning("sidecar: ignoring %s in %s: only your own config (%s), SIDECAR_%s or "
                         "a flag may set it (%s)", key, path, user_config_path(env),
                         key.replace(".", "_").upper(), why)  # fmt: skip
    return out


_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True,
             "0": False, "false": False, "no": False, "off": False, "": False}  # fmt: skip


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, default in _DEFAULTS.items():
        name = "SIDECAR_" + key.replace(".", "_").upper()
        raw = env.get(name)
        if raw is None:
            continue
        if isinstance(default, dict):
            import tomllib

            try:
                table = tomllib.loads(f"v = {raw}")["v"]
            except tomllib.TOMLDecodeError as exc:
                raise UsageError(f"{name} must be an inline TOML table") from exc
            out[key] = table
        elif isinstance(default, list):
            out[key] = [p for p in raw.split(",") if p]
        elif isinstance(default, bool):
            if raw.strip().lower() not in _BOOLEANS:
                raise UsageError(f"{name} must be true or false")
            out[key] = _BOOLEANS[raw.strip().lower()]
        elif isinstance(default, int):
            try:
                out[key] = int(raw)
            except ValueError as exc:
                raise UsageError(f"{name} must be a whole number") from exc
        else:
            out[key] = raw
    if env.get("SIDECAR_DATA_DIR"):
        out["index.data_dir"] = env["SIDECAR_DATA_DIR"]
    return out


def _check(key: str, value: Any) -> Any:
    default = _DEFAULTS[key]
    if isinstance(default, bool) != isinstance(value, bool) or not isinstance(value, type(default)):
        raise UsageError(f"setting {key} must be a {type(default).__name__}")
    return value


def render_config() -> str:
    """The commented config file ``sidecar init`` writes: every key, at its default."""
    lines = ["# Vault Sidecar settings. Every key is shown at its default, commented out.",
             "# Environment variables SIDECAR_<SECTION>_<KEY> and command-line flags override it.",
             "# This file travels with the vault, so user-only keys are ignored here: set them in",
             "# ~/.config/sidecar/config.toml ($XDG_CONFIG_HOME), the environment or a flag."]  # fmt: skip
    section = ""
    for s in SETTINGS:
        sec, name = s.key.split(".", 1)
        if sec != section:
            lines += ["", f"[{sec}]"]
            section = sec
        where = trust(s.key)
        mark = "" if where == "yes" else f" In this file: {where}."
        lines += [f"# {s.help}{mark}", f"# {name} = {_toml(s.default)}"]
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return str(value)
