/**
 * wats: one binary that lets AI agents on different machines work together.
 * This entry only launches the command's Worker and exits with its code; it is
 * the only place that calls `Deno.exit`.
 *
 * @module
 */

import { launch } from "./src/cli/launcher.ts";

if (import.meta.main) {
  Deno.exit(await launch(Deno.args));
}
