/** The plugin's settings and their defaults (the tab that edits them is views/settings-tab.ts). */
import type { SearchMode } from "./model/search";

export interface SidecarSettings {
  /** Explicit socket path; empty means discover it as the daemon computes it. */
  socketPath: string;
  /** The `sidecar` executable, asked with `sidecar where --json` when discovery finds nothing. */
  sidecarPath: string;
  searchMode: SearchMode;
  searchLimit: number;
  relatedLimit: number;
  showRelated: boolean;
  showUnlinked: boolean;
  remindAtStartup: boolean;
  /** Extra relation pairs `forward=inverse`, one per line, as in the vault's `[relations] pairs`. */
  relationPairs: string;
}

export const DEFAULT_SETTINGS: SidecarSettings = {
  socketPath: "",
  sidecarPath: "",
  searchMode: "hybrid",
  searchLimit: 20,
  relatedLimit: 8,
  showRelated: true,
  showUnlinked: true,
  remindAtStartup: true,
  relationPairs: "",
};

/** `blocks=blocked_by` lines -> pairs; `a=a` makes `a` symmetric (the daemon's convention). */
export function parseRelationPairs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([^=\s]+)\s*=\s*([^=\s]+)\s*$/.exec(line);
    if (m !== null && m[1] !== undefined && m[2] !== undefined) out[m[1]] = m[2];
  }
  return out;
}

export function mergeSettings(saved: unknown): SidecarSettings {
  const s: SidecarSettings = { ...DEFAULT_SETTINGS };
  if (typeof saved !== "object" || saved === null) return s;
  const given = saved as Partial<Record<keyof SidecarSettings, unknown>>;
  for (const key of Object.keys(DEFAULT_SETTINGS) as Array<keyof SidecarSettings>) {
    const value = given[key];
    if (value !== undefined && typeof value === typeof DEFAULT_SETTINGS[key]) {
      (s as unknown as Record<string, unknown>)[key] = value;
    }
  }
  return s;
}
