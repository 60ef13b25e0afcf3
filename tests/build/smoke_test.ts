/**
 * The release smoke test (smoke.ts) run here against the source command, so
 * the script the release workflow runs on the binary is itself tested: every
 * step passes, including the background node `wats mcp` starts by running
 * this very program (here `deno`, in the release the binary).
 */

import { smoke } from "./smoke.ts";
import { watsCommand } from "../support/cli.ts";

Deno.test({
  name: "the release smoke test passes on the source build: version, config, daemon, mcp",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await smoke(watsCommand(), { exe: Deno.execPath() });
  },
});

Deno.test({
  name:
    "from source, wats runs itself again with the deno it runs on, whatever that file is called",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // A deno not named `deno` (as a versioned install may be): `wats mcp` must
    // still start its background node as `<that deno> run … main.ts`.
    const dir = await Deno.makeTempDir({ prefix: "wats-deno-copy-" });
    try {
      const copy = `${dir}/deno-2.9`;
      await Deno.copyFile(Deno.execPath(), copy);
      const [, ...rest] = watsCommand();
      await smoke([copy, ...rest], { exe: copy });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
