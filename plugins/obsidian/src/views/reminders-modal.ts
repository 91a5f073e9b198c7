/** "Reminders": what is due now and what comes next, from `reminders.due`. */
import { App, Modal } from "obsidian";
import { relativeDue } from "../model/reminders";
import type { Reminder } from "../results";
import { openAt } from "./dom";

export class RemindersModal extends Modal {
  constructor(
    app: App,
    private readonly due: Reminder[],
    private readonly upcoming: Reminder[],
  ) {
    super(app);
  }

  override onOpen(): void {
    this.titleEl.setText("Reminders");
    this.list("Due", this.due, "Nothing is due.");
    this.list("Upcoming", this.upcoming, "Nothing scheduled.");
  }

  private list(title: string, items: Reminder[], empty: string): void {
    this.contentEl.createEl("h4", { text: title });
    if (items.length === 0) {
      this.contentEl.createEl("p", { cls: "sidecar-none", text: empty });
      return;
    }
    const ul = this.contentEl.createEl("ul", { cls: "sidecar-reminders" });
    const now = Date.now();
    for (const r of items) {
      const li = ul.createEl("li");
      const title = li.createEl(r.path !== null ? "a" : "span", { text: r.title, attr: { title: r.id } });
      li.createSpan({ cls: "sidecar-when", text: ` ${relativeDue(r.dueAt, now)}` });
      if (r.content !== "") li.createDiv({ cls: "sidecar-detail", text: r.content });
      const path = r.path;
      if (path !== null) {
        title.addEventListener("click", (evt) => {
          evt.preventDefault();
          this.close();
          void openAt(this.app, path);
        });
      }
    }
  }

  override onClose(): void {
    this.contentEl.empty();
  }
}
