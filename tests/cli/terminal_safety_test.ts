/**
 * Nothing from outside the process reaches the person's terminal as a control
 * sequence (docs/decisions/terminal.md): the fence fuzzer's alphabet plus
 * ANSI/OSC sequences, fed through every command that prints remote text, come
 * out escaped on stdout and stderr.
 */

import assert from "node:assert/strict";
import { runWats, startWats, tempDataDir } from "../support/cli.ts";
import { BIDI, CONTROLS, FORBIDDEN, TERMINATORS } from "../support/fence_check.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { jsonTerminalSafe, terminalLine, terminalSafe } from "../../src/io/terminal_text.ts";

/** OSC 52: writes "hello" to the person's clipboard. */
const OSC52 = "\x1b]52;c;aGVsbG8=\x07";
/** Erase the line, back to its start: hides what came before it. */
const ERASE_LINE = "\x1b[2K\r";
/** The 8-bit CSI (C1) spelling of "clear the screen". */
const C1_CLEAR = "\x9b2J";

/** Every hostile character and sequence, each between plain words. */
const HOSTILE = [
  OSC52,
  ERASE_LINE,
  C1_CLEAR,
  "\u202egnp.exe",
  ...CONTROLS,
  ...BIDI,
  ...TERMINATORS,
].map((s, i) => `w${i}${s}`).join(" ");

/** What a person's terminal must not receive: anything FORBIDDEN but newline and tab. */
function assertTerminalSafe(out: string, what: string): void {
  const m = out.match(FORBIDDEN);
  assert.equal(
    m,
    null,
    `${what}: U+${m?.[0].charCodeAt(0).toString(16).padStart(4, "0")} reached the terminal`,
  );
}

Deno.test("terminalSafe shows every control, bidi and separator character escaped, keeping newline and tab", () => {
  const out = terminalSafe(HOSTILE);
  assertTerminalSafe(out, "terminalSafe");
  assert.ok(out.includes("\\x1b]52;c;aGVsbG8=\\x07"), out);
  assert.ok(out.includes("\\x1b[2K\\x0d"), out);
  assert.ok(out.includes("\\x9b2J"), out);
  assert.ok(out.includes("\\u202egnp.exe"), out);
  assert.equal(terminalSafe("two\n\tlines"), "two\n\tlines");
  const line = terminalLine(HOSTILE);
  assertTerminalSafe(line, "terminalLine");
  assert.doesNotMatch(line, /[\n\t]/, "a one-line field keeps to one line");
  assert.ok(line.includes("\\x1b]52;c;aGVsbG8=\\x07"), line);
  assert.equal(terminalSafe(out), out, "escaping twice changes nothing");
});

Deno.test("jsonTerminalSafe leaves JSON that parses to the same value and holds no raw control", () => {
  const value = { text: HOSTILE };
  const json = jsonTerminalSafe(JSON.stringify(value));
  assertTerminalSafe(json, "jsonTerminalSafe");
  assert.deepEqual(JSON.parse(json), value);
});

/** A data dir holding a held draft answering a hostile post, a coding agent's request and a run. */
async function hostileDataDir(): Promise<{ dir: string; draft: string; request: string }> {
  const dir = tempDataDir();
  const paths = dataPaths(dir);
  await Deno.mkdir(paths.pendingDir, { recursive: true });
  await Deno.mkdir(paths.runsDir, { recursive: true });
  const now = Math.floor(Date.now() / 1000);
  const draft = "0123456789ab";
  await Deno.writeTextFile(
    `${paths.pendingDir}/${draft}.json`,
    JSON.stringify({
      id: draft,
      kind: "note",
      title: `title ${HOSTILE}`,
      text: `draft ${HOSTILE}`,
      parent: "ab".repeat(32),
      thread: "ab".repeat(32),
      profile: "helper",
      createdAt: now,
      parentSummary: { author: "cd".repeat(32), kind: "question", text: `remote ${HOSTILE}` },
    }),
  );
  const request = "abcdef012345";
  await Deno.writeTextFile(
    `${paths.pendingDir}/${request}.json`,
    JSON.stringify({
      id: request,
      kind: "permission",
      text: `request ${HOSTILE}`,
      profile: "helper",
      createdAt: now,
      permission: {
        request_id: "call-1:tool-1",
        harness: "claude",
        kind: "execute",
        title: `title ${HOSTILE}`,
        arguments: { command: `rm ${HOSTILE}` },
        locations: [`/tmp/${HOSTILE}`],
        worktree: "/tmp/wt",
        checkout: "main",
        work: "w1",
        agent: "helper",
        thread: "ab".repeat(32),
        task: `task ${HOSTILE}`,
        reason: `reason ${HOSTILE}`,
      },
    }),
  );
  // A transcript line that is not JSON is shown as it is.
  await Deno.writeTextFile(`${paths.runsDir}/20260101T000000000Z-abcdef.jsonl`, `${HOSTILE}\n`);
  return { dir, draft, request };
}

Deno.test("`wats agent pending`, `pending show` and `logs` print remote text with its controls escaped", async () => {
  const { dir, draft, request } = await hostileDataDir();
  const commands = [
    ["agent", "pending"],
    ["agent", "pending", "show", draft],
    ["agent", "pending", "show", request],
    ["agent", "logs"],
  ];
  for (const words of commands) {
    const r = await runWats(["--data-dir", dir, ...words]);
    const what = `wats ${words.join(" ")}`;
    assert.equal(r.code, 0, `${what}: ${r.stderr}`);
    assertTerminalSafe(r.stdout, `${what} stdout`);
    assertTerminalSafe(r.stderr, `${what} stderr`);
    if (words.length > 2) assert.ok(r.stdout.includes("\\x1b]52;c;"), `${what}:\n${r.stdout}`);
    if (words[1] === "pending") {
      // A one-line field keeps to its line: a newline in it cannot start a line
      // that reads as another field or another draft.
      const lines = r.stdout.split("\n");
      const last = `w${HOSTILE.split(" ").length - 1}`;
      for (const label of ["title", "why", "locations"]) {
        const at = lines.filter((l) => l.startsWith(`${label} `));
        if (at.length === 0) continue;
        assert.equal(at.length, 1, `${what}: one ${label} line`);
        const line = at[0]!;
        assert.ok(line.includes(last), `${what}: the whole ${label} on its line: ${line}`);
        if (words.length > 2) assert.ok(line.includes("\\x1b]52;c;"), `${what}: ${line}`);
      }
      if (words.length === 2) assert.equal(lines.filter((l) => l !== "").length, 2, r.stdout);
    }
  }
});

Deno.test("an error quoting outside text prints it escaped", async () => {
  const r = await runWats(["agent", "pending", "show", `x${OSC52}`]);
  assert.equal(r.code, 1);
  assertTerminalSafe(r.stderr, "stderr");
  assert.match(r.stderr, /^error: no draft x\\x1b\]52;c;aGVsbG8=\\x07 is waiting/m);
});

/** A relay that answers every subscription with a hostile NOTICE and CLOSED. */
function hostileRelay() {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m[0] !== "REQ") return;
      socket.send(JSON.stringify(["NOTICE", `notice ${HOSTILE}`]));
      socket.send(JSON.stringify(["CLOSED", m[1], `closed ${HOSTILE}`]));
    };
    return response;
  });
  return { url: `ws://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test("the daemon's stderr shows a relay's NOTICE and CLOSED text escaped", async () => {
  const relay = hostileRelay();
  const node = startWats([
    "--data-dir",
    tempDataDir(),
    "node",
    "--infra",
    relay.url,
    "--log-level",
    "debug",
  ]);
  try {
    await node.waitForLine((l) => l.includes('"event":"started"'));
    // Both lines are logged once the relay has answered the first subscription.
    while (!(node.stderr().includes("says: notice") && node.stderr().includes("closed w0"))) {
      if ((await Promise.race([node.process.status, wait(50)])) !== undefined) break;
    }
    const out = node.stderr();
    assert.ok(out.includes("says: notice w0\\x1b]52;c;"), out);
    assertTerminalSafe(out, "daemon stderr");
    assertTerminalSafe(node.stdoutLines.join("\n"), "daemon stdout");
  } finally {
    await node.stop();
    await relay.close();
  }
});

function wait(ms: number): Promise<undefined> {
  return new Promise((r) => setTimeout(() => r(undefined), ms));
}

Deno.test("only known writers bypass the terminal-safe console, each for a reason", async () => {
  // Own text (help, the settings reference), protocol bytes for a program
  // (`wats mcp`'s stdout), and writers that escape themselves.
  const allowed: Record<string, RegExp> = {
    "src/config/reference.ts": /Deno\.stdout\.write\(new TextEncoder\(\)\.encode\(renderReference/,
    "src/cli/mcp.ts": /MCP_HELP|stdout: Deno\.stdout|terminalSafe\(line\)/,
    "src/cli/daemon.ts": /^\s*Deno\.stdout,$/,
    // `wats work show` escapes every field itself and adds its own colors (tests/cli/work_render_test.ts);
    // the discard prompt is its own constant text.
    "src/cli/work.ts": /encode\(out\)\);|encode\(question\)\);/,
  };
  const root = new URL("../../", import.meta.url).pathname;
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(`${root}${dir}`)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (path.endsWith(".ts")) {
        const lines = (await Deno.readTextFile(`${root}${path}`)).split("\n");
        lines.forEach((line, i) => {
          if (!/Deno\.std(out|err)\b/.test(line) || /isTerminal\(\)/.test(line)) return;
          if (allowed[path]?.test(line)) return;
          found.push(`${path}:${i + 1}: ${line.trim()}`);
        });
      }
    }
  };
  await walk("src");
  assert.deepEqual(
    found,
    [],
    "print through console (made terminal-safe), or escape and list it here",
  );
});
