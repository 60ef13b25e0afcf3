/**
 * `DaemonSource`'s works operations on the wire: a stand-in daemon on a
 * real unix socket decodes each first line with the daemon's own decoder
 * (src/contracts/session.ts) and answers as src/mcp/socket_server.ts does,
 * so the control lines are the ones the daemon takes, list and show come back
 * parsed, and a refusal reaches the page as one `WatsError`.
 */

import assert from "node:assert/strict";
import { DaemonSource } from "../../src/ui/source.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { type ControlRequest, decodeFirstLine } from "../../src/contracts/session.ts";
import { LineReader } from "../../src/mcp/conn_transport.ts";
import { WatsError } from "../../src/errors.ts";
import { sampleWork, summaryOf } from "../support/works_fixtures.ts";

function standIn(socket: string, answer: (c: ControlRequest) => object) {
  const seen: ControlRequest[] = [];
  const listener = Deno.listen({ transport: "unix", path: socket });
  const served = (async () => {
    for await (const conn of listener) {
      const first = decodeFirstLine(await new LineReader(conn).readLine());
      const reply = "control" in first
        ? (seen.push(first.control), answer(first.control))
        : { wats: "error", message: "not a control line" };
      await conn.write(new TextEncoder().encode(JSON.stringify(reply) + "\n"));
      conn.close();
    }
  })();
  return {
    seen,
    async close() {
      listener.close();
      await served.catch(() => {});
    },
  };
}

Deno.test("the works operations send the daemon's control lines and parse list and show", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wats-ui-source-" });
  const paths = dataPaths(dir);
  const work = sampleWork();
  const daemon = standIn(paths.socket, (c) => {
    if (c.op === "work_list") {
      return { wats: "done", message: JSON.stringify({ works: [summaryOf(work)], next: 1 }) };
    }
    if (c.op === "work_show") return { wats: "done", message: JSON.stringify(work) };
    if (c.work === "gone") {
      return { wats: "error", message: "no work gone: `wats work list` shows the works" };
    }
    return { wats: "done", message: `${c.op} ok` };
  });
  const source = new DaemonSource(paths);
  try {
    assert.deepEqual(await source.works(2), { works: [summaryOf(work)], next: 1 });
    assert.deepEqual(await source.work("w1"), work);
    assert.equal(await source.workMerge("w1"), "work_merge ok");
    assert.equal(await source.workPush("w1", true), "work_push ok");
    assert.equal(await source.workSend("w1", "use UTC", "src/logs.ts", 2), "work_send ok");
    assert.equal(await source.workSend("w1", "again"), "work_send ok");
    assert.equal(await source.workDiscard("w1"), "work_discard ok");
    await assert.rejects(
      source.workMerge("gone"),
      (e: unknown) => e instanceof WatsError && /^the daemon refused: no work gone/.test(e.message),
    );
    assert.deepEqual(daemon.seen, [
      { wats: "control", op: "work_list", page: 2 },
      { wats: "control", op: "work_show", work: "w1" },
      { wats: "control", op: "work_merge", work: "w1" },
      { wats: "control", op: "work_push", work: "w1", draftPr: true },
      {
        wats: "control",
        op: "work_send",
        work: "w1",
        text: "use UTC",
        file: "src/logs.ts",
        line: 2,
      },
      { wats: "control", op: "work_send", work: "w1", text: "again" },
      { wats: "control", op: "work_discard", work: "w1" },
      { wats: "control", op: "work_merge", work: "gone" },
    ]);
  } finally {
    await source.close();
    await daemon.close();
    await Deno.remove(dir, { recursive: true });
  }
});
