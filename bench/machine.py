"""The machine and versions a benchmark ran on, as a Markdown line."""

from __future__ import annotations

import datetime as dt
import os
import platform
from importlib import metadata
from pathlib import Path


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def describe() -> str:
    versions = ", ".join(
        f"{name} {metadata.version(name)}" for name in ("lancedb", "onnxruntime", "numpy")
    )
    return (
        f"{dt.date.today().isoformat()} · {os.cpu_count()} cores · {cpu_model()} · "
        f"Python {platform.python_version()} · {versions}"
    )


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile of measured values (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cpu_stall_us() -> int | None:
    """Microseconds that runnable tasks have waited for a CPU since boot (the kernel's pressure
    stall information, ``some total``), or None where the kernel has none."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return int(line.rsplit("total=", 1)[1])


def status_mib(pid: int, field: str = "VmRSS") -> float:
    """A size from /proc/PID/status in MiB: VmRSS (resident now) or VmHWM (its peak so far)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for process {pid}")
