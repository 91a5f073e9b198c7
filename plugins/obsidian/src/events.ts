/**
 * The daemon's notifications (`events.subscribe` is built into its socket server, not in the
 * method registry, so these are written by hand; the integration test subscribes to every name
 * here against the real daemon, which refuses unknown names).
 */
import { isRecord, strings } from "./guards";

export const EVENT_NAMES = ["index.changed", "lint.completed", "reminder.due"] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** `index.changed`: notes re-indexed or removed by one reindex job, and the new note count. */
export interface IndexChanged {
  paths: string[];
  deleted: string[];
  notes: number;
}

export function asIndexChanged(params: unknown): IndexChanged | null {
  if (!isRecord(params)) return null;
  const paths = strings(params["paths"]);
  const deleted = strings(params["deleted"]);
  const notes = typeof params["notes"] === "number" ? params["notes"] : 0;
  return { paths, deleted, notes };
}
