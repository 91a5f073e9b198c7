"""The graph page (`sidecar graph export --format html`) at 1k and 10k generated notes, in
headless Chromium: time to first render, how long the layout takes to settle, frames drawn per
second while it settles (the page stays usable meanwhile), and screenshots into docs/img/.

    flock /tmp/sidecar-bench.lock .venv/bin/python bench/graph_page.py --old /tmp/old-checkout

``--old`` names a checkout of an older commit: its page is measured too, in the same run (its
SVG page drew after its whole layout, so its first render is the load event).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.machine import describe  # noqa: E402
from tests.chromium_pipe import Browser  # noqa: E402

LOADED = "performance.getEntriesByType('navigation')[0].loadEventEnd"


def export(vault: Path, out: Path, code: Path, env: dict[str, str]) -> None:
    """The page as the code in ``code`` writes it (run from there, so an old checkout is used)."""
    run_env = {**env, "PYTHONPATH": str(code)}
    for args in (["index", "--no-embed"], ["graph", "export", "--format", "html", "-o", str(out)]):
        subprocess.run([sys.executable, "-m", "sidecar", *args, "--vault", str(vault)], cwd=code,
                       env=run_env, check=True, capture_output=True)  # fmt: skip


def measure(
    browser: Browser, page_file: Path, new: bool, runs: int, shots: dict[str, Path]
) -> dict[str, Any]:
    first, loaded, settled, fps = [], [], [], []
    for i in range(runs):
        page = browser.open(page_file.as_uri(), timeout=900)  # the old page lays out first
        loaded.append(page.eval(LOADED))
        if not new:
            continue
        first.append(float(page.eval("document.body.dataset.firstRenderMs")))
        f0, t0 = page.eval("graphFrames()"), time.monotonic()
        time.sleep(3)  # the layout is still running in its worker: is the page still drawing?
        fps.append((page.eval("graphFrames()") - f0) / (time.monotonic() - t0))
        settled.append(float(page.wait_for("document.body.dataset.settledMs", timeout=300)))
        if i == 0:
            for name, path in shots.items():
                if name == "focus":
                    page.eval(
                        "location.hash = 'focus=' + encodeURIComponent(hubs[0].id) + '&depth=1'"
                    )
                    time.sleep(0.5)
                page.screenshot(path)
        page.call("Page.close")
    out: dict[str, Any] = {"load_event_ms": round(statistics.median(loaded))}
    if new:
        out.update(first_render_ms=round(statistics.median(first)),
                   settled_ms=round(statistics.median(settled)),
                   fps_while_settling=round(statistics.median(fps), 1))  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--notes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--old", type=Path, help="a checkout of the commit to compare with")
    ap.add_argument("--img", type=Path, default=REPO / "docs" / "img")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "graph-page.json")
    args = ap.parse_args()
    results: dict[str, Any] = {"machine": describe(), "load": os.getloadavg()[0], "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="sidecar-graph-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "XDG_DATA_HOME": str(root / "data"), "SIDECAR_EMBED_MODEL": "tiny"}
        with Browser(root / "profile") as browser:
            for n in args.notes:
                vault = root / f"v{n}"
                subprocess.run([sys.executable, str(REPO / "bench" / "genvault.py"), str(vault),
                                "--notes", str(n)], check=True, capture_output=True)  # fmt: skip
                size = f"{n // 1000}k"
                new_page = root / f"new-{n}.html"
                export(vault, new_page, REPO, env)
                shots = {"all": args.img / f"graph-{size}.png"}
                if n == min(args.notes):
                    shots["focus"] = args.img / f"graph-{size}-focus.png"
                row = {"new": measure(browser, new_page, True, args.runs, shots),
                       "page_mib": round(new_page.stat().st_size / 2**20, 1)}  # fmt: skip
                if args.old:
                    old_page = root / f"old-{n}.html"
                    export(vault, old_page, args.old, {**env, "XDG_DATA_HOME": str(root / "old")})
                    row["old"] = measure(browser, old_page, False, 1 if n > 5000 else args.runs, {})
                results["sizes"][size] = row
                print(size, json.dumps(row), flush=True)
    results["load_after"] = os.getloadavg()[0]
    args.out.write_text(json.dumps(results, indent=1) + "\n", "utf-8")
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
