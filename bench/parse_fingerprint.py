"""What the parser extracts, as one digest per text: to show a speed change changes nothing.

    python bench/parse_fingerprint.py OUT.json          # every note of the three real vaults,
                                                          # the test and example vaults,
                                                          # every CommonMark spec example
    python bench/parse_fingerprint.py OUT.json OLD.json  # and compare with an earlier tree's

Run it once with ``PYTHONPATH`` set to the old tree and once in the new, then compare: each
text's ``repr`` of ``parse_note`` and of ``parse_body`` (links, spans, hidden ranges, blocks)
must be the same.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from sidecar.core.markdown import parse_body
from sidecar.core.note import parse_note

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
if not CORPORA.is_dir():
    CORPORA = Path("/work/shared/corpora")


def texts() -> dict[str, str]:
    out: dict[str, str] = {}
    for vault in sorted(CORPORA.glob("*/vault")):
        for f in sorted(vault.rglob("*.md")):
            out[f"{vault.parent.name}/{f.relative_to(vault).as_posix()}"] = f.read_text(
                "utf-8", "replace"
            )
    # The test vaults and the example vault, from the tree this script is in.
    for folder in ("tests", "docs/example-vault"):
        for f in sorted((ROOT / folder).rglob("*.md")):
            out[f"{folder}/{f.relative_to(ROOT / folder).as_posix()}"] = f.read_text(
                "utf-8", "replace"
            )
    sys.path.insert(0, str(ROOT))
    from tests.commonmark import examples

    for ex in examples():
        out[f"spec/{ex.number}"] = ex.markdown
    return out


def main() -> None:
    digests = {}
    for name, text in texts().items():
        seen = repr(parse_note(name, text, "")) + repr(parse_body(text))
        digests[name] = hashlib.sha1(seen.encode("utf-8", "surrogatepass")).hexdigest()
    Path(sys.argv[1]).write_text(json.dumps(digests, indent=0), "utf-8")
    if len(sys.argv) > 2:
        old = json.loads(Path(sys.argv[2]).read_text("utf-8"))
        differ = sorted(k for k in old.keys() | digests.keys() if old.get(k) != digests.get(k))
        print(f"{len(digests)} texts, {len(differ)} differ" + "".join(f"\n  {k}" for k in differ))
        sys.exit(1 if differ else 0)
    print(f"{len(digests)} texts")


if __name__ == "__main__":
    main()
