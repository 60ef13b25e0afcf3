import assert from "node:assert/strict";
import { contextBlocks } from "../../src/acp/context.ts";

Deno.test("context files come from the worktree only: a link out of it is skipped", async () => {
  const root = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "wats-ctx-" }));
  try {
    const wt = `${root}/wt`;
    Deno.mkdirSync(`${wt}/.git`, { recursive: true });
    Deno.writeTextFileSync(`${root}/node.key`, "SECRET-KEY");
    Deno.writeTextFileSync(`${wt}/AGENTS.md`, "be brief");
    Deno.writeTextFileSync(`${wt}/.git/config`, "[core]");
    Deno.symlinkSync(`${root}/node.key`, `${wt}/CLAUDE.md`);
    Deno.symlinkSync(`${wt}/.git/config`, `${wt}/GIT.md`);
    Deno.symlinkSync(`${wt}/AGENTS.md`, `${wt}/LINKED.md`);
    const blocks = await contextBlocks(wt, [
      "CLAUDE.md",
      "AGENTS.md",
      "GIT.md",
      "LINKED.md",
      "MISSING.md",
    ]);
    assert.deepEqual(blocks, [
      { type: "text", text: "Context from AGENTS.md:\n\nbe brief" },
      { type: "text", text: "Context from LINKED.md:\n\nbe brief" },
    ]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
