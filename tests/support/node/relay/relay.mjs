// An independent Nostr relay for wats' network tests: @nostr-relay/core with its
// SQLite repository, served by `ws` on 127.0.0.1. Run with Node (its native SQLite
// addon does not load under Deno):
//
//   node relay.mjs PORT [DB_FILE] [--members=HEX,HEX…]
//
// PORT 0 picks a free port. DB_FILE defaults to an in-memory database (":memory:");
// give a file to keep events across a restart. With --members, NIP-42 is on (the
// core's own: a challenge on connect, AUTH checked against 127.0.0.1) and a plugin
// serves REQ and takes EVENT only from a connection authenticated as a member, and
// takes only members' events: `auth-required:` before an AUTH, `restricted:` for a
// non-member, as strfry's and khatru's allowlists answer. Prints one line `{"port": N}` on stdout once it
// listens; stops on SIGTERM or SIGINT. It returns at most 1,000 events per REQ
// filter (the repository's cap), which the tests use to exercise paging.

import {
  createOutgoingAuthMessage,
  createOutgoingClosedMessage,
  createOutgoingOkMessage,
} from "@nostr-relay/common";
import { NostrRelay } from "@nostr-relay/core";
import { EventRepositorySqlite } from "@nostr-relay/event-repository-sqlite";
import { Validator } from "@nostr-relay/validator";
import { WebSocketServer } from "ws";

const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
const [portArg, dbArg] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const port = Number(portArg ?? "0");
const dbFile = dbArg ?? ":memory:";
const membersFlag = flags.find((f) => f.startsWith("--members="));
const members = membersFlag === undefined
  ? undefined
  : new Set(membersFlag.slice("--members=".length).split(",").filter((m) => m !== ""));
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`usage: node relay.mjs PORT [DB_FILE]; got port ${process.argv[2]}`);
  process.exit(2);
}

const repository = new EventRepositorySqlite(dbFile);
await repository.init();
const relay = new NostrRelay(repository, members ? { hostname: "127.0.0.1" } : {});
if (members) {
  relay.register({
    async handleMessage(ctx, message, next) {
      const [type] = message;
      if (type !== "REQ" && type !== "EVENT") return await next();
      const refusal = ctx.pubkey === undefined
        ? "auth-required: members only; answer the AUTH challenge"
        : !members.has(ctx.pubkey)
        ? "restricted: not a member of this relay"
        : type === "EVENT" && !members.has(message[1].pubkey)
        ? "restricted: the event's author is not a member"
        : undefined;
      if (refusal === undefined) return await next();
      if (type === "REQ") {
        ctx.sendMessage(createOutgoingClosedMessage(message[1], refusal));
        if (ctx.pubkey === undefined) ctx.sendMessage(createOutgoingAuthMessage(ctx.id));
      } else {
        ctx.sendMessage(createOutgoingOkMessage(message[1].id, false, refusal));
      }
      return { messageType: type, success: false, message: refusal };
    },
  });
}
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
