/**
 * `wats sandbox-relay` as a process, outside a sandbox (tests/e2e/sandbox_network_test.ts
 * runs it inside bubblewrap with the real agents): main.ts runs it without the launcher; its
 * agent's HTTPS_PROXY reaches the daemon's model proxy, SIGTERM reaches the agent, and the
 * relay ends with the agent's code.
 */

import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import { ModelProxy } from "../../src/safety/net_proxy.ts";
import { writeAll } from "../../src/io/write_all.ts";
import { denoDir, watsCommand } from "../support/cli.ts";

/** The relay's command, with `deno eval CODE` as its agent. */
function relay(socket: string, code: string): Deno.Command {
  const [program, ...args] = watsCommand();
  return new Deno.Command(program, {
    args: [...args, "sandbox-relay", "--socket", socket, "--", Deno.execPath(), "eval", code],
    env: { DENO_DIR: denoDir(), NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/** A server on 127.0.0.1 that answers each connection with `pong` after its first bytes. */
function ponger(): { port: number; close(): Promise<void> } {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = (async () => {
    for await (const c of l) {
      (async () => {
        await c.read(new Uint8Array(64));
        await writeAll(c, new TextEncoder().encode("pong"));
        c.close();
      })().catch(() => {});
    }
  })().catch(() => {});
  return {
    port: (l.addr as Deno.NetAddr).port,
    close: async () => {
      l.close();
      await serving;
    },
  };
}

/** The agent: CONNECTs through HTTPS_PROXY to each target, prints the answers, exits 7. */
const AGENT = `
const proxy = new URL(Deno.env.get("HTTPS_PROXY"));
const out = [];
for (const target of Deno.args) {
  const c = await Deno.connect({ hostname: proxy.hostname, port: Number(proxy.port) });
  await c.write(new TextEncoder().encode("CONNECT " + target + " HTTP/1.1\\r\\n\\r\\n"));
  let text = "";
  let sent = false;
  const buf = new Uint8Array(4096);
  for (;;) {
    if (!sent && text.includes("\\r\\n\\r\\n") && text.startsWith("HTTP/1.1 200")) {
      await c.write(new TextEncoder().encode("ping"));
      sent = true;
    }
    const n = await c.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  out.push(text);
}
console.log(JSON.stringify({ proxy: proxy.hostname, noProxy: Deno.env.get("NO_PROXY"), out }));
Deno.exit(7);
`;

Deno.test("the relay runs its agent behind HTTPS_PROXY to the model proxy, which opens only its hosts, and exits with the agent's code", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-relay-" });
  const model = ponger();
  const other = ponger();
  const socket = `${dir}/model.sock`;
  const proxy = new ModelProxy({ socket, hosts: [`127.0.0.1:${model.port}`] });
  try {
    const code = AGENT.replace(
      "Deno.args",
      JSON.stringify([`127.0.0.1:${model.port}`, `127.0.0.1:${other.port}`]),
    );
    const r = await relay(socket, code).output();
    const stderr = new TextDecoder().decode(r.stderr);
    assertEquals(r.code, 7, stderr);
    const seen = JSON.parse(new TextDecoder().decode(r.stdout));
    assertEquals([seen.proxy, seen.noProxy], ["127.0.0.1", "localhost,127.0.0.1,::1"]);
    match(seen.out[0], /^HTTP\/1\.1 200 [^]*\r\n\r\npong$/);
    match(seen.out[1], /^HTTP\/1\.1 403 [^]*sandbox\.network open/);
  } finally {
    await proxy.close();
    await model.close();
    await other.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM to the relay reaches its agent, whose code the relay exits with", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-relay-" });
  const socket = `${dir}/model.sock`;
  const proxy = new ModelProxy({ socket, hosts: [] });
  try {
    const child = relay(
      socket,
      `Deno.addSignalListener("SIGTERM", () => Deno.exit(5)); console.log("ready"); ` +
        // Ends on its own if the signal never comes (the test then fails on its code).
        `setTimeout(() => Deno.exit(9), 60_000);`,
    ).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("ready\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    assertEquals(seen, "ready\n");
    child.kill("SIGTERM");
    const status = await child.status;
    await reader.cancel();
    const stderr = await new Response(child.stderr).text();
    assertEquals(status.code, 5, stderr);
  } finally {
    await proxy.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the relay refuses a command line it cannot read, in one line, with code 2", async () => {
  const [program, ...args] = watsCommand();
  const r = await new Deno.Command(program, {
    args: [...args, "sandbox-relay", "--socket", "/nowhere.sock"],
    env: { DENO_DIR: denoDir(), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(r.code, 2);
  assertEquals(
    new TextDecoder().decode(r.stderr),
    "error: wats sandbox-relay: no program after -- (wats starts it inside a sandbox; not for use)\n",
  );
});
