"""Reference docs are generated from the code, and the README keeps its promises."""

import re
from pathlib import Path

from sidecar.cli import docgen
from sidecar.config import SETTINGS, render_config

REPO = Path(__file__).resolve().parents[1]


def test_generated_docs_are_current() -> None:
    assert docgen.main(["--check"]) == 0, "run: python -m sidecar.cli.docgen"


def test_every_method_and_setting_is_documented() -> None:
    rpc = (REPO / "docs" / "rpc.md").read_text("utf-8")
    from sidecar.api import build_registry

    for m in build_registry():
        assert f"## `{m.name}`" in rpc
    text = render_config()
    for s in SETTINGS:
        assert f"# {s.key.split('.', 1)[1]} = " in text


def test_readme_starts_with_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    assert "sidecar serve" in blocks[0] and "pip install -e ." in blocks[0]
    assert blocks[1].strip() == "bash .ci/run"
    assert (REPO / "docs" / "example-vault").is_dir()
