// An independent Nostr relay for wats' network tests: @nostr-relay/core with its
// SQLite repository, served by `ws` on 127.0.0.1. Run with Node (its native SQLite
// addon does not load under Deno):
//
//   node relay.mjs PORT [DB_FILE]
//
// PORT 0 picks a free port. DB_FILE defaults to an in-memory database; give a file
// to keep events across a restart. Prints one line `{"port": N}` on stdout once it
// listens; stops on SIGTERM or SIGINT. It returns at most 1,000 events per REQ
// filter (the repository's cap), which the tests use to exercise paging.

import { NostrRelay } from "@nostr-relay/core";
import { EventRepositorySqlite } from "@nostr-relay/event-repository-sqlite";
import { Validator } from "@nostr-relay/validator";
import { WebSocketServer } from "ws";

const port = Number(process.argv[2] ?? "0");
const dbFile = process.argv[3] ?? ":memory:";
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`usage: node relay.mjs PORT [DB_FILE]; got port ${process.argv[2]}`);
  process.exit(2);
}

const repository = new EventRepositorySqlite(dbFile);
await repository.init();
const relay = new NostrRelay(repository);
const validator = new Validator();

const wss = new WebSocketServer({ host: "127.0.0.1", port });
wss.on("connection", (ws) => {
  relay.handleConnection(ws);
  ws.on("message", async (data) => {
    try {
      const message = await validator.validateIncomingMessage(data);
      await relay.handleMessage(ws, message);
    } catch (error) {
      ws.send(JSON.stringify(["NOTICE", error instanceof Error ? error.message : String(error)]));
    }
  });
  ws.on("close", () => relay.handleDisconnect(ws));
  ws.on("error", () => {});
});
wss.on("listening", () => {
  process.stdout.write(JSON.stringify({ port: wss.address().port }) + "\n");
});
wss.on("error", (err) => {
  console.error(`relay.mjs: ${err.message}`);
  process.exit(1);
});

const stop = async () => {
  for (const c of wss.clients) c.terminate();
  wss.close();
  await relay.destroy();
  await repository.destroy();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
