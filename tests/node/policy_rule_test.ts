import assert from "node:assert/strict";
import { addAllowRule } from "../../src/node/policy_rule.ts";
import { runWats } from "../support/cli.ts";
import { WatsError } from "../../src/errors.ts";

Deno.test("allow always adds the rule to policy.allow in config.toml, keeps the others and the file loadable, and wats config list flags it until wats config ack", async () => {
  const data = Deno.makeTempDirSync({ prefix: "wats-rule-" });
  const home = Deno.makeTempDirSync({ prefix: "wats-home-" });
  try {
    const config = `${data}/config.toml`;
    Deno.writeTextFileSync(config, '# mine\n[policy]\nallow = ["claude/edit(src/**)"]\n');
    const acked = await runWats(["--data-dir", data, "config", "ack"], { home });
    assert.equal(acked.code, 0, acked.stderr);

    const said = await addAllowRule(config, "claude/execute(npm test)", { HOME: home, user: "u" });
    assert.match(
      said,
      /^added claude\/execute\(npm test\) to policy\.allow in .*: a safety change, flagged until you run `wats config ack`/,
    );
    const text = Deno.readTextFileSync(config);
    assert.match(text, /# mine/);
    assert.match(text, /allow = \["claude\/edit\(src\/\*\*\)", "claude\/execute\(npm test\)"\]/);

    const list = await runWats(["--data-dir", data, "config", "list"], { home });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /policy\.allow/);
    assert.match(list.stdout, /claude\/execute\(npm test\)/);
    assert.match(list.stdout, /wats config ack/);
    const before = list.stdout;
    const again = await runWats(["--data-dir", data, "config", "ack"], { home });
    assert.equal(again.code, 0, again.stderr);
    const after = await runWats(["--data-dir", data, "config", "list"], { home });
    assert.notEqual(after.stdout.split("policy.allow").length, 0);
    assert.ok(before.length > after.stdout.length, "the notice is gone once acknowledged");

    // The same rule again writes nothing; a rule that is none is refused, the file unchanged.
    assert.match(
      await addAllowRule(config, "claude/execute(npm test)", { HOME: home, user: "u" }),
      /^nothing was written: policy\.allow already holds/,
    );
    const kept = Deno.readTextFileSync(config);
    await assert.rejects(
      () => addAllowRule(config, "not a rule((", { HOME: home, user: "u" }),
      (e: unknown) =>
        e instanceof WatsError &&
        /^nothing was written: "not a rule\(\(" is not a policy rule/.test(e.message),
    );
    assert.equal(Deno.readTextFileSync(config), kept);
  } finally {
    Deno.removeSync(data, { recursive: true });
    Deno.removeSync(home, { recursive: true });
  }
});
