/**
 * Unlinked mentions: where another note names this one in plain text. Finding them in a line,
 * and turning one into a link, are pure text operations kept here so they are tested in node.
 */
export interface Match {
  index: number;
  text: string;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Spans already inside a wikilink, a Markdown link, inline code or a URL. */
function protectedSpans(line: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const re = /!?\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\)|`[^`]*`|https?:\/\/\S+/g;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    spans.push([m.index, m.index + m[0].length]);
  }
  return spans;
}

/** The first plain-text occurrence of any of `names` in `line`, as a whole word. */
export function findMention(line: string, names: readonly string[]): Match | null {
  const spans = protectedSpans(line);
  let best: Match | null = null;
  for (const name of names) {
    if (name.trim().length < 2) continue;
    const re = new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(name)}(?![\\p{L}\\p{N}_])`, "giu");
    for (let m = re.exec(line); m !== null; m = re.exec(line)) {
      const at = m.index;
      const end = at + m[0].length;
      if (spans.some(([s, e]) => at < e && end > s)) continue;
      if (best === null || at < best.index || (at === best.index && m[0].length > best.text.length)) {
        best = { index: at, text: m[0] };
      }
      break;
    }
  }
  return best;
}

/**
 * Replace the mention on `line` (1-based) with `replacement(matchedText)`; when the line no
 * longer holds it (the note changed since it was indexed), the first occurrence anywhere.
 * Returns the new text, or null when there is no unlinked mention left to link.
 */
export function linkMention(
  text: string,
  line: number,
  names: readonly string[],
  replacement: (matched: string) => string,
): string | null {
  const lines = text.split("\n");
  const order = [line - 1, ...lines.keys()].filter((i) => i >= 0 && i < lines.length);
  for (const i of order) {
    const current = lines[i] ?? "";
    const m = findMention(current, names);
    if (m === null) continue;
    lines[i] = current.slice(0, m.index) + replacement(m.text) + current.slice(m.index + m.text.length);
    return lines.join("\n");
  }
  return null;
}

/** The names a note is mentioned by: its file name and its aliases. */
export function noteNames(path: string, aliases: readonly string[] = []): string[] {
  const base = path.split("/").pop() ?? path;
  const title = base.replace(/\.md$/i, "");
  return [...new Set([title, ...aliases].filter((n) => n.trim() !== ""))];
}
