import assert from "node:assert/strict";
import {
  DEFAULT_NOTIFY_TIMEOUT_MS,
  NOTIFY_EVENTS,
  notifyEnvNames,
  targetUrlOf,
} from "../../src/config/notify_tables.ts";

import { errorOf, load } from "./config_text.ts";

Deno.test("[notify.NAME] targets load with their defaults: every event, a 10 s timeout", () => {
  const r = load(`
[notify.hook]
type = "webhook"
url = "https://hooks.example.org/wats"
secret_env = "HOOK_SECRET"

[notify.phone]
type = "ntfy"
url = "http://127.0.0.1:8080/alice"
events = ["permission", "halted", "permission"]
token_env = "NTFY_TOKEN"
timeout = "3s"

[notify.team]
type = "slack"
url_env = "SLACK_URL"
events = ["run_failed"]
`);
  assert.deepEqual(r.notify.hook, {
    name: "hook",
    type: "webhook",
    url: "https://hooks.example.org/wats",
    events: [...NOTIFY_EVENTS],
    secretEnv: "HOOK_SECRET",
    timeoutMs: DEFAULT_NOTIFY_TIMEOUT_MS,
  });
  assert.deepEqual(r.notify.phone, {
    name: "phone",
    type: "ntfy",
    url: "http://127.0.0.1:8080/alice",
    events: ["permission", "halted"],
    tokenEnv: "NTFY_TOKEN",
    timeoutMs: 3000,
  });
  assert.deepEqual(r.notify.team?.events, ["run_failed"]);
  assert.equal(r.notify.team?.url, undefined);
  assert.equal(r.notify.team?.urlEnv, "SLACK_URL");
  assert.deepEqual(notifyEnvNames(r.notify), ["HOOK_SECRET", "NTFY_TOKEN", "SLACK_URL"]);
  // A url_env's value is read when the node starts, and must be a URL too.
  const team = r.notify.team!;
  const env = (v: string) => (n: string) => n === "SLACK_URL" ? v : undefined;
  assert.equal(targetUrlOf(team, env("https://s.example/T/B/X")), "https://s.example/T/B/X");
  assert.equal(targetUrlOf(team, env("not a url")), undefined);
  assert.equal(targetUrlOf(team, env("https://u:p@s.example/")), undefined);
  assert.equal(targetUrlOf(team, () => undefined), undefined);
});

Deno.test("a config.toml without [notify] has no targets", () => {
  assert.deepEqual(load(`profile = "alice"\n`).notify, {});
  assert.deepEqual(load("").notify, {});
});

Deno.test("bad [notify.NAME] values name the file, the line and what to write", () => {
  const cases: Array<[string, RegExp]> = [
    [
      `[notify.x]\ntype = "email"\nurl = "https://a.example"\n`,
      /config\.toml:2: notify\.x\.type = "email" is not allowed; write type = "webhook", "ntfy" or "slack"/,
    ],
    [
      `[notify.x]\ntype = "slack"\n`,
      /config\.toml:1: notify\.x\.url = \(missing\) is not allowed; write either url = "https:\/\/…" or url_env = "NAME"/,
    ],
    [
      `[notify.x]\ntype = "slack"\nurl = "https://a.example"\nurl_env = "U"\n`,
      /config\.toml:3: notify\.x\.url = "https:\/\/a\.example" is not allowed; write either/,
    ],
    [
      `[notify.x]\ntype = "ntfy"\nurl = "ftp://a.example/t"\n`,
      /config\.toml:3: notify\.x\.url = "ftp:\/\/a\.example\/t" is not allowed; must be an http or https URL/,
    ],
    [
      `[notify.x]\ntype = "ntfy"\n\nurl = "https://u:hunter2@a.example/t"\n`,
      /config\.toml:4: notify\.x\.url = "https:\/\/…@a\.example" is not allowed; a password in the URL/,
    ],
    [
      `[notify.x]\ntype = "slack"\nurl = "https://a.example"\nevents = ["held"]\n`,
      /config\.toml:4: notify\.x\.events = "held" is not allowed; the events are draft, permission, in_doubt, budget_paused, halted, run_failed/,
    ],
    [
      `[notify.x]\ntype = "webhook"\nurl = "https://a.example"\n`,
      /config\.toml:1: notify\.x\.secret_env = \(missing\) is not allowed; a webhook is signed: write secret_env = "NAME"/,
    ],
    [
      `[notify.x]\ntype = "webhook"\nurl = "https://a.example"\nsecret_env = "my secret"\n`,
      /config\.toml:4: .*must be the name of an environment variable/,
    ],
    [
      `[notify.x]\ntype = "slack"\nurl = "https://a.example"\nsecret_env = "S"\n`,
      /config\.toml:4: .*only a webhook is signed; remove it/,
    ],
    [
      `[notify.x]\ntype = "webhook"\nurl = "https://a.example"\nsecret_env = "S"\ntoken_env = "T"\n`,
      /config\.toml:5: .*only an ntfy target takes a token; remove it/,
    ],
    [
      `[notify.x]\ntype = "ntfy"\nurl = "https://a.example"\ntimeout = "5m"\n`,
      /config\.toml:4: notify\.x\.timeout = "5m" is not allowed; must be a duration from 1s to 60s/,
    ],
    [
      `[notify.x]\ntype = "ntfy"\nurl = "https://a.example"\nsecret = "s"\n`,
      /config\.toml:4: unknown key notify\.x\.secret; the keys of \[notify\.NAME\] are type, url, url_env, events, secret_env, token_env, timeout/,
    ],
    [
      `[notify.Bad]\ntype = "ntfy"\nurl = "https://a.example"\n`,
      /notify\.Bad = "Bad" is not allowed; the name must be lowercase letters/,
    ],
  ];
  for (const [text, want] of cases) {
    const got = errorOf(text);
    assert.match(got, want);
    assert.match(got, /docs\/notifications\.md|unknown key/);
  }
});
