/**
 * "Traverse relation…": pick a relation (and direction) for the active note, then pick among
 * the notes reached along it, up to three hops, in one `graph.traverse` call.
 */
import { App, Notice, SuggestModal } from "obsidian";
import { ErrorCode, RpcError, errorText } from "../client";
import { inverseOf, relationLabel, type Taxonomy } from "../model/relations";
import { relationChoices, type RelationChoice } from "../model/traverse";
import { asTraverse, type TraverseNode } from "../results";
import type { Rpc } from "../pane-controller";
import { displayName, openAt } from "./dom";

export class RelationPicker extends SuggestModal<RelationChoice> {
  constructor(
    app: App,
    private readonly rpc: Rpc,
    private readonly tax: Taxonomy,
    private readonly note: string,
  ) {
    super(app);
    this.setPlaceholder(`Traverse from ${displayName(note)} along…`);
  }

  getSuggestions(query: string): RelationChoice[] {
    return relationChoices(this.tax, query);
  }

  renderSuggestion(c: RelationChoice, el: HTMLElement): void {
    const inverse = inverseOf(this.tax, c.relation);
    el.createDiv({ text: c.inverse ? `← ${relationLabel(c.relation)}` : relationLabel(c.relation) });
    if (c.inverse && inverse !== null) el.createEl("small", { text: `notes that ${relationLabel(c.relation)} this one (i.e. ${relationLabel(inverse)})` });
  }

  onChooseSuggestion(c: RelationChoice): void {
    void this.traverse(c);
  }

  private async traverse(c: RelationChoice): Promise<void> {
    try {
      const result = asTraverse(
        await this.rpc.call("graph.traverse", { note: this.note, relation: c.relation, depth: 3, inverse: c.inverse }),
      );
      if (result.nodes.length === 0) {
        new Notice(`Nothing reached from ${displayName(this.note)} along ${relationLabel(c.relation)}.`);
        return;
      }
      new NodePicker(this.app, result.nodes, c).open();
    } catch (e) {
      const missing = e instanceof RpcError && e.code === ErrorCode.methodNotFound;
      new Notice(missing ? "This sidecar daemon has no graph.traverse yet; update it." : `Traverse failed: ${errorText(e)}`);
    }
  }
}

class NodePicker extends SuggestModal<TraverseNode> {
  constructor(
    app: App,
    private readonly nodes: TraverseNode[],
    choice: RelationChoice,
  ) {
    super(app);
    const direction = choice.inverse ? "backwards along" : "along";
    this.setPlaceholder(`${this.nodes.length} notes ${direction} ${relationLabel(choice.relation)}`);
  }

  getSuggestions(query: string): TraverseNode[] {
    const q = query.toLowerCase();
    return this.nodes.filter((n) => n.path.toLowerCase().includes(q));
  }

  renderSuggestion(n: TraverseNode, el: HTMLElement): void {
    el.createDiv({ text: `${"  ".repeat(Math.max(0, n.depth - 1))}${displayName(n.path)}` });
    const via = n.via !== null ? ` via ${displayName(n.via)}` : "";
    el.createEl("small", { text: `depth ${n.depth}${via} · ${n.path}` });
  }

  onChooseSuggestion(n: TraverseNode, evt: MouseEvent | KeyboardEvent): void {
    void openAt(this.app, n.path, 0, evt.ctrlKey || evt.metaKey);
  }
}
