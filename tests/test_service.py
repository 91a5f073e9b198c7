"""``sidecar service``: units checked by real systemd tools, plists by plistlib, plans by a fake.

There is no systemd user manager in CI, so installs run against a recording command runner; the
unit files themselves are checked with ``systemd-analyze verify --user`` (which needs only an
``XDG_RUNTIME_DIR``), and instance names with the real ``systemd-escape``.
"""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.cli.service_cmd import service
from sidecar.config import load_settings
from sidecar.daemon.service import Completed, Service, describe
from sidecar.daemon.service_render import (
    PLIST_TEMPLATE,
    UNIT_TEMPLATE,
    find_command,
    read_template,
    render_unit,
    systemd_escape_path,
)
from sidecar.errors import NO_RESTART, AlreadyServing, ModelMissing, UsageError
from tests.conftest import REPO, require

ODD_NAME = "Café notes - ü.x"  # a space, non-ASCII, a dash (escaped \x2d) and a dot


class FakeRunner:
    """Records every command; answers from a table of (argv prefix -> Completed)."""

    def __init__(self, answers: dict[tuple[str, ...], Completed] | None = None) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.answers = answers or {}

    def __call__(self, argv: Sequence[str]) -> Completed:
        self.calls.append(tuple(argv))
        for prefix, answer in self.answers.items():
            if tuple(argv[: len(prefix)]) == prefix:
                return answer
        return Completed(0, "", "")


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    """A short $XDG_RUNTIME_DIR: socket paths must stay under ~104 bytes."""
    path = Path(tempfile.mkdtemp(prefix="sc", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home(tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    return home


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / ODD_NAME
    (root / ".sidecar").mkdir(parents=True)
    return root


def linux_service(vault: Path, home: Path, command: Sequence[str] | None = None) -> Service:
    command = command or find_command(sys.argv[0], sys.executable)
    return describe(load_settings(vault, os.environ), "linux", command, os.environ, home, 1000)


def invoke(runner: FakeRunner, *args: str) -> Result:
    return CliRunner().invoke(service, list(args), obj={"runner": runner})


def install_ok(vault: Path, platform: str) -> None:
    r = invoke(FakeRunner(), "install", "--vault", str(vault), "--platform", platform)
    assert r.exit_code == 0, r.output


def verify(
    unit_dir: Path, name: str, text: str, runtime_dir: Path
) -> subprocess.CompletedProcess[str]:
    path = unit_dir / name
    path.write_text(text, "utf-8")
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir), "SYSTEMD_LOG_COLOR": "0"}
    return subprocess.run(["systemd-analyze", "verify", "--user", "--man=no", str(path)],
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip


# -- instance names ------------------------------------------------------------------------------

ESCAPE_CASES = [
    "/", "/home/me/My Notes", "/home/me/notes-2024", "/home/me/.hidden/x", "/.x", "/a/b.",
    "/home/me/Café ünï 日本", "//a//b/", "/a/./b", "/a:b_c", "/a\\b", "/a$b%c\"'", "/a\tb",
    "/tmp/x y/-z-", "/ä", "/🙂/x@y+z=w,v~",
]  # fmt: skip


def systemd_escape(paths: Sequence[str]) -> list[str]:
    out = subprocess.run(["systemd-escape", "--path", "--", *paths],
                         capture_output=True, text=True, check=True, timeout=30).stdout  # fmt: skip
    return out.split()  # escaped names never hold whitespace: it becomes \x20, \x09 ...


@pytest.mark.e2e
def test_escape_equals_systemd_escape_on_awkward_paths() -> None:
    require(shutil.which("systemd-escape") is not None, "needs systemd-escape")
    assert [systemd_escape_path(p) for p in ESCAPE_CASES] == systemd_escape(ESCAPE_CASES)


PATH_PART = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\0/"),
                    min_size=1, max_size=8).filter(lambda s: s != "..")  # fmt: skip


@pytest.mark.e2e
@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(PATH_PART, min_size=1, max_size=4), min_size=1, max_size=20))
def test_escape_equals_systemd_escape_on_generated_paths(parts: list[list[str]]) -> None:
    require(shutil.which("systemd-escape") is not None, "needs systemd-escape")
    paths = ["/" + "/".join(p) for p in parts]
    assert [systemd_escape_path(p) for p in paths] == systemd_escape(paths)


def test_escape_refuses_what_systemd_escape_refuses() -> None:
    for bad in ("relative/path", "/a/../b", "/a/.."):
        with pytest.raises(UsageError):
            systemd_escape_path(bad)


def test_a_vault_path_too_long_for_a_unit_name_is_a_usage_error(tmp_path: Path, home: Path) -> None:
    deep = tmp_path / ("x" * 120) / ("y" * 120)
    deep.mkdir(parents=True)
    with pytest.raises(UsageError, match="too long"):
        linux_service(deep, home)


# -- the systemd unit ----------------------------------------------------------------------------


@pytest.mark.e2e
def test_rendered_unit_passes_systemd_analyze_verify(
    vault: Path, home: Path, runtime_dir: Path, tmp_path: Path
) -> None:
    require(shutil.which("systemd-analyze") is not None, "needs systemd-analyze")
    svc = linux_service(vault, home)
    assert Path(find_command(sys.argv[0], sys.executable)[0]).is_file()
    assert svc.name == f"sidecar@{systemd_escape_path(str(vault))}.service"
    result = verify(tmp_path, svc.name, svc.text, runtime_dir)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.e2e
def test_unit_with_spaces_quotes_and_percent_in_real_paths_verifies(
    vault: Path, home: Path, runtime_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require(shutil.which("systemd-analyze") is not None, "needs systemd-analyze")
    exe = tmp_path / "bin dir ü" / "sidecar"  # verify fails unless ExecStart names this file
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / 'data "50%" $HOME ü'))
    svc = linux_service(vault, home, (str(exe),))
    assert 'ExecStart="' in svc.text and "%%" in svc.text
    assert 'Environment="XDG_DATA_HOME=' in svc.text
    result = verify(tmp_path, svc.name, svc.text, runtime_dir)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.e2e
def test_shipped_template_verifies_as_is(home: Path, runtime_dir: Path, tmp_path: Path) -> None:
    require(shutil.which("systemd-analyze") is not None, "needs systemd-analyze")
    exe = home / ".local" / "bin" / "sidecar"  # where the shipped unit expects it (%h)
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    name = f"sidecar@{systemd_escape_path('/home/me/My Notes')}.service"
    shipped = (REPO / "systemd" / UNIT_TEMPLATE).read_text("utf-8")
    result = verify(tmp_path, name, shipped, runtime_dir)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.e2e
def test_verify_does_complain_about_a_bad_unit(
    home: Path, runtime_dir: Path, tmp_path: Path
) -> None:
    require(shutil.which("systemd-analyze") is not None, "needs systemd-analyze")
    """The empty-stderr checks above mean something: verify reports unknown keys on stderr."""
    bad = render_unit((sys.executable,)).replace("[Service]\n", "[Service]\nBogusKey=1\n")
    result = verify(tmp_path, "sidecar@x.service", bad, runtime_dir)
    assert "BogusKey" in result.stderr


def test_unit_settings_the_daemon_relies_on(vault: Path, home: Path) -> None:
    text = linux_service(vault, home).text
    for line in ("Type=notify", "NotifyAccess=main", "ExecReload=kill -HUP $MAINPID",
                 "NoNewPrivileges=yes", "PrivateTmp=yes",
                 "ProtectSystem=strict", "RuntimeDirectory=sidecar", "MemoryHigh=1G",
                 "WantedBy=default.target"):  # fmt: skip
        assert f"\n{line}\n" in text
    settings_ = load_settings(vault, os.environ)
    assert f'ReadWritePaths=%f "{settings_.data_dir}"\n' in text


def test_unit_does_not_restart_what_retrying_cannot_fix(vault: Path, home: Path) -> None:
    """The unit's RestartPreventExitStatus is the error table's NO_RESTART: exit 4 (already
    serving) among them and exit 1 (a failure) not, so a crash is retried."""
    text = linux_service(vault, home).text
    prevent = next(line for line in text.splitlines() if line.startswith("RestartPreventExit"))
    codes = {int(c) for c in prevent.split("=", 1)[1].split()}
    assert codes == set(NO_RESTART)
    assert AlreadyServing.exit_status in codes and 1 not in codes
    assert {ModelMissing.exit_status, UsageError.exit_status} <= codes
    assert '--vault "%f"\n' in text


def test_real_paths_are_quoted_for_each_kind_of_setting() -> None:
    text = render_unit(("/opt/my tools/sidecar", "-m", "x$y"), ["/d/a b/$x%y"], {"K": "v $w%"})
    assert '\nExecStart="/opt/my tools/sidecar" -m "x$$y" serve --vault "%f"\n' in text
    assert '\nExecStartPre=+mkdir -p -m 0700 "/d/a b/$$x%%y"\n' in text  # a command line: $ doubled
    assert '\nReadWritePaths=%f "/d/a b/$x%%y"\n' in text  # a path list: $ is literal
    assert '\nEnvironment="K=v $w%%"\n' in text
    for exe in ('/opt/a"b/sidecar', "/opt/a\\b/sidecar", "/opt/$HOME/sidecar"):
        with pytest.raises(UsageError):
            render_unit((exe,))
    with pytest.raises(UsageError, match="control character"):
        render_unit(("/bin/true",), ["/d/a\nb"])


def test_a_socket_outside_the_runtime_dir_is_made_writable(
    vault: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDECAR_DAEMON_SOCKET_PATH", str(tmp_path / "socks" / "s.sock"))
    text = linux_service(vault, home).text
    assert f" {tmp_path / 'socks'}\n" in text.split("ReadWritePaths=")[1].split("RuntimeDir")[0]


# -- the launchd plist ---------------------------------------------------------------------------


def test_rendered_plist_loads_with_plistlib(tmp_path: Path, home: Path) -> None:
    vault = tmp_path / "R&D <notes> 'ü'"
    vault.mkdir()
    command = (sys.executable, "-m", "sidecar")
    svc = describe(load_settings(vault, os.environ), "macos", command, os.environ, home, 501)
    doc = plistlib.loads(svc.text.encode("utf-8"))
    assert doc["Label"] == svc.name and svc.name.startswith("com.vaultsidecar.sidecar.")
    assert doc["ProgramArguments"] == [*command, "serve", "--vault", str(vault)]
    assert doc["RunAtLoad"] is True and doc["KeepAlive"] == {"SuccessfulExit": False}
    log = Path(doc["StandardErrorPath"])
    assert log.parent == home / "Library" / "Logs" / "sidecar" and log.suffix == ".log"
    assert doc["EnvironmentVariables"]["PATH"].split(":")[0] == str(Path(sys.executable).parent)
    assert svc.path == home / "Library" / "LaunchAgents" / f"{svc.name}.plist"


def test_plist_template_is_a_plist_even_before_filling_in() -> None:
    doc = plistlib.loads((REPO / "launchd" / PLIST_TEMPLATE).read_bytes())
    assert doc["ProgramArguments"] == ["@SIDECAR@", "serve", "--vault", "@VAULT@"]


# -- one source for the templates ----------------------------------------------------------------


@pytest.mark.parametrize("folder,name", [("systemd", UNIT_TEMPLATE), ("launchd", PLIST_TEMPLATE)])
def test_packaged_templates_are_the_repository_files(folder: str, name: str) -> None:
    packaged = REPO / "sidecar" / "daemon" / "templates" / name
    assert packaged.read_bytes() == (REPO / folder / name).read_bytes()


def test_render_with_no_values_is_the_shipped_unit() -> None:
    assert render_unit() == (REPO / "systemd" / UNIT_TEMPLATE).read_text("utf-8")
    assert read_template(UNIT_TEMPLATE) == render_unit()


# -- which sidecar the service runs --------------------------------------------------------------


def test_find_command_prefers_the_script_that_ran(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "sidecar"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    python = tmp_path / "venv" / "python3"
    assert find_command(str(script), str(python)) == (str(script),)
    assert find_command("/x/pytest", str(script.parent / "python3")) == (str(script),)
    assert find_command("/x/pytest", str(python)) == (str(python), "-m", "sidecar")


# -- install / uninstall / status through the CLI ------------------------------------------------


def test_install_writes_the_unit_and_enables_it(vault: Path, home: Path) -> None:
    fake = FakeRunner()
    r = invoke(fake, "install", "--vault", str(vault), "--platform", "linux", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    name = f"sidecar@{systemd_escape_path(str(vault))}.service"
    path = home / ".config" / "systemd" / "user" / name
    assert doc["file"] == str(path) and path.read_text("utf-8") == doc["text"]
    assert fake.calls == [("systemctl", "--user", "daemon-reload"),
                          ("systemctl", "--user", "enable", "--now", name)]  # fmt: skip


def test_reinstall_of_a_changed_unit_restarts_it(
    vault: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "cfg"))
    install_ok(vault, "linux")
    unit = next((home / "cfg" / "systemd" / "user").iterdir())
    unit.write_text("old\n")
    fake = FakeRunner()
    assert invoke(fake, "install", "--vault", str(vault), "--platform", "linux").exit_code == 0
    assert [c[2:] for c in fake.calls] == [("daemon-reload",), ("enable", unit.name),
                                           ("restart", unit.name)]  # fmt: skip


def test_dry_run_writes_nothing_and_prints_file_and_commands(vault: Path, home: Path) -> None:
    fake = FakeRunner()
    r = invoke(fake, "install", "--vault", str(vault), "--platform", "linux", "--dry-run")
    assert r.exit_code == 0, r.output
    assert fake.calls == [] and list(home.rglob("*")) == []
    assert "\nType=notify\n" in r.output and "\nExecStart=" in r.output
    assert "systemctl --user daemon-reload" in r.output
    assert "systemctl --user enable --now 'sidecar@" in r.output


def test_uninstall_disables_and_removes(vault: Path, home: Path) -> None:
    install_ok(vault, "linux")
    units = home / ".config" / "systemd" / "user"
    (unit,) = units.iterdir()
    fake = FakeRunner({("systemctl", "--user", "disable"): Completed(1, "", "not enabled")})
    r = invoke(fake, "uninstall", "--vault", str(vault), "--platform", "linux", "--json")
    assert r.exit_code == 0, r.output
    assert list(units.iterdir()) == []
    assert fake.calls == [("systemctl", "--user", "disable", "--now", unit.name),
                          ("systemctl", "--user", "daemon-reload")]  # fmt: skip


def test_uninstall_works_after_the_vault_folder_is_gone(vault: Path, home: Path) -> None:
    install_ok(vault, "macos")
    shutil.rmtree(vault)
    fake = FakeRunner()
    r = invoke(fake, "uninstall", "--vault", str(vault), "--platform", "macos")
    assert r.exit_code == 0, r.output
    assert list((home / "Library" / "LaunchAgents").iterdir()) == []
    assert fake.calls[0][:2] == ("launchctl", "bootout")


def test_macos_install_bootstraps_and_reinstall_boots_out_first(vault: Path, home: Path) -> None:
    fake = FakeRunner()
    r = invoke(fake, "install", "--vault", str(vault), "--platform", "macos", "--json")
    assert r.exit_code == 0, r.output
    plist = Path(json.loads(r.output)["file"])
    assert plist.parent == home / "Library" / "LaunchAgents" and plist.is_file()
    assert (home / "Library" / "Logs" / "sidecar").is_dir()
    assert fake.calls == [("launchctl", "bootstrap", f"gui/{os.getuid()}", str(plist))]
    again = FakeRunner()
    assert invoke(again, "install", "--vault", str(vault), "--platform", "macos").exit_code == 0
    assert [c[:2] for c in again.calls] == [("launchctl", "bootout"), ("launchctl", "bootstrap")]


def test_status_reports_what_systemd_says(vault: Path, home: Path) -> None:
    shown = "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\n"
    shown += "MainPID=42\n"
    fake = FakeRunner({("systemctl", "--user", "show"): Completed(0, shown, "")})
    r = invoke(fake, "status", "--vault", str(vault), "--platform", "linux", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert (doc["running"], doc["enabled"], doc["pid"], doc["installed"]) == (True, True, 42, False)
    assert doc["logs"].startswith("journalctl --user -u ")


def test_status_reports_what_launchd_says(vault: Path, home: Path) -> None:
    printed = "gui/501/com.vaultsidecar.sidecar.x = {\n\tstate = running\n\tpid = 7\n}\n"
    fake = FakeRunner({("launchctl", "print"): Completed(0, printed, "")})
    r = invoke(fake, "status", "--vault", str(vault), "--platform", "macos", "--json")
    doc = json.loads(r.output)
    assert (doc["state"], doc["running"], doc["pid"]) == ("running", True, 7)
    missing = FakeRunner({("launchctl", "print"): Completed(113, "", "Could not find service")})
    r = invoke(missing, "status", "--vault", str(vault), "--platform", "macos", "--json")
    doc = json.loads(r.output)
    assert (doc["state"], doc["running"], doc["enabled"]) == ("not loaded", False, False)


def test_no_user_manager_is_a_clear_error_that_suggests_dry_run(vault: Path, home: Path) -> None:
    no_bus = Completed(1, "", "Failed to connect to bus: No medium found\n")
    r = invoke(FakeRunner({("systemctl",): no_bus}), "install", "--vault", str(vault),
               "--platform", "linux", "--json")  # fmt: skip
    assert r.exit_code == 1
    message = json.loads(r.stdout)["error"]["message"]
    assert "Failed to connect to bus" in message and "--dry-run" in message


def test_missing_systemctl_is_a_clear_error(vault: Path, home: Path) -> None:
    def no_systemctl(argv: Sequence[str]) -> Completed:
        raise FileNotFoundError(2, "No such file or directory", argv[0])

    r = CliRunner().invoke(service, ["status", "--vault", str(vault), "--platform", "linux"],
                           obj={"runner": no_systemctl})  # fmt: skip
    assert r.exit_code == 1
    assert "systemctl not found" in r.stderr and "--dry-run" in r.stderr
