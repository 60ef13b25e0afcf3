import assert from "node:assert/strict";
import { missingHarnessFile } from "../../src/config/harness_files.ts";
import type { HarnessConfig } from "../../src/config/acp_tables.ts";
import { runWats } from "../support/cli.ts";

function harness(command: string, args: string[] = []): HarnessConfig {
  return { name: "claude", command, args, env: {}, meta: {}, context: [], idle: 1, enabled: true };
}

Deno.test("a harness whose command path or an absolute path in its args is missing is named with the fix; one that is there is not", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "wats-harness-" });
  try {
    Deno.writeTextFileSync(`${dir}/agent.js`, "");
    Deno.writeTextFileSync(`${dir}/node`, "");
    assert.equal(await missingHarnessFile(harness("node", [`${dir}/agent.js`])), undefined);
    assert.equal(await missingHarnessFile(harness(`${dir}/node`, ["--x"])), undefined);
    // A bare name is the daemon's PATH's to find when the harness starts.
    assert.equal(await missingHarnessFile(harness("no-such-agent-acp")), undefined);
    assert.equal(
      await missingHarnessFile(harness("node", [`${dir}/gone/index.js`])),
      `[harnesses.claude] args name ${dir}/gone/index.js, which does not exist: ` +
        "fix [harnesses.claude] in config.toml (or set enabled = false)",
    );
    assert.match(
      (await missingHarnessFile(harness(`${dir}/nope`)))!,
      /^\[harnesses\.claude\] command .*\/nope does not exist: fix \[harnesses\.claude\]/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the daemon refuses to start with a harness whose args name a missing file, and says the fix", async () => {
  const data = Deno.makeTempDirSync({ prefix: "wats-harness-data-" });
  try {
    Deno.writeTextFileSync(
      `${data}/config.toml`,
      '[harnesses.claude]\ncommand = "/bin/sh"\nargs = ["/nonexistent/claude-agent-acp/dist/index.js"]\n',
    );
    const r = await runWats(["--data-dir", data, "node"], { timeoutMs: 120_000 });
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(
      r.stderr,
      /\[harnesses\.claude\] args name \/nonexistent\/claude-agent-acp\/dist\/index\.js, which does not exist: fix \[harnesses\.claude\] in config\.toml/,
    );
  } finally {
    Deno.removeSync(data, { recursive: true });
  }
});
