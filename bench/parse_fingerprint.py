"""What the parser extracts, as one digest per text: to show a speed change changes nothing.

    python bench/parse_fingerprint.py OUT.json          # every note of the three real vaults,
                                                          # the test and example vaults,
                                                          # every CommonMark spec example
    python bench/parse_fingerprint.py OUT.json OLD.json  # and compare with an earlier tree's
    python bench/parse_fingerprint.py --no-chunks OUT.json [OLD.json]  # all but blocks, chunks

Run it once with ``PYTHONPATH`` set to the old tree and once in the new, then compare: each
text's ``repr`` of ``parse_note`` and of ``parse_body`` (links, spans, hidden ranges, blocks)
must be the same.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import replace
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
    args = sys.argv[1:]
    no_chunks = "--no-chunks" in args  # for a change to what chunks hold, and only that
    args = [a for a in args if a != "--no-chunks"]
    digests = {}
    for name, text in texts().items():
        note, body = parse_note(name, text, ""), parse_body(text)
        if no_chunks:
            note, body = replace(note, chunks=()), replace(body, blocks=())
        seen = repr(note) + repr(body)
        digests[name] = hashlib.sha1(seen.encode("utf-8", "surrogatepass")).hexdigest()
    Path(args[0]).write_text(json.dumps(digests, indent=0), "utf-8")
    if len(args) > 1:
        old = json.loads(Path(args[1]).read_text("utf-8"))
        differ = sorted(k for k in old.keys() | digests.keys() if old.get(k) != digests.get(k))
        print(f"{len(digests)} texts, {len(differ)} differ" + "".join(f"\n  {k}" for k in differ))
        sys.exit(1 if differ else 0)
    print(f"{len(digests)} texts")


if __name__ == "__main__":
    main()
