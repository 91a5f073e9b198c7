/**
 * The Relations pane's model, built from RPC results by pure functions: what to show for one
 * note. The view only renders it; the controller only fetches and schedules.
 */
import type {
  Backlink,
  Current,
  Finding,
  IncomingEdge,
  Mention,
  NoteLinks,
  OutgoingEdge,
  Reminder,
  SearchHit,
} from "../results";
import { groupRelations, type RelationGroup, type Taxonomy } from "./relations";

export interface Banner {
  /** The newest note in the supersedes chain. */
  current: string;
  /** The note that directly supersedes this one (may equal `current`). */
  by: string;
  chain: string[];
}

export interface LinkedMention {
  source: string;
  /** Every occurrence, in order; `match` is the link's span in `context`, to highlight. */
  lines: Array<{ line: number; context: string; relation: string; match: [number, number] | null }>;
}

export interface OutgoingItem {
  target: string | null;
  label: string;
  line: number;
  state: string;
  broken: boolean;
}

export interface RelatedItem {
  path: string;
  heading: string;
  score: number;
  linked: boolean;
}

export interface PaneModel {
  path: string;
  banner: Banner | null;
  relations: RelationGroup[];
  linked: LinkedMention[];
  unlinked: Mention[];
  outgoing: OutgoingItem[];
  findings: Finding[];
  related: RelatedItem[];
  reminders: Reminder[];
  /** Features the daemon cannot serve yet, or parts that failed, in a word each. */
  notes: string[];
}

export interface PaneInputs {
  path: string;
  links: NoteLinks;
  current: Current | null;
  unlinked: Mention[];
  findings: Finding[];
  related: SearchHit[];
  reminders: Reminder[];
  /** `note.backlinks`: every occurrence; without it, the deduplicated body links of `links`. */
  backlinks?: Backlink[] | null;
  notes?: string[];
}

const LINK = "link";

export function buildPaneModel(input: PaneInputs, tax: Taxonomy, limits = DEFAULT_LIMITS): PaneModel {
  const { links } = input;
  const linkedTargets = new Set<string>();
  for (const e of links.outgoing) if (e.target !== null) linkedTargets.add(e.target);
  for (const e of links.incoming) linkedTargets.add(e.source);
  return {
    path: input.path,
    banner: input.current !== null ? bannerFromCurrent(input.current) : bannerFromLinks(links),
    relations: groupRelations(links.outgoing, links.incoming, tax),
    linked: linkedMentions(links.incoming, input.backlinks ?? null).slice(0, limits.mentions),
    unlinked: input.unlinked.slice(0, limits.mentions),
    outgoing: outgoingLinks(links.outgoing).slice(0, limits.links),
    findings: findingsFor(input.path, input.findings).filter((f) => !shownAsBroken(f, links.outgoing)),
    related: input.related
      .filter((h) => h.path !== input.path && h.score >= limits.minRelated)
      .slice(0, limits.related)
      .map((h) => ({ path: h.path, heading: h.heading, score: h.score, linked: linkedTargets.has(h.path) })),
    reminders: input.reminders,
    notes: input.notes ?? [],
  };
}

/** `minRelated`: below this cosine a note is only loosely related; the pane hides it. */
export const DEFAULT_LIMITS = { mentions: 100, links: 200, related: 8, minRelated: 0.3 };

export function bannerFromCurrent(c: Current): Banner | null {
  if (c.current === "" || c.current === c.path) return null;
  const chain = c.chain.length > 0 ? c.chain : [c.path, c.current];
  const at = chain.indexOf(c.path);
  const by = at >= 0 && at + 1 < chain.length ? (chain[at + 1] ?? c.current) : c.current;
  return { current: c.current, by, chain };
}

/** One hop only, for daemons without `graph.current`: who says they supersede this note. */
export function bannerFromLinks(links: NoteLinks): Banner | null {
  const stated = links.outgoing.find((e) => e.relation === "superseded_by" && e.target !== null);
  const implied = links.incoming.find((e) => e.relation === "supersedes");
  const by = stated?.target ?? implied?.source ?? null;
  return by === null ? null : { current: by, by, chain: [links.path, by] };
}

/**
 * Linked mentions as Obsidian's Backlinks pane lists them: each linking note once, under it every
 * occurrence, links written in properties included. Older daemons without occurrences give one
 * edge per target and relation: then the body links, one per line.
 */
export function linkedMentions(incoming: readonly IncomingEdge[], backlinks: readonly Backlink[] | null = null): LinkedMention[] {
  const bySource = new Map<string, LinkedMention>();
  const rows: readonly Backlink[] = backlinks ?? incoming.filter((e) => e.relation === LINK).map((e) => ({ ...e, match: null }));
  for (const e of rows) {
    let m = bySource.get(e.source);
    if (m === undefined) {
      m = { source: e.source, lines: [] };
      bySource.set(e.source, m);
    }
    if (backlinks === null && m.lines.some((l) => l.line === e.line)) continue;
    m.lines.push({ line: e.line, context: e.context, relation: e.relation, match: e.match });
  }
  return [...bySource.values()].sort((a, b) => a.source.localeCompare(b.source));
}

/** `context` cut around the highlighted link: before, the match, after. */
export function highlightParts(context: string, match: [number, number] | null): [string, string, string] {
  if (match === null || match[0] < 0 || match[1] > context.length || match[0] >= match[1]) return [context, "", ""];
  return [context.slice(0, match[0]), context.slice(match[0], match[1]), context.slice(match[1])];
}

/** Body links, one per target; broken and ambiguous ones first so they are seen. */
export function outgoingLinks(outgoing: readonly OutgoingEdge[]): OutgoingItem[] {
  const seen = new Set<string>();
  const out: OutgoingItem[] = [];
  for (const e of outgoing) {
    if (e.relation !== LINK) continue;
    const key = e.target ?? `?${e.raw}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const broken = e.target === null || (e.state !== "valid" && e.state !== "attachment");
    out.push({ target: e.target, label: e.target ?? e.raw, line: e.line, state: e.state, broken });
  }
  return out.sort((a, b) => Number(b.broken) - Number(a.broken) || a.line - b.line);
}

/** A broken link is shown once: in the outgoing links (or typed relations), not again as lint. */
function shownAsBroken(f: Finding, outgoing: readonly OutgoingEdge[]): boolean {
  if (f.rule !== "dangling_target" && f.rule !== "ambiguous_link") return false;
  return outgoing.some((e) => e.target === null && e.raw === f.target && e.relation === (f.relation ?? LINK));
}

const SEVERITY_RANK: Record<string, number> = { error: 0, warning: 1, info: 2 };

export function severityRank(severity: string): number {
  return SEVERITY_RANK[severity] ?? 3;
}

export function findingsFor(path: string, findings: readonly Finding[]): Finding[] {
  return findings
    .filter((f) => f.note === path)
    .sort((a, b) => severityRank(a.severity) - severityRank(b.severity) || a.line - b.line);
}

/**
 * The query for "related by meaning": the title and the opening prose of the note, without
 * frontmatter, code and link syntax, trimmed to what a small embedding model reads.
 */
export function relatedQuery(path: string, body: string, maxChars = 600): string {
  const title = (path.split("/").pop() ?? path).replace(/\.md$/i, "");
  const text = body
    .replace(/^---\n[\s\S]*?\n---\n?/, "")
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]/g, (_m, t: string, a?: string) => a ?? t)
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/^#+\s*/gm, "")
    .replace(/\s+/g, " ")
    .trim();
  return asProse(`${title}. ${text}`).slice(0, maxChars).trim();
}

/**
 * Text the daemon's search reads as words only: its query syntax (quotes, parentheses,
 * brackets, `*`, a leading `-` or `/`, `word:`, `OR`) is taken out, since a note's prose is
 * not a query and "(see" would be refused as a parenthesis.
 */
export function asProse(text: string): string {
  return text
    .replace(/["()[\]*]/g, " ")
    .replace(/:/g, " ")
    .replace(/(^|\s)[-/]+/g, "$1")
    .replace(/\bOR\b/g, "or")
    .replace(/\s+/g, " ")
    .trim();
}
