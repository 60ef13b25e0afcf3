/**
 * A coding agent's work from the person's side, end to end (issue 19): a real
 * daemon, the real `claude-agent-acp` against the scripted Anthropic mock, a
 * temp checkout with a bare remote. The agent's call commits on a work; `wats
 * work list/show` shows it with its diff; `wats work send` sends it back and the
 * next call on the same work (same session) gets the comment as its task and
 * commits; `wats work push` puts the branch on the remote; `wats work merge`
 * fast-forwards the base and the sweep removes the worktree; `wats work
 * discard` asks for --yes without a terminal, then removes another work.
 *
 * The fixture lives under /var/tmp: the coding agent's sandbox has a private /tmp.
 */

import assert from "node:assert/strict";
import { git } from "../../src/acp/worktrees.ts";
import type { WorkDetail } from "../../src/contracts/works.ts";
import { requireCli } from "../support/clis.ts";
import { runWats } from "../support/cli.ts";
import { requireTool } from "../support/debian_tools.ts";
import { waitFor } from "../support/swarm.ts";
import { worksRig } from "../support/works_rig.ts";
import { promptContains } from "../support/mock_anthropic.ts";

const acp = requireCli("claude-acp");
const bwrap = requireTool("bwrap");
const opts = { ignore: acp === null || !bwrap, sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "a person reviews a coding agent's work: show its diff, send it back, push, merge, discard",
  ...opts,
  async fn() {
    await using works = await worksRig("wats-works-e2e-", acp!);
    const { data, home, repo, bare, wt, mock, rig } = works;
    const wats = (...args: string[]) => runWats(["--data-dir", data, ...args], { home });

    // The heartbeat agent's call commits on the work.
    const client = await rig.mcp("alice", home);
    const r = await client.callTool({
      name: "claude",
      arguments: { task: "TASK-1: add a.txt", checkout: "app", work: "feat" },
    });
    const out = (r.content as { text: string }[])[0]!.text;
    assert.ok(!r.isError, `${out}\n${rig.node.stderr()}`);
    await client.close();

    const id = "app~alice~_~feat";
    const listed = await wats("work", "list");
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^STATE +ID +HEAD +UPDATED +HARNESS +BRANCH\n/);
    assert.match(
      listed.stdout,
      new RegExp(`\\nidle +${id} +[0-9a-f]{12} .* claude +wats/alice/_/feat`),
    );
    const page = JSON.parse((await wats("work", "show", id, "--json")).stdout) as WorkDetail;
    assert.deepEqual(page.commits.map((c) => c.subject), ["Add a"]);
    assert.deepEqual(page.diff.map((f) => [f.path, f.status, f.hunks[0]?.lines]), [
      ["a.txt", "added", [{ op: "+", text: "one", new: 1 }]],
    ]);
    assert.equal(page.calls.length, 1);
    assert.equal(page.calls[0]?.outcome, "ok");
    assert.equal(page.calls[0]?.message, "Added a.txt.");
    assert.ok(page.transcript.length > 0, "the session's updates are kept");
    const shown = await wats("work", "show", id);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /commits not in main: 1\n {2}[0-9a-f]{12} Add a \(Agent\)/);
    assert.match(shown.stdout, /--- added a\.txt \(\+1 -0\)\n@@ -0,0 \+1 @@\n\+one\n/);
    // Not a terminal: no color codes.
    assert.ok(!shown.stdout.includes("\x1b"));

    // Sent back: the comment is the next call's task, on the same work and session.
    const sent = await wats(
      "work",
      "send",
      id,
      "--text",
      "REVIEW-2: also add b.txt",
      "--file",
      "a.txt",
      "--line",
      "1",
    );
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, /^sent back: call send-\S+ on work feat started/);
    await waitFor("the sent-back call to end", () => {
      try {
        return Deno.readTextFileSync(`${wt}.calls.jsonl`).split("\n")
          .filter((l) => l.includes('"outcome"')).length === 2;
      } catch {
        return false;
      }
    }, 180_000);
    const after = JSON.parse((await wats("work", "show", id, "--json")).stdout) as WorkDetail;
    assert.deepEqual(after.commits.map((c) => c.subject), ["Add b", "Add a"]);
    const second = after.calls[1]!;
    assert.match(
      second.task,
      /sent it back with this comment on a\.txt:1:\n\n---\nREVIEW-2: also add b\.txt\n---/,
    );
    assert.equal(second.outcome, "ok");
    assert.equal(second.message, "Added b.txt as asked.");
    assert.ok(
      mock.messages().some((m) =>
        promptContains("REVIEW-2")(m.body!) && promptContains("TASK-1")(m.body!)
      ),
      "the sent-back call continued the work's session",
    );

    // Pushed to the bare remote.
    // Without --head, the CLI names the head it acts on first, and binds to it.
    const pushed = await wats("work", "push", id);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal(
      pushed.stdout,
      `pushing work feat at ${
        after.head!.slice(0, 12)
      } (2 commit(s) not in main: Add b; Add a); bound to it with --head\n` +
        "pushed wats/alice/_/feat to origin\n",
    );
    assert.equal(
      (await git(["rev-parse", "refs/heads/wats/alice/_/feat"], bare)).trim(),
      after.head,
    );

    // Merged: the base has both commits, and the sweep removed the worktree.
    // Bound to the head the person saw before REVIEW-2: refused, nothing changed.
    const stale = await wats("work", "merge", id, "--head", page.head!);
    assert.equal(stale.code, 1);
    assert.match(
      stale.stderr,
      /^error: .*work feat: not merged: it changed since you were shown head [0-9a-f]{12}: its head is now [0-9a-f]{12}, with 1 new commit\(s\): [0-9a-f]{12} Add b; nothing was changed/,
    );
    assert.notEqual((await git(["rev-parse", "main"], repo)).trim(), after.head);
    const merged = await wats("work", "merge", id, "--head", after.head!);
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stdout, /^fast-forwarded main: .*the sweep removed its worktree/);
    assert.equal((await git(["rev-parse", "main"], repo)).trim(), after.head);
    assert.equal(Deno.readTextFileSync(`${repo}/b.txt`), "two\n");
    assert.throws(() => Deno.statSync(wt));

    // Discard: refused without a terminal unless --yes; then worktree and branch are gone.
    const other = `${data}/worktrees/claude/app/alice/_/other`;
    await git(["worktree", "add", "-q", "-b", "wats/alice/_/other", other, "main"], repo);
    const asked = await wats("work", "discard", "app~alice~_~other");
    assert.equal(asked.code, 1);
    assert.match(
      asked.stderr,
      /^error: not discarded: confirm with `wats work discard app~alice~_~other --yes`/,
    );
    Deno.statSync(other);
    const gone = await wats("work", "discard", "app~alice~_~other", "--yes");
    assert.equal(gone.code, 0, gone.stderr);
    assert.match(
      gone.stdout,
      /^discarding work other at [0-9a-f]{12} \(0 commit\(s\) not in main\); bound to it with --head\ndiscarded work other: removed worktree .* and branch wats\/alice\/_\/other/,
    );
    assert.throws(() => Deno.statSync(other));
    // The merged work went with its branch.
    const missing = await wats("work", "show", id);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: .*no work "app~alice~_~feat": `wats work list` shows/);
    const none = await wats("work", "list");
    assert.equal(none.stdout, "no works yet: a coding agent's call makes one (docs/acp.md)\n");
  },
});
