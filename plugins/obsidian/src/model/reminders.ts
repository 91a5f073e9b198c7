/** Due reminders, as a start-up notice and as pane rows. */
import type { Reminder } from "../results";

export function reminderNotice(due: readonly Reminder[], max = 3): string | null {
  if (due.length === 0) return null;
  const head = due.length === 1 ? "1 reminder is due" : `${due.length} reminders are due`;
  const lines = due.slice(0, max).map((r) => `• ${r.title}`);
  if (due.length > max) lines.push(`… and ${due.length - max} more (command: Sidecar: reminders)`);
  return [head + ":", ...lines].join("\n");
}

/** "in 3 h", "2 d ago": a compact relative time for a due date. */
export function relativeDue(dueAt: string | null, now: number): string {
  if (dueAt === null) return "";
  const t = Date.parse(dueAt);
  if (Number.isNaN(t)) return dueAt;
  const diff = t - now;
  const abs = Math.abs(diff);
  const units: Array<[number, string]> = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "min"],
  ];
  const [size, unit] = units.find(([s]) => abs >= s) ?? [60_000, "min"];
  const n = Math.max(1, Math.round(abs / size));
  return diff >= 0 ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}
