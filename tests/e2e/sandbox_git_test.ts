/**
 * The git routes out of the sandbox (issue 26, items 1 and 2 of "What was
 * found"), end to end: the real `claude-agent-acp` against the scripted
 * Anthropic mock, under bubblewrap, allowed to run commands. Call 1 commits
 * honestly, then points its work folder's `.git` at the checkout's git dir; the
 * agent process stops; call 2 (a new process, the same session) tries to write
 * the checkout's config (a filter driver, `core.sshCommand`, `includeIf`,
 * `pushurl`), a hook, `info/attributes`, `main`, a loose object and a pack.
 * Every attempt fails, the honest commits land in the checkout's branch, and
 * the daemon's merge merges them. After each call the checkout passes `git
 * fsck --strict` and no file outside the work folder changed but the work's
 * branch and the objects its import added.
 *
 * The fixture lives under /var/tmp: the sandbox's private /tmp would hide it.
 */

import assert from "node:assert/strict";
import { bytesToHex } from "@noble/hashes/utils.js";
import { AcpLayer, type CallEvent } from "../../src/acp/calls.ts";
import { makePolicy } from "../../src/acp/policy.ts";
import { mergeWork, type WorkOpsSource } from "../../src/acp/work_ops.ts";
import { workId } from "../../src/acp/works.ts";
import { git } from "../../src/acp/worktrees.ts";
import { Sandboxer } from "../../src/safety/sandboxer.ts";
import { requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import {
  type MessagesRequest,
  promptContains,
  type Reply,
  startMockAnthropic,
  text,
  textOf,
  toolUse,
} from "../support/mock_anthropic.ts";
import { closing, gitRepo, tempDir } from "../support/rig.ts";
import { claudeAcpHarness } from "../support/harness_fixtures.ts";
import { AGENTS, harnessAgent } from "../../src/runner/runtimes/agents.ts";

const acp = requireCli("claude-acp");
const bwrap = requireTool("bwrap");
const NODE_KEY = "SECRET-NODEKEY-91c2";

function bash(command: string): Reply {
  return toolUse("Bash", { command, description: "probe" });
}

/** The tool results sent since the last user message holding `marker`: this call's steps. */
function resultsSince(req: MessagesRequest, marker: string): string[] {
  const msgs = req.messages ?? [];
  let from = 0;
  msgs.forEach((m, i) => {
    if (m.role === "user" && typeof m.content !== "string") {
      if (m.content.some((b) => b.type === "text" && textOf([b]).includes(marker))) from = i;
    } else if (m.role === "user" && typeof m.content === "string" && m.content.includes(marker)) {
      from = i;
    }
  });
  const out: string[] = [];
  for (const m of msgs.slice(from)) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) if (b.type === "tool_result") out.push(textOf(b.content));
  }
  return out;
}

/** Every file under `root`, by path, as a hash of its bytes (links by their target). */
async function tree(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (e.isSymlink) out.set(p, `link:${Deno.readLinkSync(p)}`);
      else {
        const bytes = Deno.readFileSync(p);
        out.set(p, bytesToHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))));
      }
    }
  };
  await walk(root);
  return out;
}

/**
 * What changed under the fixture between two trees, but what may: the work
 * folder and the records beside it, the agent's own state, the checkout's copy
 * of the work's branch (and its reflog), and new object files (an import adds
 * them; no existing one may change).
 */
function unexpectedChanges(
  before: Map<string, string>,
  after: Map<string, string>,
  allowed: { work: string; repo: string; home: string; data: string; branch: string },
): string[] {
  const git = `${allowed.repo}/.git`;
  // The agent's own private home (never the person's ~/.claude), and the daemon's list of the
  // data dirs its sandboxes hide (docs/decisions/sandbox.md).
  const mayChange = (p: string) =>
    p.startsWith(`${allowed.work}/`) || p.startsWith(`${allowed.work}.`) ||
    p.startsWith(`${allowed.data}/agent/homes/`) ||
    p === `${allowed.home}/.local/state/wats/data-dirs` ||
    p === `${git}/refs/heads/${allowed.branch}` || p === `${git}/logs/refs/heads/${allowed.branch}`;
  const mayAppear = (p: string) => mayChange(p) || p.startsWith(`${git}/objects/`);
  const out: string[] = [];
  for (const [p, h] of before) {
    if (!mayChange(p) && after.get(p) !== h) out.push(`changed or removed: ${p}`);
  }
  for (const p of after.keys()) if (!before.has(p) && !mayAppear(p)) out.push(`new: ${p}`);
  return out;
}

Deno.test({
  name: "a sandboxed coding agent that rewrites its .git and restarts cannot write the " +
    "checkout's config, hooks, info, refs, loose objects or packs; its honest commits land " +
    "and merge",
  ignore: acp === null || !bwrap,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using dir = tempDir("wats-sbx-git-", "/var/tmp");
    const root = dir.path;
    const data = `${root}/data`;
    Deno.mkdirSync(`${data}/worktrees`, { recursive: true });
    Deno.writeTextFileSync(`${data}/node.key`, NODE_KEY);
    const home = `${root}/home`;
    Deno.mkdirSync(`${home}/.claude`, { recursive: true });
    const repo = await gitRepo(`${root}/repo`, { identity: true });
    // One commit packed, the next loose: both kinds of object store are attacked.
    await git(["repack", "-a", "-d", "-q"], repo);
    Deno.writeTextFileSync(`${repo}/build.sh`, "echo build\n");
    await git(["add", "build.sh"], repo);
    await git(["commit", "-qm", "build script"], repo);
    const main = (await git(["rev-parse", "main"], repo)).trim();
    const blob = (await git(["rev-parse", "main:build.sh"], repo)).trim();
    const pack = [...Deno.readDirSync(`${repo}/.git/objects/pack`)]
      .find((e) => e.name.endsWith(".pack"))!.name;

    const R = `"$(printf %s ${repo})"`;
    // The request names no .git (the policy guards one in the worktree): the shell makes it.
    const G = `"$(printf .%s git)"`;
    const cfg = `${R}/$(printf .%s git)/config`;
    const gd = `${R}/$(printf .%s git)`;
    const rc = "; echo rc=$?";
    const call1: Reply[] = [
      bash(
        "echo one > honest1.txt && git add honest1.txt && " +
          "git -c user.email=a@example.org -c user.name=A commit -qm 'Honest one' && echo committed",
      ),
      bash(`cp -r ${G} ${G}-mine && rm -rf ${G} && printf 'gitdir: %s\\n' ${gd} > ${G}${rc}`),
    ];
    const attacks: [string, Reply][] = [
      ["filter via .git", bash(`git config filter.x.smudge "cat ${data}/node.key"${rc}`)],
      ["sshCommand", bash(`git config -f ${cfg} core.sshCommand "sh -c id"${rc}`)],
      ["includeIf", bash(`printf '[includeIf "gitdir:/"]\\n\\tpath = /tmp/x\\n' >> ${cfg}${rc}`)],
      ["pushurl", bash(`git config -f ${cfg} remote.origin.pushurl /tmp/evil.git${rc}`)],
      ["hook", bash(`printf '#!/bin/sh\\nid\\n' > ${gd}/hooks/post-checkout${rc}`)],
      ["info/attributes", bash(`echo '* filter=x' > ${gd}/info/attributes${rc}`)],
      ["main via .git", bash(`git update-ref refs/heads/main HEAD${rc}`)],
      ["main file", bash(`echo ${"0".repeat(40)} > ${gd}/refs/heads/main${rc}`)],
      [
        "loose object",
        bash(
          `o=${gd}/objects/${blob.slice(0, 2)}/${blob.slice(2)}; chmod u+w "$o"; ` +
            `cp ${gd}/HEAD "$o"${rc}`,
        ),
      ],
      [
        "pack",
        bash(
          `p=${gd}/objects/pack/${pack}; chmod u+w "$p"; ` +
            `printf X | dd of="$p" bs=1 seek=64 conv=notrunc 2>&1${rc}`,
        ),
      ],
      ["new object", bash(`echo evil | git --git-dir=${gd} hash-object -w --stdin${rc}`)],
    ];
    const call2: Reply[] = [
      ...attacks.map(([, r]) => r),
      bash(
        `rm -f ${G} && mv ${G}-mine ${G} && echo two > honest2.txt && git add honest2.txt && ` +
          "git -c user.email=a@example.org -c user.name=A commit -qm 'Honest two' && echo committed",
      ),
    ];
    await using mock = startMockAnthropic({
      rules: [
        {
          when: promptContains("PROBE-2"),
          reply: (req) => call2[resultsSince(req, "PROBE-2").length] ?? text("done-2"),
        },
        {
          when: promptContains("PROBE-1"),
          reply: (req) => call1[resultsSince(req, "PROBE-1").length] ?? text("done-1"),
        },
      ],
    });
    const events: CallEvent[] = [];
    const sandbox = new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: data,
      home,
    });
    const co = { name: "app", path: repo, base: "main", fetch: false };
    await using layer = closing(
      new AcpLayer({
        worktrees: `${data}/worktrees`,
        harnesses: { claude: claudeAcpHarness(acp!, mock.url, home) },
        checkouts: { app: co },
        allowedCheckouts: [],
        policy: makePolicy(["claude/edit(*)", "claude/execute"], [], data),
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, IS_SANDBOX: "1" },
        onEvent: (e) => events.push(e),
        sandbox,
        agentOf: harnessAgent,
      }),
    );
    const origin = { agent: "eve", thread: "_", callId: "c1" };
    const work = `${data}/worktrees/claude/app/eve/_/w`;
    const branch = "wats/eve/_/w";
    const allowed = { work, repo, home, data, branch };
    const before = await tree(root);

    const r1 = await layer.call("claude", origin, { task: "PROBE-1", checkout: "app", work: "w" });
    const why1 = JSON.stringify({ r1, sent: mock.messages().length }, null, 1);
    assert.equal(r1.message, "done-1", why1);
    assert.deepEqual(r1.refused, [], why1);
    // Its .git now leads to the checkout's own branch: the import brought nothing (yet).
    assert.deepEqual(r1.commits, [], why1);
    assert.equal(Deno.readTextFileSync(`${work}/.git`).trim(), `gitdir: ${repo}/.git`);
    assert.equal(await git(["fsck", "--strict", "--no-dangling", "--no-progress"], repo), "");
    assert.deepEqual(unexpectedChanges(before, await tree(root), allowed), []);

    // The agent process stops (the sweep stops idle agents first): call 2 starts a new one.
    const swept = await layer.sweep();
    assert.deepEqual(swept.removed, []);
    assert.equal(await layer.isRunning("claude"), false);
    const afterCall1 = await tree(root);

    const r2 = await layer.call("claude", { ...origin, callId: "c2" }, {
      task: "PROBE-2",
      checkout: "app",
      work: "w",
    });
    const bodies = mock.messages().map((m) => m.body!);
    const results = bodies.map((b) => resultsSince(b, "PROBE-2"))
      .reduce((a, b) => b.length > a.length ? b : a, []);
    const why = JSON.stringify({ results, r2 }, null, 1);
    assert.equal(r2.message, "done-2", why);
    assert.equal(results.length, call2.length, why);
    attacks.forEach(([name], i) => {
      assert.match(results[i]!, /rc=[1-9]/, `${name} succeeded: ${results[i]}`);
      assert.match(
        results[i]!,
        /Read-only file system|could not lock|unable to/,
        `${name}: ${why}`,
      );
    });
    assert.match(results.at(-1)!, /committed/, why);
    assert.deepEqual(r2.commits.map((c) => c.subject), ["Honest two", "Honest one"], why);
    assert.deepEqual(r2.refused, [], why);

    // Outside the work folder nothing changed but the work's branch and new objects.
    assert.equal(await git(["fsck", "--strict", "--no-dangling", "--no-progress"], repo), "");
    assert.deepEqual(unexpectedChanges(afterCall1, await tree(root), allowed), []);
    assert.deepEqual(unexpectedChanges(before, await tree(root), allowed), []);
    assert.equal((await git(["rev-parse", "main"], repo)).trim(), main);
    assert.equal(await git(["show", "main:build.sh"], repo), "echo build\n");

    // The daemon's merge lands the honest work.
    const src: WorkOpsSource = {
      root: `${data}/worktrees`,
      harnesses: { claude: claudeAcpHarness(acp!, mock.url, home) },
      checkouts: { app: co },
      busy: (d) => layer.busy(d),
      held: () => [],
      call: (h, o, a) => layer.call(h, o, a),
      blocked: () => undefined,
      checkoutNames: () => ["app"],
      sweep: () => layer.sweep(),
      sandbox,
    };
    const merged = await mergeWork(src, workId("app", branch));
    assert.match(merged, /^fast-forwarded main: work w \(wats\/eve\/_\/w\) is in the base/);
    assert.equal((await git(["rev-parse", "main"], repo)).trim(), r2.head);
    assert.equal(Deno.readTextFileSync(`${repo}/honest2.txt`), "two\n");
    assert.equal(await git(["fsck", "--strict", "--no-dangling", "--no-progress"], repo), "");
    assert.equal(await git(["status", "--porcelain"], repo), "");
    assert.equal(JSON.stringify(bodies).includes(NODE_KEY), false);
  },
});
