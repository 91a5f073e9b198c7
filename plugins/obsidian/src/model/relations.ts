/**
 * Typed relations of one note, grouped by relation name, with inverse labels. A fact can be
 * written at either end (`A supersedes B` in A, or `B superseded_by A` in B): the pane shows it
 * on both notes, as *explicit* where this note states it and *implied* where only the other end
 * does, exactly as the daemon's taxonomy (sidecar/core/relations.py) pairs the names.
 */
import { DEFAULT_RELATION_PAIRS, DEFAULT_SYMMETRIC_RELATIONS } from "../generated/methods";
import type { IncomingEdge, OutgoingEdge } from "../results";

export interface Taxonomy {
  forward: ReadonlyMap<string, string>;
  backward: ReadonlyMap<string, string>;
  symmetric: ReadonlySet<string>;
}

/** Lowercase, `_` for spaces and dashes: the daemon's `normalise_relation`. */
export function normaliseRelation(name: string): string {
  return name.trim().toLowerCase().replace(/[\s-]+/g, "_");
}

/** The default taxonomy plus extra `forward = inverse` pairs and symmetric names. */
export function buildTaxonomy(
  extra: Readonly<Record<string, string>> = {},
  symmetric: readonly string[] = [],
): Taxonomy {
  const pairs = new Map(Object.entries(DEFAULT_RELATION_PAIRS));
  const sym = new Set(DEFAULT_SYMMETRIC_RELATIONS);
  for (const [fwdRaw, invRaw] of Object.entries(extra)) {
    const f = normaliseRelation(fwdRaw);
    const i = normaliseRelation(invRaw);
    for (const [k, v] of [...pairs]) if (k === f || k === i || v === f || v === i) pairs.delete(k);
    sym.delete(f);
    sym.delete(i);
    if (f === i) sym.add(f);
    else pairs.set(f, i);
  }
  for (const s of symmetric) sym.add(normaliseRelation(s));
  for (const s of sym) pairs.delete(s);
  const backward = new Map([...pairs].map(([f, i]) => [i, f] as [string, string]));
  return { forward: pairs, backward, symmetric: sym };
}

/** The name the other end uses for the same fact; null for untyped or unknown names. */
export function inverseOf(tax: Taxonomy, relation: string): string | null {
  if (tax.symmetric.has(relation)) return relation;
  return tax.forward.get(relation) ?? tax.backward.get(relation) ?? null;
}

export interface RelationItem {
  /** The other note (vault path), or null when the link is broken. */
  path: string | null;
  /** What the note wrote (the raw target), for broken links. */
  label: string;
  /** This note states the fact itself. */
  explicit: boolean;
  /** The other note states the inverse (or, for symmetric names, the same) fact. */
  implied: boolean;
  state: string;
}

export interface RelationGroup {
  /** The relation as seen from this note: "depends_on", "required_by", ... */
  relation: string;
  /** The inverse label (what the other notes would say), or null for untyped relations. */
  inverse: string | null;
  /** "in" for an untyped relation stated by other notes about this one (no inverse name). */
  direction: "out" | "in";
  items: RelationItem[];
}

const LINK = "link";

/** Group a note's typed edges (from `note.links`) by relation, merging both ends of a fact. */
export function groupRelations(
  outgoing: readonly OutgoingEdge[],
  incoming: readonly IncomingEdge[],
  tax: Taxonomy,
): RelationGroup[] {
  const groups = new Map<string, RelationGroup>();
  const group = (relation: string, direction: "out" | "in"): RelationGroup => {
    const key = `${direction}:${relation}`;
    let g = groups.get(key);
    if (g === undefined) {
      const inverse = direction === "out" ? inverseOf(tax, relation) : null;
      g = { relation, inverse, direction, items: [] };
      groups.set(key, g);
    }
    return g;
  };
  const add = (g: RelationGroup, item: RelationItem): void => {
    const same = g.items.find((i) => i.path !== null && i.path === item.path);
    if (same === undefined) g.items.push(item);
    else {
      same.explicit ||= item.explicit;
      same.implied ||= item.implied;
    }
  };
  for (const e of outgoing) {
    if (e.relation === LINK) continue;
    add(group(e.relation, "out"), {
      path: e.target,
      label: e.target ?? e.raw,
      explicit: true,
      implied: false,
      state: e.state,
    });
  }
  for (const e of incoming) {
    if (e.relation === LINK) continue;
    const inverse = inverseOf(tax, e.relation);
    const g = inverse === null ? group(e.relation, "in") : group(inverse, "out");
    add(g, { path: e.source, label: e.source, explicit: false, implied: true, state: "valid" });
  }
  const order = relationOrder(tax);
  return [...groups.values()]
    .map((g) => ({ ...g, items: [...g.items].sort((a, b) => a.label.localeCompare(b.label)) }))
    .sort(
      (a, b) =>
        rank(order, a) - rank(order, b) ||
        a.relation.localeCompare(b.relation) ||
        a.direction.localeCompare(b.direction),
    );
}

function relationOrder(tax: Taxonomy): Map<string, number> {
  const names = [...[...tax.forward].flat(), ...[...tax.symmetric].sort()];
  return new Map(names.map((n, i) => [n, i]));
}

function rank(order: Map<string, number>, g: RelationGroup): number {
  return g.direction === "in" ? 10_000 : (order.get(g.relation) ?? 1_000);
}

/** A relation name for people: `depends_on` -> "depends on". */
export function relationLabel(name: string): string {
  return name.replace(/_/g, " ");
}
