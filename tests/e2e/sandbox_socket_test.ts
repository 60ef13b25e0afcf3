/**
 * Issue 26, routes 3 and 4, attacked again from inside: a real `wats node` runs the real
 * `claude -p` at `agent.access = "workspace"` with Bash and `agent.review = true`, in the OS
 * sandbox, scripted by the Anthropic mock. The agent finds the socket it can see at
 * `<data>/mcp.sock` (spelled with printf) and tries what worked before — a hello with no token,
 * as another profile, as the agent without the token, control lines, a watch — and prints its
 * environment into its workspace. None of it gets anything: each line is answered with an error,
 * no post is signed by the person, the held draft stays held; the run's own tools still work; its
 * socket is gone once it ends; its environment holds none of the daemon's secrets.
 *
 * The same node is started the way npx leaves PATH (a `node_modules/.bin` for the checkout and
 * the folders above it, one with a planted `claude`), with a planted `wats` entry in
 * `~/.claude.json` whose command writes a marker: the planted programs never run.
 *
 * Everything lives under /var/tmp: the sandbox's private /tmp would hide a fixture there.
 */

import assert from "node:assert/strict";
import { dataPaths } from "../../src/config/paths.ts";
import { CLIS_DIR, requireCli } from "../support/clis.ts";
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

const claude = requireCli("claude");
const bwrap = requireTool("bwrap");

const GH = "SECRET-GH-5c1f";
const HOOK = "SECRET-HOOK-a93e";

/** What the agent sends as the first line on the socket it sees. */
const PROBES = [
  { wats: "hello" },
  { wats: "hello", profile: "bob" },
  { wats: "hello", profile: "helper" },
  { wats: "hello", data: true },
  { wats: "control", op: "resume" },
  { wats: "control", op: "work_list" },
  { wats: "control", op: "sweep" },
  { wats: "control", op: "halt", reason: "from inside" },
  { wats: "watch" },
];

/**
 * The agent's probe: each line on a fresh connection, the first answer printed; a session that
 * opens tries to post an ask and to approve every held draft, as the person could before.
 */
const PROBE_PY = `import json, socket, sys
path = sys.argv[1]
for line in ${JSON.stringify(PROBES.map((p) => JSON.stringify(p)))}:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
    except Exception as e:
        print("PROBE", line, "NOCONNECT", e)
        continue
    s.sendall((line + "\\n").encode())
    f = s.makefile("r")
    first = f.readline().strip()
    print("PROBE", line, "ANSWER", first or "(closed)")
    if '"ready"' in first:
        def rpc(i, method, params):
            s.sendall((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\\n").encode())
            print("PROBE", line, "RPC", f.readline().strip()[:300])
        rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "p", "version": "0"}})
        s.sendall(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\\n')
        rpc(2, "tools/call", {"name": "ask", "arguments": {"title": "pwned", "text": "as the person"}})
    s.close()
`;

Deno.test({
  name: "from inside its sandbox a heartbeat agent with Bash reaches only its own run's socket, " +
    "under its token: no hello without it, no other profile, no control line, no watch; its " +
    "environment holds no daemon secret; planted claude programs and entries never run",
  ignore: claude === null || !bwrap,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using tmp = tempDir("wats-sbs-", "/var/tmp");
    const root = tmp.path;
    const data = `${root}/data`;
    const home = `${root}/home`;
    const work = `${root}/work`;
    const checkout = `${root}/checkout`;
    for (const d of [data, home, work, checkout, `${root}/node_modules/.bin`]) {
      Deno.mkdirSync(d, { recursive: true });
    }
    const p = dataPaths(data);
    // A `claude` any local user could plant where npx puts PATH entries, and a rewritten entry.
    const plantedRan = `${root}/planted-claude-ran`;
    const entryRan = `${root}/planted-entry-ran`;
    Deno.writeTextFileSync(
      `${root}/node_modules/.bin/claude`,
      `#!/bin/sh\necho "$@" >> ${plantedRan}\nexit 1\n`,
      { mode: 0o755 },
    );
    Deno.writeTextFileSync(
      `${home}/.claude.json`,
      JSON.stringify({
        mcpServers: { wats: { command: "/bin/sh", args: ["-c", `echo ran > ${entryRan}`] } },
      }),
    );
    Deno.writeTextFileSync(`${work}/probe.py`, PROBE_PY);
    Deno.writeTextFileSync(
      p.config,
      [
        "[notify.hook]",
        'type = "webhook"',
        'url = "http://127.0.0.1:9/hook"',
        'secret_env = "WATS_TEST_HOOK_SECRET"',
        'events = ["halted"]',
        "",
      ].join("\n"),
    );
    const askOf = (req: MessagesRequest) =>
      [...JSON.stringify(req).matchAll(/- ([0-9a-f]{64}): /g)].at(-1)?.[1];
    const bash = (command: string): Reply => toolUse("Bash", { command, description: "probe" });
    await using mock = startMockAnthropic({
      rules: [{
        when: hasTool("mcp__wats__post"),
        reply: (req) => {
          const n = toolResults(req).length;
          if (n === 0) {
            const id = askOf(req);
            return toolUse("mcp__wats__post", {
              kind: "answer",
              parent: id,
              text: "Held for review.",
            });
          }
          if (n === 1) return bash("env > env.txt; echo env-done");
          if (n === 2) return bash(`python3 probe.py ${spelled(p.socket)}`);
          if (n === 3) return toolUse("mcp__wats__thread", { id: askOf(req) });
          return text("Finished.");
        },
      }],
    });
    await using rig = await nodeRig({
      dataDir: data,
      home,
      cwd: checkout,
      env: {
        // As `npx -y deno@… task start` leaves it, run from ${checkout}.
        PATH: [
          `${checkout}/node_modules/.bin`,
          `${root}/node_modules/.bin`,
          `${CLIS_DIR}/node_modules/.bin`,
          Deno.env.get("PATH"),
        ].join(":"),
        GH_TOKEN: GH,
        WATS_TEST_HOOK_SECRET: HOOK,
      },
      agent: {
        mock,
        settings: {
          WATS_AGENT_ACCESS: "workspace",
          WATS_AGENT_WORKDIR: work,
          WATS_AGENT_TOOLS: "Bash",
          WATS_AGENT_REVIEW: "true",
        },
      },
    });
    const node = rig.node;
    assert.match(node.stderr(), /runs: sandboxed/, node.stderr());
    assert.ok(
      node.stderr().includes(
        `PATH: left out "${checkout}/node_modules/.bin", ` +
          `"${root}/node_modules/.bin"`,
      ),
      node.stderr(),
    );
    const bob = await rig.mcp("bob");
    await call(bob, "ask", { title: "Hi", text: "Anyone there?" });
    const started = await rig.waitEvent("run_started");
    const ended = await rig.waitEvent("run_ended");
    const bodies = mock.messages().map((m) => m.body!);
    const results = bodies.map(toolResults).reduce((a, b) => b.length > a.length ? b : a, []);
    const why = `${JSON.stringify({ ended, results }, null, 1)}\n${node.stderr()}`;
    assert.equal(ended.status, "ok", why);
    assert.equal(results.length, 4, why);
    const [answered, envDone, probes, thread] = results;

    // The run's own session works: its answer is held, its thread answers.
    assert.match(answered!, /held|review/i, why);
    assert.match(thread!, /^Thread [0-9a-f]{64}: /, why);
    assert.match(envDone!, /env-done/, why);

    // Every line on the socket it sees was refused, one error line each; no session opened.
    const lines = probes!.split("\n").filter((l) => l.startsWith("PROBE "));
    assert.equal(lines.length, PROBES.length, why);
    for (const l of lines) assert.match(l, / ANSWER \{"wats":"error","message":"[^"]+"\}$/, why);
    assert.ok(!probes!.includes(" RPC "), why);
    assert.ok(!rig.events("halted").length && !rig.events("resumed").length, why);

    // Nothing changed: no post signed by anyone but bob, the draft still held.
    const stored = rig.events("post_stored").filter((e) => e.source !== "relay");
    assert.deepEqual(stored.map((e) => e.kind).filter((k) => k !== "presence"), ["ask"], why);
    const held = [...Deno.readDirSync(p.pendingDir)].filter((e) => e.name.endsWith(".json"));
    assert.equal(held.length, 1, why);

    // The run's socket lived with the run only.
    assert.equal(started.run, ended.run);
    await assert.rejects(Deno.lstat(p.runSocket), Deno.errors.NotFound);

    // Its environment: the runtime's variables, none of the daemon's secrets.
    const env = Deno.readTextFileSync(`${work}/env.txt`);
    assert.match(env, /^ANTHROPIC_BASE_URL=/m, env);
    for (const secret of [GH, HOOK]) assert.ok(!env.includes(secret), `${secret} in\n${env}`);
    assert.doesNotMatch(env, /^(GH_TOKEN|WATS_TEST_HOOK_SECRET|WATS_[A-Z_]+)=/m, env);
    assert.doesNotMatch(
      env,
      /node_modules\/\.bin:.*_npx|\/var\/tmp\/wats-sbs-[^/]+\/node_modules/,
      env,
    );
    const sent = JSON.stringify(bodies);
    for (const secret of [GH, HOOK]) {
      assert.ok(!sent.includes(secret), `${secret} reached the model`);
    }

    // The planted programs never ran: neither npx's PATH entry nor the rewritten Claude entry.
    await assert.rejects(Deno.lstat(plantedRan), Deno.errors.NotFound);
    await assert.rejects(Deno.lstat(entryRan), Deno.errors.NotFound);
    const entry = JSON.parse(Deno.readTextFileSync(`${home}/.claude.json`)).mcpServers.wats;
    assert.ok(entry.args.includes("mcp"), JSON.stringify(entry));
  },
});
