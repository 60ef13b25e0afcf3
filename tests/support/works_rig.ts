/**
 * The fixture of the works tests (tests/e2e/works_e2e_test.ts through `wats
 * work`, tests/ui/works_ui_e2e_test.ts through the dashboard): a checkout with a
 * bare remote, the real `claude-agent-acp` against a scripted mock whose first
 * call (TASK-1) commits a.txt and whose sent-back call (REVIEW-2, same session)
 * commits b.txt, and a daemon allowed to edit and run commands there.
 *
 * It lives under /var/tmp: the coding agent's sandbox has a private /tmp.
 *
 * @module
 */

import { git } from "../../src/acp/worktrees.ts";
import { claudeAcpToml } from "./harness_fixtures.ts";
import {
  type MessagesRequest,
  type MockAnthropic,
  promptContains,
  startMockAnthropic,
  text,
  toolUse,
} from "./mock_anthropic.ts";
import { gitRepo, type NodeRig, nodeRig, tempDir } from "./rig.ts";

/** The works fixture; `await using` stops the daemon and the mock and removes the files. */
export interface WorksRig extends AsyncDisposable {
  data: string;
  home: string;
  /** The checkout (`[checkouts.app]`, base `main`). */
  repo: string;
  /** Its `origin`, a bare repository. */
  bare: string;
  /** The worktree of the work `feat` that alice's call makes. */
  wt: string;
  mock: MockAnthropic;
  rig: NodeRig;
}

/** How many tool results the conversation holds so far: the script's step. */
export function step(req: MessagesRequest): number {
  let n = 0;
  for (const m of req.messages ?? []) {
    if (typeof m.content === "string") continue;
    n += m.content.filter((b) => b.type === "tool_result").length;
  }
  return n;
}

/** The mock's Bash call that writes `file` and commits it as `subject`. */
export function commitFile(file: string, content: string, subject: string) {
  return toolUse("Bash", {
    command: `printf '${content}\\n' > ${file} && git add ${file} && ` +
      `git -c user.email=a@example.org -c user.name=Agent commit -qm '${subject}' && echo committed`,
    description: "commit",
  });
}

/**
 * The config.toml of a daemon whose `claude` harness is `acp` against the mock at `mockUrl`
 * (its config under `home`), with the checkout `app` at `repo` (base `main`) and a policy
 * that lets it edit and run commands there.
 */
export function worksConfig(o: { acp: string[]; mockUrl: string; home: string; repo: string }) {
  return [
    ...claudeAcpToml(o.acp, o.mockUrl, o.home),
    "",
    "[checkouts.app]",
    `path = "${o.repo}"`,
    'base = "main"',
    "",
    "[policy]",
    'allow = ["claude/edit(*)", "claude/execute"]',
    "",
  ].join("\n");
}

/** Starts the fixture; `acp` is `requireCli("claude-acp")`. Requires `--allow-all`. */
export async function worksRig(prefix: string, acp: string[]): Promise<WorksRig> {
  const dir = tempDir(prefix, "/var/tmp");
  const data = `${dir.path}/data`;
  const home = `${dir.path}/home`;
  Deno.mkdirSync(`${data}/worktrees`, { recursive: true });
  Deno.mkdirSync(`${home}/.claude`, { recursive: true });
  const repo = await gitRepo(`${dir.path}/repo`, { identity: true });
  const bare = `${dir.path}/remote.git`;
  await git(["init", "-q", "--bare", bare], dir.path);
  await git(["remote", "add", "origin", bare], repo);
  const mock = startMockAnthropic({
    rules: [
      {
        // A later call on the same work (tests/ui/works_bind_e2e_test.ts): commits c.txt.
        when: (r) => promptContains("LATER-3")(r) && promptContains("TASK-1")(r),
        reply: (r) => step(r) === 1 ? commitFile("c.txt", "three", "Add c") : text("Added c.txt."),
      },
      {
        // The sent-back call: the same session, so its prompt still holds the first task.
        when: (r) => promptContains("REVIEW-2")(r) && promptContains("TASK-1")(r),
        reply: (r) =>
          step(r) === 1 ? commitFile("b.txt", "two", "Add b") : text("Added b.txt as asked."),
      },
      {
        when: promptContains("TASK-1"),
        reply: (r) => step(r) === 0 ? commitFile("a.txt", "one", "Add a") : text("Added a.txt."),
      },
    ],
  });
  Deno.writeTextFileSync(
    `${data}/config.toml`,
    worksConfig({ acp, mockUrl: mock.url, home, repo }),
  );
  let rig: NodeRig;
  try {
    rig = await nodeRig({ dataDir: data, home, env: { IS_SANDBOX: "1" } });
  } catch (err) {
    await mock.close();
    await dir[Symbol.asyncDispose]();
    throw err;
  }
  return {
    data,
    home,
    repo,
    bare,
    wt: `${data}/worktrees/claude/app/alice/_/feat`,
    mock,
    rig,
    async [Symbol.asyncDispose]() {
      await rig[Symbol.asyncDispose]();
      await mock.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}
