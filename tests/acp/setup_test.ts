import assert from "node:assert/strict";
import { acpLayerFor } from "../../src/acp/setup.ts";
import { resolveSettings } from "../../src/config/settings.ts";
import { dataPaths } from "../../src/config/paths.ts";
import { ConfigError } from "../../src/errors.ts";

function setup(text: string) {
  const r = resolveSettings({
    fileText: text,
    filePath: "/d/config.toml",
    env: {},
    flags: {},
    user: "alice",
  });
  return () =>
    acpLayerFor({
      acp: r.acp,
      settings: r.values,
      paths: dataPaths("/d"),
      env: {},
      reserved: ["ask", "status"],
    });
}

Deno.test("no enabled harness: no layer, so no harness tool", () => {
  assert.equal(setup("")(), undefined);
  assert.equal(setup('[harnesses.c]\ncommand = "x"\nenabled = false\n')(), undefined);
});

Deno.test("the layer offers the enabled harnesses and the checkouts agent.checkouts allows", () => {
  const layer = setup(
    '[harnesses.c]\ncommand = "x"\n[harnesses.d]\ncommand = "y"\nenabled = false\n' +
      '[checkouts.a]\npath = "/a"\n[checkouts.b]\npath = "/b"\n[agent]\ncheckouts = ["b"]\n',
  )()!;
  assert.deepEqual(layer.harnessNames(), ["c"]);
  assert.deepEqual(layer.checkoutNames(), ["b"]);
});

Deno.test("a harness named like a wats tool, or an unknown agent.checkouts entry, stops the start", () => {
  assert.throws(
    setup('[harnesses.status]\ncommand = "x"\n'),
    (e) =>
      e instanceof ConfigError &&
      /\[harnesses\.status\] is named like the wats tool/.test(e.message),
  );
  assert.throws(
    setup('[harnesses.c]\ncommand = "x"\n[agent]\ncheckouts = ["nope"]\n'),
    (e) =>
      e instanceof ConfigError &&
      /agent\.checkouts names "nope", but config\.toml has no/.test(e.message),
  );
});

Deno.test("a call to a checkout the agent may not use is refused before anything starts", async () => {
  const layer = setup(
    '[harnesses.c]\ncommand = "/nonexistent"\n[checkouts.a]\npath = "/a"\n[checkouts.b]\npath = "/b"\n' +
      '[agent]\ncheckouts = ["b"]\n',
  )()!;
  await assert.rejects(
    () =>
      layer.call("c", { agent: "x", thread: "_", callId: "1" }, {
        task: "t",
        checkout: "a",
        work: "w",
      }),
    /checkout "a" is not one this agent may use; use one of: b/,
  );
  await assert.rejects(
    () =>
      layer.call("c", { agent: "x", thread: "_", callId: "1" }, {
        task: "t",
        checkout: "b",
        work: "../w",
      }),
    /work "..\/w" is not a usable name/,
  );
});
