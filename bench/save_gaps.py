"""How long after a save's end-of-write event the next event on the note comes (issue 23).

    python bench/save_gaps.py --saves 1000
    python bench/save_gaps.py --saves 30 --nvim .venv/bin/nvim

A note whose writer is done (closed after writing, or renamed onto) waits ``watch.settle_ms``
for an editor's second write. This saves a note with each write pattern of
``tests/editor_saves.py`` (and, with ``--nvim``, real Neovim with ``backupcopy`` no, yes and
auto), watched by watchdog's inotify observer as the daemon watches, with the daemon's event
filter. Per pattern: how many saves had an event on the note after their first end-of-write
event, and the gap to it (p50, p95, p99, max), which is what the window must cover.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from machine import describe, pct

from sidecar.daemon.watcher import EVENTS
from tests.editor_saves import PATTERNS


class Seen(FileSystemEventHandler):
    def __init__(self) -> None:
        self.events: list[tuple[float, str, str]] = []

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        dest = getattr(event, "dest_path", "")
        path = dest if event.event_type == "moved" else event.src_path
        name = os.path.basename(path.decode() if isinstance(path, bytes) else path)
        self.events.append((time.monotonic(), event.event_type, name))


def neovim(nvim: str, backupcopy: str) -> Callable[[Path, str], None]:
    def save(path: Path, text: str) -> None:
        subprocess.run(
            [nvim, "--clean", "--headless", "-n", "-c", f"set backupcopy={backupcopy}", "-c",
             "%delete _", "-c", 'call setline(1, split($SAVE_TEXT, "\\n"))', "-c", "wq", str(path)],
            env={**os.environ, "SAVE_TEXT": text}, check=True, capture_output=True,
        )  # fmt: skip

    return save


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--saves", type=int, default=200, help="per pattern")
    ap.add_argument("--nvim", help="a Neovim binary: its saves too")
    args = ap.parse_args()
    patterns = dict(PATTERNS)
    if args.nvim:
        for bc in ("no", "yes", "auto"):
            patterns[f"Neovim, backupcopy={bc}"] = neovim(args.nvim, bc)
    root = Path(tempfile.mkdtemp(prefix="gaps", dir="/tmp"))
    note = root / "Note.md"
    note.write_text("# Note\n", "utf-8")
    seen = Seen()
    observer = Observer()
    observer.schedule(seen, str(root), recursive=True, event_filter=EVENTS)
    observer.start()
    load = [os.getloadavg()[0]]
    print(f"Machine: {describe()}  ")
    print(f"Command: `python bench/save_gaps.py {' '.join(sys.argv[1:])}`\n")
    print("| write pattern | saves | saves with an event after the end of write | gap to it "
          "p50 / p95 / p99 / max |")  # fmt: skip
    print("|---|---|---|---|")
    try:
        for name, save in patterns.items():
            gaps = []
            for i in range(args.saves):
                seen.events.clear()
                save(note, f"# Note\n\nSaved {i} by {name}.\n" * 20)
                time.sleep(0.1)  # after the last event of this save
                mine = [e for e in seen.events if e[2] == note.name]
                ends = [j for j, e in enumerate(mine) if e[1] in ("closed", "moved")]
                if ends and ends[0] + 1 < len(mine):
                    gaps.append(1000 * (mine[ends[0] + 1][0] - mine[ends[0]][0]))
            load.append(os.getloadavg()[0])
            spread = (f"{statistics.median(gaps):.2f} / {pct(gaps, 0.95):.2f} / "
                      f"{pct(gaps, 0.99):.2f} / {max(gaps):.2f} ms" if gaps else "-")  # fmt: skip
            print(f"| {name} | {args.saves} | {len(gaps)} | {spread} |")
    finally:
        observer.stop()
    print(f"\nLoad average (1 min) {min(load):.1f}-{max(load):.1f}.")


if __name__ == "__main__":
    main()
