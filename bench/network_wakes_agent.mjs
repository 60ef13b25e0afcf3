#!/usr/bin/env node
// The stand-in agent of bench/network_wakes.ts (stand_in_agent.mjs says how it is run). It costs
// one Node start and one `wats mcp` per wake instead of a model CLI's start: at 12 nodes and 100
// asks the real CLI would not fit the bench's 10 minutes on two cores.
//
// A wake (`-p`): appends one JSON line `{"at": ms, "events": [{"id", "kind"}]}` to
// `<data dir>/bench-wakes.jsonl`, then for each ask the prompt lists calls `post` with kind `claim` (all
// of them first), then kind `answer`, and prints the stream-json `init` and `result` lines the
// runner's Claude parser reads.

import { appendFileSync } from "node:fs";
import { claimThenAnswer, out, printResult, readWake, startBridge } from "./stand_in_agent.mjs";

const { server, dataDir, events } = await readWake();
appendFileSync(`${dataDir}/bench-wakes.jsonl`, JSON.stringify({ at: Date.now(), events }) + "\n");
out({ type: "system", subtype: "init", mcp_servers: [{ name: "wats", status: "connected" }] });

const asks = events.filter((e) => e.kind === "ask");
let errors = [];
if (asks.length > 0) {
  const bridge = startBridge(server, { clientName: "network-wakes-agent" });
  errors = await bridge.ready
    ? await claimThenAnswer(bridge, asks)
    : ["initialize: wats mcp did not answer"];
  bridge.close();
  await bridge.exited;
}
printResult(errors);
