"""Methods that index the vault and report on the index."""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field

from sidecar.api.registry import Method, NoParams, Params, VaultPath
from sidecar.services import doctor
from sidecar.services.context import Services


class ReindexParams(Params):
    full: bool = Field(False, description="Re-parse every note, not only changed ones.")
    paths: list[VaultPath] | None = Field(None, description="Only these vault-relative paths.")
    embed: bool = Field(True, description="Also compute vectors for new and changed chunks.")


def reindex(services: Services, p: ReindexParams) -> dict[str, Any]:
    """``seconds`` covers both stages; ``stages`` gives each apart, since embedding a cold
    index takes minutes where parsing took a second."""
    started = time.perf_counter()
    report = services.reindex(full=p.full, paths=p.paths)
    parsed = time.perf_counter()
    if p.embed:
        progress = services.progress("embed") if services.progress else None
        report.embedded = services.embed_stage.run(progress=progress)
    done = time.perf_counter()
    report.seconds = done - started
    report.stages = {"parse": round(parsed - started, 3), "embed": round(done - parsed, 3)}
    return report.to_dict()


def status(services: Services, p: NoParams) -> dict[str, Any]:
    return services.status()


class CheckParams(Params):
    repair: bool = Field(False, description="Fix what was found (re-parse drifted notes, drop "
                         "orphan rows, re-sync memory), then check again.")  # fmt: skip


def check(services: Services, p: CheckParams) -> dict[str, Any]:
    return doctor.repair(services) if p.repair else doctor.check(services)


METHODS = [
    Method("index.reindex", ReindexParams, reindex, "Bring the index up to date with the vault.",
           read_only=False),
    Method("index.status", NoParams, status, "Counts, pending vectors, failures, last run."),
    Method("index.check", CheckParams, check,
           "Index vs vault drift (missing, stale, extra notes; chunk and memory rows), "
           "optionally repaired.", read_only=False),
]  # fmt: skip
