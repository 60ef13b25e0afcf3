/**
 * Sends notices to the `[notify.NAME]` targets (docs/notifications.md). Each
 * target has its own bounded queue and sends one notice at a time, on its own
 * timers: a slow or dead target delays only itself, and nothing here is
 * awaited by the node. A failed attempt is retried with exponential backoff on
 * network errors, timeouts, 5xx and 429 (honouring Retry-After), never on
 * another 4xx or a redirect (docs/decisions/notify.md).
 *
 * Requires `--allow-net` to each target's host:port and `--allow-env` for the
 * variables the targets name (src/cli/permissions.ts).
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import { type NotifyTarget, targetUrlOf } from "../config/notify_tables.ts";
import type { NodeEvent } from "../contracts/node_events.ts";
import type { Timers } from "../runner/ports.ts";
import { type Notice, noticeOf } from "./notices.ts";
import { type LiveTarget, notifyRequest, type TargetSecrets } from "./notify_payloads.ts";

/** Attempts per notice, the first included. */
export const MAX_ATTEMPTS = 5;
/** The wait after the first failed attempt; it doubles after each, up to {@linkcode MAX_BACKOFF_MS}. */
export const FIRST_BACKOFF_MS = 1000;
export const MAX_BACKOFF_MS = 30_000;
/** The longest Retry-After honoured; a target that asks for longer loses the notice. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;
/** Notices waiting per target; the oldest is dropped (and counted) beyond it. */
export const QUEUE_MAX = 50;

/** What the sender needs from the world; tests pass fakes. */
export interface SenderWorld {
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  timers: Timers;
  /** Now, in ms. */
  now: () => number;
  /** In [0, 1): the jitter of backoff. */
  random: () => number;
  warn: (message: string) => void;
}

/** One target's counts. */
export interface TargetStats {
  /** Delivered (a 2xx answer). */
  sent: number;
  /** Given up on: out of attempts, or an answer not worth retrying. */
  failed: number;
  /** Dropped from a full queue, oldest first. */
  dropped: number;
  /** Attempts after the first. */
  retries: number;
  /** Waiting, the one in flight included. */
  queued: number;
}

/**
 * The wait before attempt `attempt + 1` after attempt `attempt` (1-based)
 * failed: 1 s, 2 s, 4 s… up to 30 s, each ±20% so many nodes that failed
 * together do not retry together. A Retry-After (ms) replaces it.
 */
export function backoffMs(attempt: number, random: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  const base = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random));
}

/** Retry-After (seconds or an HTTP date) in ms from `now`; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const t = value.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Whether an HTTP answer is worth another attempt. */
export function retryable(status: number): boolean {
  return status === 429 || status >= 500;
}

/** One target's queue and its sending loop. */
export class TargetSender {
  readonly target: LiveTarget;
  readonly #secrets: TargetSecrets;
  readonly #world: SenderWorld;
  readonly #queue: Notice[] = [];
  readonly #stop = new AbortController();
  #busy = false;
  #timer: unknown;
  #stats = { sent: 0, failed: 0, dropped: 0, retries: 0 };

  constructor(target: LiveTarget, secrets: TargetSecrets, world: SenderWorld) {
    this.target = target;
    this.#secrets = secrets;
    this.#world = world;
  }

  /** Queues `n`; returns at once. */
  send(n: Notice): void {
    if (this.#stop.signal.aborted) return;
    this.#queue.push(n);
    // The one in flight (index 0 while busy) is not the one to drop.
    const first = this.#busy ? 1 : 0;
    if (this.#queue.length > QUEUE_MAX) {
      this.#queue.splice(first, 1);
      if (this.#stats.dropped++ === 0) {
        this.#world.warn(
          `notify.${this.target.name}: more than ${QUEUE_MAX} notices wait, so the oldest are ` +
            "dropped; check that the target answers (the review queue keeps everything)",
        );
      }
    }
    this.#pump();
  }

  stats(): TargetStats {
    return { ...this.#stats, queued: this.#queue.length };
  }

  /** Stops sending: the attempt in flight is aborted and what waits is dropped. */
  stop(): void {
    this.#stop.abort();
    if (this.#timer !== undefined) this.#world.timers.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#queue.length = 0;
  }

  #pump(): void {
    if (this.#busy || this.#queue.length === 0 || this.#stop.signal.aborted) return;
    this.#busy = true;
    void this.#attempt(1);
  }

  #done(outcome: "sent" | "failed"): void {
    this.#stats[outcome]++;
    this.#queue.shift();
    this.#busy = false;
    this.#pump();
  }

  async #attempt(attempt: number): Promise<void> {
    this.#timer = undefined;
    const n = this.#queue[0];
    if (n === undefined || this.#stop.signal.aborted) return;
    if (attempt > 1) this.#stats.retries++;
    let why: string;
    let wait: number | undefined;
    let again = true;
    try {
      const req = notifyRequest(this.target, n, this.#secrets, this.#world.now() / 1000);
      const res = await this.#world.fetch(req.url, {
        method: "POST",
        headers: req.headers,
        body: req.body,
        redirect: "manual",
        signal: AbortSignal.any([
          this.#stop.signal,
          AbortSignal.timeout(this.target.timeoutMs),
        ]),
      });
      await res.body?.cancel().catch(() => {});
      if (res.status >= 200 && res.status < 300) return this.#done("sent");
      why = `the target answered ${res.status}`;
      again = retryable(res.status);
      wait = retryAfterMs(res.headers.get("Retry-After"), this.#world.now());
    } catch (err) {
      if (this.#stop.signal.aborted) return;
      // A fetch error names the URL, which may be a secret (url_env): never in the log.
      why = errorMessage(err).replaceAll(this.target.url, "<url>");
    }
    if (this.#stop.signal.aborted) return;
    if (wait !== undefined && wait > MAX_RETRY_AFTER_MS) again = false;
    if (!again || attempt >= MAX_ATTEMPTS) {
      this.#world.warn(
        `notify.${this.target.name}: gave up on a ${n.event} notice after ${attempt} ` +
          `attempt${attempt === 1 ? "" : "s"}: ${why}; check the target's url in config.toml`,
      );
      return this.#done("failed");
    }
    this.#timer = this.#world.timers.setTimer(
      backoffMs(attempt, this.#world.random(), wait),
      () => void this.#attempt(attempt + 1),
    );
  }
}

/** The targets the node sends to, fed by its event stream. */
export interface NotifyTargets {
  /** Passes `e` on to each target whose events include its notice; returns at once. */
  onEvent(e: NodeEvent): void;
  stop(): void;
  stats(): Record<string, TargetStats>;
}

/**
 * Starts a sender per target. `readEnv` reads the variables the targets name,
 * once, now: a missing one turns its target off with a warning naming it, and
 * the node goes on.
 */
export function startNotifyTargets(o: {
  targets: Record<string, NotifyTarget>;
  readEnv: (name: string) => string | undefined;
  node: string;
  world: SenderWorld;
}): NotifyTargets {
  const senders: TargetSender[] = [];
  for (const t of Object.values(o.targets)) {
    const missing = [t.urlEnv, t.secretEnv, t.tokenEnv].filter((v): v is string =>
      v !== undefined && (o.readEnv(v) ?? "") === ""
    );
    if (missing.length > 0) {
      o.world.warn(
        `notify.${t.name} is off: the variable ${missing.join(" and ")} is not set; ` +
          "set it where wats starts (for wats service, in its environment) and restart",
      );
      continue;
    }
    const url = targetUrlOf(t, o.readEnv);
    if (url === undefined) {
      o.world.warn(
        `notify.${t.name} is off: the variable ${t.urlEnv} does not hold an http or https URL ` +
          "without a password; set it to the target's URL and restart",
      );
      continue;
    }
    senders.push(
      new TargetSender({ ...t, url }, {
        ...(t.secretEnv ? { secret: o.readEnv(t.secretEnv) } : {}),
        ...(t.tokenEnv ? { token: o.readEnv(t.tokenEnv) } : {}),
      }, o.world),
    );
  }
  return {
    onEvent(e) {
      if (senders.length === 0) return;
      const n = noticeOf(e, { node: o.node, at: o.world.now(), id: crypto.randomUUID() });
      if (n === undefined) return;
      for (const s of senders) if (s.target.events.includes(n.event)) s.send(n);
    },
    stop() {
      for (const s of senders) s.stop();
    },
    stats() {
      return Object.fromEntries(senders.map((s) => [s.target.name, s.stats()]));
    },
  };
}
