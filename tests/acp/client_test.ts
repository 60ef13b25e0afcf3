/**
 * `AcpAgent` against an ACP agent in this process, over in-memory streams (its
 * `connect` option): what it does for wats whatever the agent is.
 */

import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { AcpAgent, type ToolCallInfo } from "../../src/acp/client.ts";
import type { HarnessConfig } from "../../src/config/acp_tables.ts";
import { linkTo } from "../support/fake_acp_agent.ts";

const HARNESS: HarnessConfig = {
  name: "fake",
  command: "fake-agent",
  args: [],
  env: {},
  meta: { mine: true },
  context: [],
  idle: 0,
  enabled: true,
};

Deno.test("a new session is put in a mode that asks, with wats's safety options over the harness's meta", async () => {
  const modes: string[] = [];
  let meta: Record<string, unknown> | undefined;
  const app = acp.agent({ name: "fake" })
    .onRequest("initialize", () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {},
      agentInfo: { name: "fake-agent", version: "0" },
    }))
    .onRequest("session/new", ({ params }) => {
      meta = params._meta ?? undefined;
      return {
        sessionId: "s1",
        modes: {
          currentModeId: "bypassPermissions",
          availableModes: [
            { id: "bypassPermissions", name: "Never ask" },
            { id: "default", name: "Ask" },
          ],
        },
      };
    })
    .onRequest("session/set_mode", ({ params }) => {
      modes.push(params.modeId);
      return {};
    });
  const agent = await AcpAgent.start(HARNESS, "/w", {}, { connect: () => linkTo(app) });
  try {
    assert.equal(agent.agentName, "fake-agent");
    assert.deepEqual(await agent.openSession("/w", HARNESS.meta), {
      sessionId: "s1",
      continued: false,
    });
    assert.deepEqual(modes, ["default"]);
    assert.equal(meta?.mine, true);
    assert.deepEqual(
      (meta?.claudeCode as { options: { settingSources: unknown } }).options.settingSources,
      [],
    );
  } finally {
    await agent.stop();
  }
  assert.equal(agent.stopped, true);
});

Deno.test("a permission request without the details its tool_call gave gets them merged in", async () => {
  const app = acp.agent({ name: "fake" })
    .onRequest(
      "initialize",
      () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: {} }),
    )
    .onRequest("session/new", () => ({ sessionId: "s1" }))
    .onRequest("session/prompt", async ({ params, client }) => {
      const sessionId = params.sessionId;
      await client.notify("session/update", {
        sessionId,
        update: {
          sessionUpdate: "tool_call",
          toolCallId: "t1",
          title: "Write notes.txt",
          kind: "edit",
          locations: [{ path: "/w/notes.txt" }],
          rawInput: { file_path: "/w/notes.txt" },
        },
      });
      const r = await client.request("session/request_permission", {
        sessionId,
        toolCall: { toolCallId: "t1", title: null },
        options: [
          { optionId: "y", name: "Yes", kind: "allow_once" },
          { optionId: "n", name: "No", kind: "reject_once" },
        ],
      });
      const chosen = r.outcome.outcome === "selected" ? r.outcome.optionId : "cancelled";
      await client.notify("session/update", {
        sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: chosen } },
      });
      return { stopReason: "end_turn" };
    });
  const agent = await AcpAgent.start(HARNESS, "/w", {}, { connect: () => linkTo(app) });
  try {
    const { sessionId } = await agent.openSession("/w", {});
    const asked: ToolCallInfo[] = [];
    let said = "";
    const stop = await agent.prompt(sessionId, [{ type: "text", text: "go" }], {
      onUpdate: (u) => {
        if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") {
          said += u.content.text;
        }
      },
      onPermission: (toolCall) => {
        asked.push(toolCall);
        return Promise.resolve("n");
      },
    });
    assert.equal(stop, "end_turn");
    assert.equal(said, "n");
    assert.equal(asked.length, 1);
    // The request's null title does not erase the one its tool_call gave.
    assert.equal(asked[0]!.title, "Write notes.txt");
    assert.equal(asked[0]!.kind, "edit");
    assert.deepEqual(asked[0]!.locations, [{ path: "/w/notes.txt" }]);
    assert.deepEqual(asked[0]!.rawInput, { file_path: "/w/notes.txt" });
  } finally {
    await agent.stop();
  }
});
