import assert from "node:assert/strict";
import { loadOrCreateNodeKey } from "../../src/identity/node_key.ts";
import { WatsError } from "../../src/errors.ts";

// Made at load time, with the full grant the test run has, so the narrow-grant test
// below can use it without write access to the temp folder; removed when the module
// ends (with that grant again), whichever tests ran and in whatever order.
const narrowDir = Deno.makeTempDirSync({ prefix: "wats-nodekey-" });
const narrowKey = `${narrowDir}/node.key`;
globalThis.addEventListener("unload", () => Deno.removeSync(narrowDir, { recursive: true }));

Deno.test("node key is created once: 32 bytes, mode 0600, same bytes on the next load", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/node.key`;
    const first = await loadOrCreateNodeKey(path);
    assert.equal(first.length, 32);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const second = await loadOrCreateNodeKey(path);
    assert.deepEqual(second, first);
    assert.deepEqual(await Deno.readFile(path), first);
    assert.notDeepEqual(first, new Uint8Array(32), "the key is random, not zeros");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("node key of the wrong size is an error that says what to do, and the file is kept", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/node.key`;
    await Deno.writeFile(path, new Uint8Array(31).fill(7));
    await assert.rejects(loadOrCreateNodeKey(path), (err: unknown) => {
      assert.ok(err instanceof WatsError);
      assert.equal(err.code, "identity.node_key_size");
      assert.match(err.message, /31 bytes, not 32/);
      assert.match(err.message, /move it away|Restore/);
      return true;
    });
    assert.deepEqual(await Deno.readFile(path), new Uint8Array(31).fill(7));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("node key loads created concurrently agree on one key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/node.key`;
    const keys = await Promise.all([1, 2, 3, 4].map(() => loadOrCreateNodeKey(path)));
    for (const k of keys) assert.deepEqual(k, await Deno.readFile(path));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "node key needs only read and write on its own path",
  permissions: { read: [narrowKey], write: [narrowKey] },
  async fn() {
    const key = await loadOrCreateNodeKey(narrowKey);
    assert.deepEqual(await loadOrCreateNodeKey(narrowKey), key);
    await assert.rejects(Deno.readFile(`${narrowDir}/other`), Deno.errors.NotCapable);
  },
});
