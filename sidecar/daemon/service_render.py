"""The files a service manager reads: systemd units and LaunchAgent plists, rendered from templates.

Pure functions over strings, so ``--dry-run``, the tests and ``install`` see the same text. The
templates in ``systemd/`` and ``launchd/`` are copied byte for byte into ``templates/`` beside
this module (a test checks), so an installed wheel renders what the repository documents; with
no values given, ``render_unit()`` is the shipped unit itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

from sidecar.errors import SidecarError, UsageError


def xml_escape(text: str) -> str:
    """``&``, ``<`` and ``>`` escaped, as ``xml.sax.saxutils.escape`` does: written out because
    that import pulls in urllib and http.client (and ``html.escape`` the entity table), a good
    part of every command's start-up for a function only the plist uses."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


UNIT_TEMPLATE = "sidecar@.service"
PLIST_TEMPLATE = "com.vaultsidecar.sidecar.plist.template"
DEFAULT_EXEC = "%h/.local/bin/sidecar"  # the shipped unit's binary: where pipx puts it
DEFAULT_DATA = "%h/.local/share/sidecar"  # the shipped unit's data dir: $XDG_DATA_HOME's default
_UNIT_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.")
_BARE_WORD = re.compile(r"[\w@%+=:,./-]+")


def systemd_escape_path(path: str) -> str:
    """What ``systemd-escape --path`` prints for PATH, so ``%f`` in the unit is PATH again."""
    if not path.startswith("/"):
        raise UsageError(f"not an absolute path: {path}")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UsageError(f"not a normalized path: {path}")
    raw = os.fsencode("/".join(parts))
    out = [
        "-" if b == 0x2F else chr(b) if b in _UNIT_SAFE and (i or b != 0x2E) else f"\\x{b:02x}"
        for i, b in enumerate(raw)
    ]  # fmt: skip
    return "".join(out) or "-"


def unit_quote(word: str, command: bool = False) -> str:
    """One word of a unit file setting: specifiers doubled, quoted if it holds spaces or quotes.

    In a command line ``$`` starts a variable too, so ``command`` doubles it.
    """
    if any(ord(c) < 0x20 or c == "\x7f" for c in word):
        raise UsageError(f"a control character cannot go into a unit file: {word!r}")
    text = word.replace("%", "%%").replace("$", "$$" if command else "$")
    if _BARE_WORD.fullmatch(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def read_template(name: str) -> str:
    return resources.files("sidecar.daemon").joinpath("templates", name).read_text("utf-8")


def render_unit(
    command: Sequence[str] = (), writable: Sequence[str] = (), env: Mapping[str, str] | None = None
) -> str:
    """The shipped unit with real values put in; with no arguments, the shipped unit itself."""
    text = read_template(UNIT_TEMPLATE)
    if command:
        if any(c in command[0] for c in "\"'\\$"):
            raise UsageError(f"systemd cannot run a program whose path holds quotes, backslashes "
                             f"or $: {command[0]}")  # fmt: skip
        words = " ".join([unit_quote(command[0]), *(unit_quote(w, True) for w in command[1:])])
        text = _replace(text, f"\nExecStart={DEFAULT_EXEC} ", f"\nExecStart={words} ", 1)
    if writable:
        dirs = " ".join(unit_quote(p, True) for p in writable)
        text = _replace(text, f"mkdir -p -m 0700 {DEFAULT_DATA}\n", f"mkdir -p -m 0700 {dirs}\n", 1)
        dirs = " ".join(unit_quote(p) for p in writable)
        text = _replace(
            text, f"ReadWritePaths=%f {DEFAULT_DATA}\n", f"ReadWritePaths=%f {dirs}\n", 1
        )
    if env:
        lines = "".join(f"Environment={unit_quote(f'{k}={v}')}\n" for k, v in env.items())
        start = text.index("\nExecStart=") + 1
        end = text.index("\n", start) + 1
        text = text[:end] + lines + text[end:]
    return text


def render_plist(label: str, command: Sequence[str], vault: str, log: str, path_env: str) -> str:
    """The LaunchAgent: the template's @PLACEHOLDERS@ filled in, XML-escaped."""
    for value in (label, vault, log, path_env, *command):
        if any(ord(c) < 0x20 for c in value):
            raise UsageError(f"a control character cannot go into a plist: {value!r}")
    text = read_template(PLIST_TEMPLATE)
    program = "".join(f"\t\t<string>{xml_escape(w)}</string>\n" for w in command)
    text = _replace(text, "\t\t<string>@SIDECAR@</string>\n", program, 1)
    values = {"LABEL": (label, 1), "VAULT": (vault, 1), "LOG": (log, 2), "PATH": (path_env, 1)}
    for key, (value, count) in values.items():
        old, new = f"<string>@{key}@</string>", f"<string>{xml_escape(value)}</string>"
        text = _replace(text, old, new, count)
    return text


def _replace(text: str, old: str, new: str, count: int) -> str:
    if text.count(old) != count:  # the template was edited: fail loudly, not half-rendered
        raise SidecarError(f"service template: expected {old.strip()!r} {count} time(s)")
    return text.replace(old, new)


def find_command(argv0: str, executable: str) -> tuple[str, ...]:
    """The absolute command that runs this same sidecar: a service has no shell PATH or venv.

    The script the user ran comes first, then the one beside this interpreter (a venv's bin/),
    then ``python -m sidecar``. ``shutil.which`` is not asked: it may find another install.
    """
    for candidate in (Path(argv0) if Path(argv0).name == "sidecar" else None,
                      Path(executable).parent / "sidecar"):  # fmt: skip
        if candidate is not None and candidate.is_file() and os.access(candidate, os.X_OK):
            return (os.path.abspath(candidate),)
    return (os.path.abspath(executable), "-m", "sidecar")
