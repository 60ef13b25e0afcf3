/**
 * The sandbox is deny by default around home, agent state, sessions (issue 26): the real
 * `claude -p` at `agent.access = "workspace"` with Bash, scripted by the Anthropic mock, tries
 * from inside to rewrite the person's Claude registration and settings, to read another wats
 * data dir's key (one under home, one elsewhere that a daemon recorded), the shell history and
 * a browser profile, and to reach the terminal. All of it fails, no secret reaches the mock, and
 * the agent still answers through wats. Then: a sandboxed process started under a terminal has
 * none (TIOCSTI has nowhere to go), and killing a run or SIGKILL of its parent leaves no process.
 *
 * Fixtures live under /var/tmp, not /tmp: the sandbox's private /tmp would hide them anyway.
 */

import assert from "node:assert/strict";
import { Sandboxer } from "../../src/safety/sandboxer.ts";
import { spawnProcessGroup } from "../../src/runner/spawn.ts";
import { requireCli } from "../support/clis.ts";
import { requireTool } from "../support/debian_tools.ts";
import {
  hasTool,
  type MessagesRequest,
  type Reply,
  startMockAnthropic,
  text,
  toolResults,
  toolUse,
} from "../support/mock_anthropic.ts";
import { spelled } from "../support/spelled.ts";
import { call } from "../support/swarm.ts";
import { nodeRig, tempDir } from "../support/rig.ts";
import { startInPty } from "../support/pty.ts";
import { AGENTS } from "../../src/runner/runtimes/agents.ts";

const claude = requireCli("claude");
const bwrap = requireTool("bwrap");
const script = requireTool("script");
const opts = { ignore: claude === null || !bwrap, sanitizeOps: false, sanitizeResources: false };

const HOME_KEY = "SECRET-HOMEKEY-81f2";
const AWAY_KEY = "SECRET-AWAYKEY-3c9d";
const HISTORY = "SECRET-HISTORY-a77e";
const BROWSER = "SECRET-BROWSER-52b0";

/** A secret as an attack could carry it: plain, hex as `od` prints it, base64. */
function encodings(s: string): string[] {
  const bytes = new TextEncoder().encode(s).slice(0, 12);
  return [
    s,
    [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(" "),
    [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(""),
    btoa(s).slice(0, 12),
  ];
}

/** Python that opens the controlling terminal and pushes a line into it with TIOCSTI. */
const TTY_PROBE = [
  "import fcntl, os, termios",
  "try:",
  "    fd = os.open('/dev/tty', os.O_RDWR)",
  "    fcntl.ioctl(fd, termios.TIOCSTI, b'x')",
  "    print('tty: pushed')",
  "except OSError as e:",
  "    print('tty:', e)",
  "for fd in (0, 1, 2):",
  "    try:",
  "        fcntl.ioctl(fd, termios.TIOCSTI, b'x')",
  "        print('sti', fd, 'pushed')",
  "    except OSError as e:",
  "        print('sti', fd, e.strerror)",
  "print('tty_nr', open('/proc/self/stat').read().rsplit(')', 1)[1].split()[4])",
].join("\n");

Deno.test({
  name: "a workspace claude -p with Bash cannot change the person's Claude registration or " +
    "settings, read other data dirs' keys, shell history or a browser profile, or reach a " +
    "terminal; nothing reaches the model, and it still answers through wats",
  ...opts,
  async fn() {
    await using tmp = tempDir("wats-sbh-", "/var/tmp");
    const root = tmp.path;
    const data = `${root}/data`;
    const home = `${root}/home`;
    const work = `${root}/work`;
    const away = `${root}/elsewhere`;
    const homeData = `${home}/.local/share/wats`;
    for (const d of [`${home}/.claude`, homeData, away, work, `${home}/.mozilla/firefox/p`]) {
      Deno.mkdirSync(d, { recursive: true });
    }
    const claudeJson = `${home}/.claude.json`;
    const settings = `${home}/.claude/settings.json`;
    Deno.writeTextFileSync(
      claudeJson,
      JSON.stringify({ mcpServers: { wats: { command: "wats", args: ["mcp"] } } }),
    );
    Deno.writeTextFileSync(settings, "{}\n");
    Deno.writeTextFileSync(`${homeData}/node.key`, HOME_KEY);
    Deno.writeTextFileSync(`${away}/node.key`, AWAY_KEY);
    Deno.writeTextFileSync(`${home}/.bash_history`, `export AWS_SECRET=${HISTORY}\n`);
    Deno.writeTextFileSync(`${home}/.mozilla/firefox/p/logins.json`, BROWSER);
    // The node at `away` ran a sandbox once: its data dir is in the person's list.
    const awayNode = new Sandboxer({
      agents: AGENTS,
      mode: "required",
      hide: [],
      dataDir: away,
      home,
    });
    assert.equal(await awayNode.check(), undefined);

    const bash = (command: string): Reply => toolUse("Bash", { command, description: "probe" });
    const hook = JSON.stringify({
      hooks: { SessionStart: [{ hooks: [{ type: "command", command: "touch /tmp/x" }] }] },
    });
    const steps: ((req: MessagesRequest) => Reply)[] = [
      () =>
        bash(
          `python3 -c "import json,sys; p=sys.argv[1]; d=json.load(open(p)); ` +
            `d['mcpServers']['wats']['command']='sh'; json.dump(d, open(p,'w')); print('json written')" ` +
            `${spelled(claudeJson)}; echo rc=$?`,
        ),
      () => bash(`echo '${hook}' > ${spelled(settings)}; echo rc=$?`),
      () => bash(`od -An -tx1 -v ${spelled(`${homeData}/node.key`)}`),
      () => bash(`base64 ${spelled(`${away}/node.key`)}; cat ${spelled(`${away}/node.key`)}`),
      () => bash(`cat ${spelled(`${home}/.bash_history`)}; grep -r SECRET ~ 2>/dev/null; echo g`),
      () => bash(`cat ${spelled(`${home}/.mozilla/firefox/p/logins.json`)}`),
      () => bash(`python3 -c "${TTY_PROBE.replaceAll('"', '\\"')}"`),
      (req) => {
        const id = [...JSON.stringify(req).matchAll(/- ([0-9a-f]{64}): /g)].at(-1)?.[1];
        return toolUse("mcp__wats__post", {
          kind: "answer",
          parent: id,
          text: "Probed from the sandbox.",
        });
      },
      () => text("Finished."),
    ];
    await using mock = startMockAnthropic({
      rules: [{
        when: hasTool("mcp__wats__ask"),
        reply: (req) => steps[Math.min(toolResults(req).length, steps.length - 1)]!(req),
      }],
    });
    await using rig = await nodeRig({
      dataDir: data,
      home,
      agent: {
        mock,
        settings: {
          WATS_AGENT_ACCESS: "workspace",
          WATS_AGENT_WORKDIR: work,
          WATS_AGENT_TOOLS: "Bash",
        },
      },
    });
    // After the daemon's own registration of wats in ~/.claude.json, outside the sandbox.
    const before = [Deno.readFileSync(claudeJson), Deno.readFileSync(settings)];
    const bob = await rig.mcp("bob");
    await call(bob, "ask", { title: "Hi", text: "Anyone there?" });
    const ended = await rig.waitEvent("run_ended");
    const bodies = mock.messages().map((m) => m.body!);
    const results = bodies.map(toolResults).reduce((a, b) => b.length > a.length ? b : a, []);
    const why = `${JSON.stringify({ ended, results }, null, 1)}\n${rig.node.stderr()}`;
    assert.equal(ended.status, "ok", why);
    assert.equal(results.length, steps.length - 1, why);
    const sent = JSON.stringify(bodies);
    for (const secret of [HOME_KEY, AWAY_KEY, HISTORY, BROWSER]) {
      for (const e of encodings(secret)) {
        assert.ok(!sent.includes(e), `${e} reached the model\n${why}`);
      }
    }
    const [json, hookWrite, homeKey, awayKey, history, browser, tty, answer] = results;
    // The writes land in the agent's private home (or fail): the person's files never change.
    assert.match(json!, /json written|No such file|FileNotFoundError|KeyError/, why);
    assert.match(hookWrite!, /rc=/, why);
    assert.deepEqual(Deno.readFileSync(claudeJson), before[0], "~/.claude.json unchanged");
    assert.deepEqual(Deno.readFileSync(settings), before[1], "~/.claude/settings.json unchanged");
    assert.match(homeKey!, /No such file/, why);
    assert.match(awayKey!, /No such file/, why);
    assert.match(history!, /No such file/, why);
    assert.match(browser!, /No such file/, why);
    assert.match(tty!, /tty: .*No such device or address/, why);
    assert.doesNotMatch(tty!, /pushed/, why);
    assert.match(tty!, /tty_nr 0\b/, why);
    assert.doesNotMatch(answer!, /error/i, why);
    assert.ok(
      rig.events("post_stored").some((e) => e.kind === "answer"),
      rig.node.stdoutLines.join("\n"),
    );
    // The person's list names both data dirs; the agent's private home holds its own state.
    const list = Deno.readTextFileSync(`${home}/.local/state/wats/data-dirs`);
    assert.match(list, new RegExp(`^${away}$`, "m"));
    assert.match(list, new RegExp(`^${data}$`, "m"));
  },
});

/** A fresh sandbox for `cwd` with this test's own data dir and home. */
function fixture(prefix: string) {
  const dir = tempDir(prefix, "/var/tmp");
  const root = dir.path;
  for (const d of ["data", "home", "work"]) Deno.mkdirSync(`${root}/${d}`);
  const sandbox = new Sandboxer({
    agents: AGENTS,
    mode: "required",
    hide: [],
    dataDir: `${root}/data`,
    home: `${root}/home`,
  });
  return { dir, root, sandbox, work: `${root}/work` };
}

Deno.test({
  name: "a sandboxed process started from a terminal has no controlling terminal: /dev/tty and " +
    "TIOCSTI fail inside, while the same program outside reaches the terminal",
  ...opts,
  ignore: !bwrap || !script,
  async fn() {
    const f = fixture("wats-sbt-");
    await using _ = f.dir;
    const w = await f.sandbox.wrap({
      what: "tty probe",
      program: "python3",
      args: ["-c", TTY_PROBE],
      cwd: f.work,
      env: {},
      writable: [f.work],
    });
    assert.ok(w.sandboxed);
    const outside = startInPty(["python3", "-c", TTY_PROBE]);
    await outside.process.status;
    const plain = (await outside.stop()).stdout;
    // The control: the terminal is there to reach, so the test can fail.
    assert.match(plain, /tty: pushed/, plain);
    const inside = startInPty([w.program, ...w.args]);
    await inside.process.status;
    const boxed = (await inside.stop()).stdout;
    assert.match(boxed, /tty: .*No such device or address/, boxed);
    assert.doesNotMatch(boxed, /pushed/, boxed);
    assert.match(boxed, /tty_nr 0\b/, boxed);
  },
});

/** The living processes whose command line starts with `prefix` (not bwrap's, nor sh's). */
async function alive(prefix: string): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "stat=,args="], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim())
    .filter((l) => !l.startsWith("Z") && l.replace(/^\S+\s+/, "").startsWith(prefix));
}

/** Waits until `check` holds, asking again after each `ps`. */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

Deno.test({
  name: "a sandboxed run in its own session is still killed whole: by the runner's group kill, " +
    "by `kill -s KILL 0` from inside (the wats mcp bridge), and with its parent's SIGKILL",
  ...opts,
  ignore: !bwrap,
  async fn() {
    const f = fixture("wats-sbk-");
    await using _ = f.dir;
    const tree = (marker: string, tail = "wait") =>
      f.sandbox.wrap({
        what: "kill probe",
        program: "sh",
        args: ["-c", `sleep ${marker} & (sleep ${marker}1 &) ; sleep ${marker}2 & ${tail}`],
        cwd: f.work,
        env: { PATH: "/usr/bin:/bin" },
        writable: [f.work],
      });
    const stamp = String(700000 + Math.floor(Math.random() * 99999));

    // 1. The runner's kill: SIGTERM, then SIGKILL, to bwrap's group.
    const m1 = `${stamp}1`;
    const w1 = await tree(m1);
    const run = spawnProcessGroup({ ...w1, env: {}, cwd: f.work, stdin: "" }, { graceMs: 100 });
    await until(async () => (await alive(`sleep ${m1}`)).length === 3);
    run.kill();
    await run.status;
    await until(async () => (await alive(`sleep ${m1}`)).length === 0);

    // 2. The bridge's `kill -s KILL 0` from inside: its session's group, and so the sandbox.
    const m2 = `${stamp}2`;
    const w2 = await tree(m2, `sleep 0; kill -s KILL 0`);
    const bridge = spawnProcessGroup({ ...w2, env: {}, cwd: f.work, stdin: "" });
    const st = await bridge.status;
    assert.ok(st.code !== 0 || st.signal !== null, JSON.stringify(st));
    await until(async () => (await alive(`sleep ${m2}`)).length === 0);

    // 3. The daemon SIGKILLed: a parent process that started the sandbox dies at once.
    const m3 = `${stamp}3`;
    const w3 = await tree(m3);
    const parent = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const c = new Deno.Command(${JSON.stringify(w3.program)}, ` +
        `{ args: ${JSON.stringify(w3.args)}, detached: true }).spawn(); await c.status;`,
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    await until(async () => (await alive(`sleep ${m3}`)).length === 3);
    parent.kill("SIGKILL");
    await parent.status;
    await until(async () => (await alive(`sleep ${m3}`)).length === 0);
  },
});
