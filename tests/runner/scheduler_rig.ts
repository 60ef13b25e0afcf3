/**
 * The runner on fakes (fakes.ts): a fake clock, an in-memory store, a scripted harness and
 * real transcripts in a temporary directory. Shared by the scheduler's tests.
 *
 * @module
 */

import { defaultSettings } from "../../src/config/schema.ts";
import { Runner } from "../../src/runner/scheduler.ts";
import type {
  RunnerLaunch,
  RunnerOptions,
  RunnerSettings,
} from "../../src/runner/runner_options.ts";
import { Transcripts } from "../../src/runner/transcripts.ts";
import {
  AGENT,
  FakeHarness,
  FakeSpawner,
  FakeStore,
  FakeTime,
  MemoryLog,
  PERSON,
} from "./fakes.ts";

export const SEC = 1000;
export const MIN = 60 * SEC;
export const HOUR = 60 * MIN;
/** 2026-10-15 12:00:00 UTC. */
export const T0 = Date.UTC(2026, 9, 15, 12);

export interface Rig {
  runner: Runner;
  time: FakeTime;
  store: FakeStore;
  spawner: FakeSpawner;
  harness: FakeHarness;
  log: MemoryLog;
  transcripts: Transcripts;
  tokens: string[];
  ended: string[];
  /** Each budget pause the hook was told of: reason and end. */
  paused: Array<[string, number]>;
  dir: string;
  /** Stores a post and tells the runner, as Store.onInsert does. */
  post(p: Parameters<FakeStore["add"]>[0]): ReturnType<FakeStore["add"]>;
  cleanup(): void;
}

export function rig(
  settings: Partial<RunnerSettings> = {},
  opts: {
    start?: number;
    transcriptsDir?: string;
    /** The store of a previous rig: a restarted daemon on the same data. */
    store?: FakeStore;
    launch?: Partial<RunnerLaunch>;
  } = {},
): Rig {
  const dir = opts.transcriptsDir ?? Deno.makeTempDirSync({ prefix: "wats-runner-sched-" });
  const time = new FakeTime(opts.start ?? T0);
  const store = opts.store ?? new FakeStore();
  const spawner = new FakeSpawner();
  const harness = new FakeHarness();
  const log = new MemoryLog();
  const transcripts = new Transcripts({
    runsDir: `${dir}/agent/runs`,
    runsIndex: `${dir}/agent/runs.jsonl`,
  });
  const tokens: string[] = [];
  const ended: string[] = [];
  const paused: Array<[string, number]> = [];
  const all = {
    ...defaultSettings(),
    "agent.profile": "alice-agent",
    "agent.every": 30 * SEC,
    "agent.heartbeat": 0,
    ...settings,
  };
  const o: RunnerOptions = {
    world: { clock: time, timers: time, log },
    records: { store, transcripts },
    settings: all,
    agent: {
      agentKey: AGENT,
      user: "alice",
      localAuthors: () => new Set([AGENT, PERSON]),
      template: "{reasons}\n{cursor}\n{events}",
    },
    launch: {
      harness,
      spawn: spawner.spawn,
      paths: { dataDir: dir, runDir: `${dir}/agent/run`, configDir: `${dir}/agent/run-config` },
      selfCommand: { command: "wats", args: [] },
      ...opts.launch,
    },
    hooks: {
      onRunStart: (id) => {
        const t = `token-${id}`;
        tokens.push(t);
        return t;
      },
      onRunEnd: (e) => void ended.push(e.id),
      onBudgetPause: (reason, until) => void paused.push([reason, until]),
    },
  };
  const runner = new Runner(o);
  return {
    runner,
    time,
    store,
    spawner,
    harness,
    log,
    transcripts,
    tokens,
    ended,
    paused,
    dir,
    post(p) {
      const added = store.add(p);
      runner.onPosts([added]);
      return added;
    },
    cleanup: () => Deno.removeSync(dir, { recursive: true }),
  };
}

/** The event ids a run's prompt listed (the fake template prints `{events}`). */
export function promptIds(stdin: string, ids: string[]): string[] {
  return ids.filter((id) => stdin.includes(id.slice(0, 12)));
}
