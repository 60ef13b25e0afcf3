/**
 * The baseline of the ACP benches: a bare client of `@agentclientprotocol/sdk`
 * over an agent it spawns, with nothing of wats in between. It refuses every
 * permission request and collects the agent's message text.
 */

import * as acp from "@agentclientprotocol/sdk";

/** A running agent and the bare client's connection to it. */
export interface BareAcp {
  conn: acp.ClientConnection;
  /** The agent's message text so far. */
  message(): string;
  /** What the agent wrote to stderr. */
  stderr(): string;
  /** Closes the connection and the agent's stdin, then waits for it to exit. */
  stop(): Promise<void>;
}

/** Spawns `command args` in `cwd` with exactly `env` and connects to it. */
export function startBareAcp(
  o: { command: string; args: string[]; cwd: string; env: Record<string, string> },
): BareAcp {
  const child = new Deno.Command(o.command, {
    args: o.args,
    cwd: o.cwd,
    env: o.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const dec = new TextDecoder();
  const drained = child.stderr.pipeTo(
    new WritableStream({ write: (c) => void (stderr += dec.decode(c, { stream: true })) }),
  ).catch(() => {});
  const writer = child.stdin.getWriter();
  const toAgent = new WritableStream<Uint8Array>({ write: (c) => writer.write(c) });
  let message = "";
  const conn = acp.client({ name: "bare" })
    .onRequest("session/request_permission", () => ({ outcome: { outcome: "cancelled" } }))
    .onNotification("session/update", ({ params }) => {
      const u = params.update;
      if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") {
        message += u.content.text;
      }
    })
    .connect(acp.ndJsonStream(toAgent, child.stdout));
  return {
    conn,
    message: () => message,
    stderr: () => stderr,
    async stop() {
      conn.close();
      await writer.close();
      await child.status;
      await drained;
    },
  };
}
