/** "Show graph lint report": every finding, grouped by severity and rule, each one clickable. */
import { App, Modal } from "obsidian";
import { groupFindings, ruleName, summarise } from "../model/lint";
import type { Finding } from "../results";
import { displayName, openAt } from "./dom";

export class LintModal extends Modal {
  constructor(
    app: App,
    private readonly findings: Finding[],
  ) {
    super(app);
  }

  override onOpen(): void {
    this.titleEl.setText("Graph lint");
    const root = this.contentEl;
    root.addClass("sidecar-lint-report");
    root.createEl("p", { text: summarise(this.findings) });
    for (const group of groupFindings(this.findings)) {
      const details = root.createEl("details", { cls: `sidecar-${group.severity}` });
      details.open = group.severity !== "info";
      details.createEl("summary", { text: `${group.severity} · ${ruleName(group.rule)} (${group.findings.length})`, attr: { title: group.rule } });
      const list = details.createEl("ul");
      for (const f of group.findings) {
        const li = list.createEl("li", { cls: "sidecar-finding" });
        const link = li.createEl("a", { text: displayName(f.note), attr: { href: "#", title: f.note } });
        li.createSpan({ text: f.line > 0 ? `:${f.line} ` : " " });
        li.createSpan({ cls: "sidecar-detail", text: f.detail });
        if (f.fix !== "") li.createDiv({ cls: "sidecar-fix", text: f.fix });
        link.addEventListener("click", (evt) => {
          evt.preventDefault();
          this.close();
          void openAt(this.app, f.note, f.line);
        });
      }
    }
  }

  override onClose(): void {
    this.contentEl.empty();
  }
}
