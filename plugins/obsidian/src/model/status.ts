/** The status bar: connected / indexing / down, in a few characters and a tooltip. */
import type { ConnectionState } from "../client";
import type { IndexStatus } from "../results";

export interface StatusDisplay {
  text: string;
  tooltip: string;
  level: "ok" | "busy" | "down";
}

export function statusDisplay(state: ConnectionState, status: IndexStatus | null, detail: string): StatusDisplay {
  if (state === "stopped") return { text: "Sidecar: off", tooltip: "The sidecar plugin is stopped.", level: "down" };
  if (state !== "connected") {
    const why = detail !== "" ? `: ${detail}` : "";
    const text = state === "connecting" ? "Sidecar: connecting…" : "Sidecar: down";
    return { text, tooltip: `Not connected to the sidecar daemon${why}. Retrying.`, level: "down" };
  }
  if (status === null) return { text: "Sidecar: connected", tooltip: "Connected.", level: "ok" };
  const notes = `${status.notes} notes, ${status.chunks} chunks`;
  if (!status.ready || status.pending > 0 || status.queue > 0) {
    const what = !status.ready ? "catching up" : `${status.pending} chunks to embed`;
    return { text: "Sidecar: indexing…", tooltip: `Indexing (${what}); ${notes}.`, level: "busy" };
  }
  const last = status.lastIndexed !== null ? `; last indexed ${status.lastIndexed}` : "";
  return { text: "Sidecar: connected", tooltip: `Connected; ${notes}; model ${status.model}${last}.`, level: "ok" };
}

/** Whether to look at `index.status` again soon (only while the daemon is busy). */
export function needsRecheck(status: IndexStatus | null): boolean {
  return status !== null && (!status.ready || status.pending > 0 || status.queue > 0);
}
