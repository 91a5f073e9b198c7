// The plugin bundle (main.js, as Obsidian loads it) and, with "tests", the node test files.
import esbuild from "esbuild";
import { builtinModules } from "node:module";
import { readdirSync, rmSync } from "node:fs";

const mode = process.argv[2] ?? "watch";
const builtins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

if (mode === "tests") {
  rmSync("build-tests", { recursive: true, force: true });
  const entryPoints = readdirSync("test")
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/${f}`);
  await esbuild.build({
    entryPoints,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node18",
    outdir: "build-tests",
    outExtension: { ".js": ".cjs" },
    sourcemap: "inline",
    logLevel: "warning",
  });
} else if (mode === "render") {
  // the Relations pane for a browser, on the shim of Obsidian's classes (tests/test_obsidian_render.py)
  await esbuild.build({
    entryPoints: ["test/render/page.ts"],
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2020",
    alias: { obsidian: "./test/render/obsidian.ts" },
    external: builtins,
    outfile: "build-render/pane.js",
    logLevel: "warning",
  });
} else {
  const context = await esbuild.context({
    entryPoints: ["src/main.ts"],
    bundle: true,
    external: [
      "obsidian",
      "electron",
      "@codemirror/*",
      "@lezer/*",
      ...builtins,
    ],
    format: "cjs",
    target: "es2020",
    logLevel: "info",
    sourcemap: mode === "production" ? false : "inline",
    treeShaking: true,
    outfile: "main.js",
    minify: mode === "production",
  });
  if (mode === "production") {
    await context.rebuild();
    await context.dispose();
  } else {
    await context.watch();
  }
}
