/**
 * Lookalike profile names: a hello line naming `user-agent\u200b` or
 * `\u202Etnega-resu` is refused at the socket of a real daemon, with an error that
 * shows the hidden character escaped; names already stored are shown without them.
 */

import assert from "node:assert/strict";
import { LineReader } from "../../src/mcp/conn_transport.ts";
import { checkProfileName, shownProfileName } from "../../src/node/profiles.ts";
import { startWats, tempDataDir } from "../support/cli.ts";

const LOOKALIKES: [string, string][] = [
  ["user-agent\u200b", "U+200B"], // zero width space
  ["\u202Etnega-resu", "U+202E"], // right-to-left override
  ["user\u2066-agent\u2069", "U+2066"], // isolate
  ["user-age\u00adnt", "U+00AD"], // soft hyphen
  ["user-agent\ufeff", "U+FEFF"], // byte order mark
  ["user\u200d-agent", "U+200D"], // zero width joiner
  ["user-agent\u180e", "U+180E"], // Mongolian vowel separator
  ["user\u0085agent", "U+0085"], // C1 control
];

Deno.test("a hello naming a profile with an invisible or bidi character is refused at a daemon's socket", async () => {
  const dir = tempDataDir();
  const node = startWats(["--data-dir", dir, "node", "--agent", "none"]);
  try {
    await node.waitForLine((l) => l.includes('"event":"started"'));
    const hello = async (profile: string) => {
      const conn = await Deno.connect({ transport: "unix", path: `${dir}/mcp.sock` });
      try {
        await conn.write(
          new TextEncoder().encode(JSON.stringify({ wats: "hello", profile }) + "\n"),
        );
        return JSON.parse((await new LineReader(conn).readLine())!);
      } finally {
        conn.close();
      }
    };
    for (const [name, cp] of LOOKALIKES) {
      const reply = await hello(name);
      assert.equal(reply.wats, "error", `${JSON.stringify(name)}: ${JSON.stringify(reply)}`);
      assert.match(reply.message, new RegExp(`${cp.replace("+", "\\+")} is invisible`));
      assert.ok(
        !/[\u200b\u202e\u2066\u00ad\ufeff\u200d\u180e\u0085]/.test(reply.message),
        "escaped",
      );
    }
    // The same name without the hidden character is a profile like any other.
    assert.equal((await hello("user-agent")).wats, "ready");
  } finally {
    const end = await node.stop();
    assert.equal(end.code, 0, end.stderr);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkProfileName refuses lookalikes with the character named; shownProfileName strips them", () => {
  for (const [name, cp] of LOOKALIKES) {
    assert.throws(() => checkProfileName(name), new RegExp(cp.replace("+", "\\+")));
    assert.doesNotThrow(() => checkProfileName(shownProfileName(name)));
  }
  assert.equal(shownProfileName("\u202Etnega-resu"), "tnega-resu");
  assert.equal(shownProfileName("user-agent\u200b"), "user-agent");
  for (const fine of ["alice", "ünïcødé-名前", "bob_2", "a".repeat(64)]) {
    assert.doesNotThrow(() => checkProfileName(fine));
    assert.equal(shownProfileName(fine), fine);
  }
  assert.throws(() => checkProfileName("two words"), /"two words" is not allowed: use 1 to 64/);
});
