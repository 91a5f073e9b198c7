/** The relation picker of "Traverse relation…": every typed name, both directions. */
import type { Taxonomy } from "./relations";

export interface RelationChoice {
  relation: string;
  inverse: boolean;
}

/** Every typed name, forward then its inverse direction, then the names typed so far. */
export function relationChoices(tax: Taxonomy, query: string): RelationChoice[] {
  const names = [...[...tax.forward].flat(), ...[...tax.symmetric].sort()];
  const choices: RelationChoice[] = names.map((relation) => ({ relation, inverse: false }));
  for (const relation of names) {
    if (!tax.symmetric.has(relation)) choices.push({ relation, inverse: true });
  }
  const q = query.trim().toLowerCase().replace(/[\s-]+/g, "_");
  const hits = choices.filter((c) => c.relation.includes(q));
  if (q !== "" && hits.length === 0) hits.push({ relation: q, inverse: false }); // an untyped key
  return hits;
}
