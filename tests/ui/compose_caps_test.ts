import assert from "node:assert/strict";
import { askFromForm } from "../../src/ui/compose.ts";

const form = (caps: string) => (k: string) =>
  ({ title: "Borrow?", text: "E0502", caps, to: "" } as Record<string, string>)[k] ?? "";

Deno.test("the dashboard's caps field takes capability names, read like everywhere else", () => {
  assert.deepEqual(askFromForm(form("Rust, cap:sql")).args.caps, ["rust", "sql"]);
  assert.throws(() => askFromForm(form("rust a/b")), {
    message: 'caps: "a/b" is not a capability name: use 1 to 64 lowercase letters, digits and ' +
      '. _ + # -, starting with a letter or digit (e.g. "rust")',
  });
});
