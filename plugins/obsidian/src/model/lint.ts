/** The graph lint report: findings grouped by severity, then rule, then note. */
import type { Finding } from "../results";
import { severityRank } from "./pane";

export interface RuleGroup {
  rule: string;
  severity: string;
  findings: Finding[];
}

const RULE_NAMES: Record<string, string> = {
  dangling_target: "Broken link",
  ambiguous_link: "Ambiguous link",
  broken_anchor: "Link to a missing heading or block",
  self_edge: "Links to itself",
  unknown_relation: "Unknown relation",
  supersedes_cycle: "Supersedes cycle",
  contradictory_pair: "Supersede each other",
  missing_inverse: "Missing inverse relation",
  orphan: "No links in or out",
  stale_dependency: "Depends on a superseded note",
  invalid_frontmatter: "Invalid properties",
};

/** A rule in words, as a person reads it (the id stays in the tooltip). */
export function ruleName(rule: string): string {
  const known = RULE_NAMES[rule];
  if (known !== undefined) return known;
  const words = rule.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function groupFindings(findings: readonly Finding[]): RuleGroup[] {
  const groups = new Map<string, RuleGroup>();
  for (const f of findings) {
    const key = `${f.severity}\u0000${f.rule}`;
    let g = groups.get(key);
    if (g === undefined) {
      g = { rule: f.rule, severity: f.severity, findings: [] };
      groups.set(key, g);
    }
    g.findings.push(f);
  }
  return [...groups.values()]
    .map((g) => ({
      ...g,
      findings: [...g.findings].sort((a, b) => a.note.localeCompare(b.note) || a.line - b.line),
    }))
    .sort((a, b) => severityRank(a.severity) - severityRank(b.severity) || a.rule.localeCompare(b.rule));
}

export function summarise(findings: readonly Finding[]): string {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.severity, (counts.get(f.severity) ?? 0) + 1);
  if (counts.size === 0) return "No findings.";
  return ["error", "warning", "info", ...[...counts.keys()].filter((k) => !["error", "warning", "info"].includes(k))]
    .filter((s) => counts.has(s))
    .map((s) => `${counts.get(s) ?? 0} ${s}${(counts.get(s) ?? 0) === 1 ? "" : "s"}`)
    .join(", ");
}
