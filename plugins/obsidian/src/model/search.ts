/** The search palette's input: an optional mode prefix, then the query. */

export const SEARCH_MODES = ["hybrid", "semantic", "lexical"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

const PREFIXES: Record<string, SearchMode> = {
  h: "hybrid",
  hybrid: "hybrid",
  s: "semantic",
  sem: "semantic",
  semantic: "semantic",
  l: "lexical",
  lex: "lexical",
  lexical: "lexical",
};

/** `"/l redis ttl"` -> lexical "redis ttl"; no prefix -> the default mode. */
export function parseSearchInput(input: string, fallback: SearchMode): { mode: SearchMode; query: string } {
  const m = /^\s*\/([a-z]+)(?:\s+|$)(.*)$/is.exec(input);
  const mode = m !== null ? PREFIXES[(m[1] ?? "").toLowerCase()] : undefined;
  if (m === null || mode === undefined) return { mode: fallback, query: input.trim() };
  return { mode, query: (m[2] ?? "").trim() };
}

/** Obsidian's editor lines are 0-based; the daemon's are 1-based (0 = frontmatter). */
export function editorLine(daemonLine: number): number {
  return Math.max(0, daemonLine - 1);
}

export function isSearchMode(value: string): value is SearchMode {
  return (SEARCH_MODES as readonly string[]).includes(value);
}
