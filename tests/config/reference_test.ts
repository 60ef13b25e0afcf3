import assert from "node:assert/strict";
import { REGENERATE, renderReference } from "../../src/config/reference.ts";
import { SCHEMA, SETTING_KEYS } from "../../src/config/schema.ts";

const DOC = new URL("../../docs/configuration.md", import.meta.url);

Deno.test("docs/configuration.md is what the schema renders", async () => {
  const onDisk = await Deno.readTextFile(DOC);
  assert.ok(
    onDisk === renderReference(),
    `docs/configuration.md is out of date with src/config/schema.ts; regenerate it with:\n  ${REGENERATE}`,
  );
});

Deno.test("the reference lists every key with its variable, and the removed keys", () => {
  const text = renderReference();
  for (const key of SETTING_KEYS) {
    assert.ok(text.includes(`| \`${key}\``), key);
    assert.ok(text.includes(`\`${SCHEMA[key].env}\``), SCHEMA[key].env);
  }
  assert.ok(text.includes("agent.thread_backoff is no longer used (loop detector, ADR 0011)"));
  assert.ok(text.includes("`--every`, `--agent-every`"));
});
