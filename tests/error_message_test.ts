import assert from "node:assert/strict";
import { errorMessage } from "../src/error_message.ts";

Deno.test("an Error's message is shown as it is, also for Deno's own errors", () => {
  assert.equal(errorMessage(new Error("disk full")), "disk full");
  assert.equal(errorMessage(new Deno.errors.NotFound("no such file")), "no such file");
  assert.equal(errorMessage(new Error("")), "");
});

Deno.test("a thrown string or JSON-RPC error object shows its words, not undefined", () => {
  assert.equal(errorMessage("the socket closed"), "the socket closed");
  assert.equal(errorMessage({ code: -32603, message: "Internal error" }), "Internal error");
});

Deno.test("any other thrown value is shown as JSON, or as text when it has no JSON", () => {
  assert.equal(errorMessage({ code: 7 }), '{"code":7}');
  assert.equal(errorMessage(42), "42");
  assert.equal(errorMessage(undefined), "undefined");
  assert.equal(errorMessage(null), "null");
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  assert.equal(errorMessage(cycle), "[object Object]");
  assert.equal(errorMessage({ n: 1n }), "[object Object]");
});
