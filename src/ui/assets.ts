/**
 * The dashboard's static files, each named by URL beside this module so that
 * `deno compile` embeds it (deno.json's compile task includes src/ui/assets;
 * tests/build/compile_test.ts finds every `new URL(…, import.meta.url)` and
 * checks the binary holds it). uPlot is vendored from npm `uplot@1.6.32`
 * (MIT, uPlot.LICENSE): docs/decisions/ui.md says why.
 *
 * @module
 */

/** The folder `wats ui` must be able to read (its one read grant outside the data dir). */
export const ASSETS_DIR: string = new URL("./assets/", import.meta.url).pathname;

/** The files served under `/assets/`: where each is, and its content type. */
export const ASSETS: Readonly<Record<string, { url: URL; type: string }>> = {
  "style.css": {
    url: new URL("./assets/style.css", import.meta.url),
    type: "text/css; charset=utf-8",
  },
  "dashboard.js": {
    url: new URL("./assets/dashboard.js", import.meta.url),
    type: "text/javascript; charset=utf-8",
  },
  "go.js": {
    url: new URL("./assets/go.js", import.meta.url),
    type: "text/javascript; charset=utf-8",
  },
  "live.js": {
    url: new URL("./assets/live.js", import.meta.url),
    type: "text/javascript; charset=utf-8",
  },
  "uPlot.iife.min.js": {
    url: new URL("./assets/uPlot.iife.min.js", import.meta.url),
    type: "text/javascript; charset=utf-8",
  },
  "uPlot.min.css": {
    url: new URL("./assets/uPlot.min.css", import.meta.url),
    type: "text/css; charset=utf-8",
  },
};
