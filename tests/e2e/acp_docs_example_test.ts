/**
 * docs/acp.md's example configuration, followed word for word (issue 29,
 * item 2): its TOML block is read from the doc and only what names this
 * machine is replaced (the pinned `claude-agent-acp`'s path, the model's key
 * by the mock's address, `/srv/billing` by a real repository with an
 * `origin`). The real daemon and the real `claude-agent-acp` against the
 * scripted mock: the coding agent writes src/app.ts (allowed by the example's
 * `claude/edit(src/**)`) and runs `git commit` (an execute request, which the
 * example's policy does not allow).
 *
 * - Review off: the commit is refused; the work never pretends. It holds the
 *   file as an uncommitted change, is idle (not merged), merge is refused
 *   (its base `origin/main` is no local branch: push instead) and send back
 *   is accepted.
 * - Review on: the commit request parks; approving it lets the coding agent
 *   commit, and the work is pushed to `origin`.
 *
 * The fixture lives under /var/tmp: the coding agent's sandbox has a private /tmp.
 */

import assert from "node:assert/strict";
import { git } from "../../src/acp/worktrees.ts";
import { requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import {
  type MessagesRequest,
  promptContains,
  startMockAnthropic,
  text,
  toolUse,
} from "../support/mock_anthropic.ts";
import { gitRepo, nodeRig, tempDir } from "../support/rig.ts";

const acp = requireCli("claude-acp");
const bwrap = requireTool("bwrap");

const DOC_ARGS = "/opt/acp/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js";

/** The first TOML block of docs/acp.md, as written. */
function docExample(): string {
  const doc = Deno.readTextFileSync(new URL("../../docs/acp.md", import.meta.url));
  const m = doc.match(/```toml\n([\s\S]*?)```/);
  assert.ok(m, "docs/acp.md has a TOML example");
  return m[1]!;
}

/** How many tool results the conversation holds so far: the script's step. */
function step(req: MessagesRequest): number {
  let n = 0;
  for (const m of req.messages ?? []) {
    if (typeof m.content === "string") continue;
    n += m.content.filter((b) => b.type === "tool_result").length;
  }
  return n;
}

async function fixture(prefix: string, review: boolean) {
  const dir = tempDir(prefix, "/var/tmp");
  const data = `${dir.path}/data`;
  const home = `${dir.path}/home`;
  Deno.mkdirSync(`${home}/.claude`, { recursive: true });
  Deno.mkdirSync(data, { recursive: true });
  const repo = await gitRepo(`${dir.path}/billing`, { identity: true });
  const bare = `${dir.path}/origin.git`;
  await git(["init", "-q", "--bare", bare], dir.path);
  await git(["remote", "add", "origin", bare], repo);
  await git(["push", "-q", "origin", "main"], repo);
  const wt = `${data}/worktrees/claude/billing/alice/_/fix-app`;
  const mock = startMockAnthropic({
    rules: [
      {
        when: promptContains("TASK-DOC"),
        reply: (r) =>
          step(r) === 0
            ? toolUse("Write", {
              file_path: `${wt}/src/app.ts`,
              content: "export const fixed = 1;\n",
            })
            : step(r) === 1
            ? toolUse("Bash", {
              command: "git add -A && git -c user.email=a@example.org -c user.name=Agent " +
                "commit -qm 'Fix the app'",
              description: "commit",
            })
            : text("Wrote src/app.ts and committed it."),
      },
      { when: promptContains("REVIEW-DOC"), reply: text("Noted.") },
    ],
  });
  const env = [
    `ANTHROPIC_BASE_URL = "${mock.url}"`,
    'ANTHROPIC_API_KEY = "test-key"',
    'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1"',
    `CLAUDE_CONFIG_DIR = "${home}/.claude"`,
  ].join(", ");
  let toml = docExample()
    .replace(DOC_ARGS, acp![1]!)
    .replace('env = { ANTHROPIC_API_KEY = "…" }', `env = { ${env} }`)
    .replace('path = "/srv/billing"', `path = "${repo}"`);
  assert.ok(!toml.includes("/srv/billing") && !toml.includes(DOC_ARGS) && !toml.includes("…"));
  if (review) toml = toml.replace("[agent]\n", "[agent]\nreview = true\n");
  Deno.writeTextFileSync(`${data}/config.toml`, toml);
  const rig = await nodeRig({ dataDir: data, home, env: { IS_SANDBOX: "1" } });
  return {
    data,
    home,
    repo,
    bare,
    wt,
    mock,
    rig,
    async [Symbol.asyncDispose]() {
      await rig[Symbol.asyncDispose]();
      await mock.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}

const ID = "billing~alice~_~fix-app";

Deno.test({
  name:
    "docs/acp.md's example, review off: the refused git commit leaves the work idle with its uncommitted change, never merged; merge is refused for origin/main and send back is accepted",
  ignore: acp === null || !bwrap,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using f = await fixture("wats-docs-off-", false);
    const client = await f.rig.mcp("alice", f.home);
    try {
      const r = await client.callTool({
        name: "claude",
        arguments: { task: "TASK-DOC: fix src/app.ts", checkout: "billing", work: "fix-app" },
      });
      const out = JSON.stringify(r.content);
      assert.ok(!r.isError, out);
      assert.match(out, /claude\/execute/, "the commit is listed as refused");
      const show = await f.rig.wats(["work", "show", ID]);
      assert.equal(show.code, 0, show.stderr);
      assert.match(show.stdout, /^work fix-app \(idle\)\n/);
      assert.match(show.stdout, /commits not in origin\/main: 0/);
      assert.match(show.stdout, /uncommitted/i);
      assert.match(show.stdout, /src\/app\.ts/);
      const merge = await f.rig.wats(["work", "merge", ID]);
      assert.notEqual(merge.code, 0, merge.stdout);
      assert.match(
        merge.stderr,
        /the base origin\/main of checkout billing is not a local branch; push the work \(`wats work push billing~alice~_~fix-app`\)/,
      );
      assert.equal(
        (await git(["rev-parse", "main"], f.repo)).trim(),
        (await git(["rev-parse", "origin/main"], f.repo)).trim(),
        "nothing landed",
      );
      const send = await f.rig.wats(["work", "send", ID, "--text", "REVIEW-DOC: commit it"]);
      assert.equal(send.code, 0, send.stderr);
      assert.match(send.stdout, /^sent back: call send-/);
    } finally {
      await client.close();
    }
  },
});

Deno.test({
  name:
    "docs/acp.md's example, review on: the git commit parks for a person; approved, the coding agent commits and the work is pushed to origin",
  ignore: acp === null || !bwrap,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using f = await fixture("wats-docs-on-", true);
    const client = await f.rig.mcp("alice", f.home);
    try {
      const r = await client.callTool({
        name: "claude",
        arguments: { task: "TASK-DOC: fix src/app.ts", checkout: "billing", work: "fix-app" },
      });
      const out = JSON.stringify(r.content);
      assert.ok(!r.isError, out);
      assert.match(out, /parked/);
      const held = await f.rig.waitEvent("held", { where: (e) => e.what === "permission" });
      const pending = await f.rig.wats(["agent", "pending"]);
      assert.match(pending.stdout, /permission claude\/execute/);
      const ended = f.rig.waitEvent("work_changed", {
        where: (e) => String(e.what).startsWith("call ended"),
      });
      const approved = await f.rig.wats(["agent", "approve", held.id]);
      assert.equal(approved.code, 0, approved.stderr);
      await ended;
      const log = await git(["log", "--format=%s", "main..wats/alice/_/fix-app"], f.repo);
      assert.equal(log.trim(), "Fix the app");
      const push = await f.rig.wats(["work", "push", ID]);
      assert.equal(push.code, 0, push.stderr);
      const pushed = await git(["rev-parse", "wats/alice/_/fix-app"], f.bare);
      assert.equal(
        pushed.trim(),
        (await git(["rev-parse", "wats/alice/_/fix-app"], f.repo)).trim(),
      );
    } finally {
      await client.close();
    }
  },
});
