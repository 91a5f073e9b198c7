"""The parser's short ways against marko's own parsing, on many random documents.

    python bench/parse_short_ways.py [--docs 10000] [--seed 1]

``tests/test_syntax.py::test_the_short_ways_build_what_marko_builds`` runs this comparison on
1,500 documents; this script runs it on as many as asked, with any seed: each document is
parsed with the short ways (``tests.test_syntax.SHORT_WAYS``) on and off, and every
attribute of every element of the two trees must be the same. Prints the documents that
differ (exit status 1) and how often each short way was taken.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sidecar.core import syntax
from tests.test_syntax import _list_like, differing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    parser = syntax.new_parser(text_only_plain=True)
    differ, taken = differing(parser, [_list_like(rng) for _ in range(args.docs)])
    print(f"seed {args.seed}: {args.docs} documents, {len(differ)} differ; taken: {taken}")
    for text in differ[:10]:
        print(repr(text))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
