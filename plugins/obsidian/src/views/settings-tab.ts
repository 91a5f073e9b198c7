/** The settings tab: where the daemon is, how search and the pane behave. */
import { App, PluginSettingTab, Setting } from "obsidian";
import { SEARCH_MODES, isSearchMode } from "../model/search";
import type SidecarPlugin from "../main";

export class SidecarSettingTab extends PluginSettingTab {
  constructor(
    app: App,
    private readonly plugin: SidecarPlugin,
  ) {
    super(app, plugin);
  }

  override display(): void {
    const { containerEl } = this;
    containerEl.empty();
    const s = this.plugin.settings;
    const save = async (reconnect = false): Promise<void> => {
      await this.plugin.saveSettings(reconnect);
    };

    new Setting(containerEl).setName("Connection").setHeading();
    new Setting(containerEl)
      .setName("Socket path")
      .setDesc(
        "Leave empty to find the daemon's socket as the daemon computes it " +
          "($XDG_RUNTIME_DIR/sidecar/<vault-id>.sock, then the data dir, then /tmp). " +
          "Run `sidecar where --vault <vault>` to see it. Flatpak: see the plugin's README.",
      )
      .addText((t) =>
        t.setPlaceholder("auto").setValue(s.socketPath).onChange(async (v) => {
          s.socketPath = v.trim();
          await save(true);
        }),
      );
    new Setting(containerEl)
      .setName("Sidecar executable")
      .setDesc("Optional: the `sidecar` command, asked with `sidecar where --json` when no socket is found.")
      .addText((t) =>
        t.setPlaceholder("/home/me/.local/bin/sidecar").setValue(s.sidecarPath).onChange(async (v) => {
          s.sidecarPath = v.trim();
          await save(true);
        }),
      );
    new Setting(containerEl)
      .setName("Status")
      .setDesc(this.plugin.connectionSummary())
      .addButton((b) => b.setButtonText("Reconnect").onClick(() => this.plugin.client.reconnectNow()));

    new Setting(containerEl).setName("Search").setHeading();
    new Setting(containerEl)
      .setName("Default mode")
      .setDesc("Type /l, /s or /h before a query to switch for one search.")
      .addDropdown((d) => {
        for (const m of SEARCH_MODES) d.addOption(m, m);
        d.setValue(s.searchMode).onChange(async (v) => {
          if (isSearchMode(v)) s.searchMode = v;
          await save();
        });
      });
    new Setting(containerEl).setName("Results").addSlider((sl) =>
      sl.setLimits(5, 100, 5).setValue(s.searchLimit).setDynamicTooltip().onChange(async (v) => {
        s.searchLimit = v;
        await save();
      }),
    );

    new Setting(containerEl).setName("Relations pane").setHeading();
    new Setting(containerEl).setName("Show unlinked mentions").addToggle((t) =>
      t.setValue(s.showUnlinked).onChange(async (v) => {
        s.showUnlinked = v;
        await save();
      }),
    );
    new Setting(containerEl).setName("Show related notes by meaning").addToggle((t) =>
      t.setValue(s.showRelated).onChange(async (v) => {
        s.showRelated = v;
        await save();
      }),
    );
    new Setting(containerEl).setName("Related notes").addSlider((sl) =>
      sl.setLimits(3, 20, 1).setValue(s.relatedLimit).setDynamicTooltip().onChange(async (v) => {
        s.relatedLimit = v;
        await save();
      }),
    );
    new Setting(containerEl)
      .setName("Extra relation pairs")
      .setDesc("One `forward=inverse` per line, matching `[relations] pairs` in the vault's .sidecar/config.toml.")
      .addTextArea((t) =>
        t.setPlaceholder("blocks=blocked_by").setValue(s.relationPairs).onChange(async (v) => {
          s.relationPairs = v;
          await save();
        }),
      );
    new Setting(containerEl).setName("Show due reminders at start-up").addToggle((t) =>
      t.setValue(s.remindAtStartup).onChange(async (v) => {
        s.remindAtStartup = v;
        await save();
      }),
    );
  }
}
