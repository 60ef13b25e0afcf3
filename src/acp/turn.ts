/**
 * One prompt turn of a call: what the coding agent says (its last message,
 * its cost, the `outside` label once it fetches) and what becomes of each of
 * its permission requests. The decision is src/acp/judge.ts's; this carries it
 * out: parks the request for a person when told to, answers the agent, lists
 * what was refused, and says each step on the node's lines.
 *
 * @module
 */

import type { PermissionOption } from "@agentclientprotocol/sdk";
import type {
  CallArgs,
  CallOrigin,
  Parked,
  PermissionAsk,
  Refusal,
} from "../contracts/coding_agents.ts";
import type { WorkChangedEvent } from "../contracts/node_events.ts";
import type { SessionHandlers, SessionUpdate, ToolCallInfo } from "./client.ts";
import {
  answerPermission,
  decidedByPerson,
  type Grant,
  type JudgedRequest,
  judgePermission,
} from "./judge.ts";
import { type Policy, resolveLocation, type Verdict } from "./policy.ts";
import { commandOf } from "./shell_split.ts";

/** One thing that happened in a call, for the node's log lines. */
export type CallEvent =
  | Omit<WorkChangedEvent, "event">
  | {
    type: "acp_update";
    harness: string;
    agent: string;
    call: string;
    /** The run that called, if one. */
    run?: string;
    update: SessionUpdate;
  }
  | {
    type: "acp_permission";
    harness: string;
    agent: string;
    call: string;
    run?: string;
    id: string;
    request: string;
    /** An execute request's command line. */
    command?: string;
    locations: string[];
    verdict: "allow" | "deny" | "ask";
    answer: string;
    reason: string;
    labels: string[];
  };

/** A request held for a person: its pending id, and their decision once made. */
export interface Held {
  id: string;
  decided: Promise<boolean>;
}

/** What the turn is part of, and how it reaches the call. */
export interface TurnOptions {
  harness: string;
  checkout: string;
  args: CallArgs;
  origin: CallOrigin;
  /** The work's worktree as named (what a person is shown). */
  worktreeDir: string;
  /** The same, resolved: requests are judged against it. */
  worktree: string;
  policy: Policy;
  /** A person's decision carried to this call, for the request it answers. */
  grant?: Grant;
  emit(event: CallEvent): void;
  /** Hears the session's cumulative cost (USD) at each `usage_update` that reports one. */
  spent?: (total: number) => void;
  /** Holds an `ask` for a person (agent.review on); undefined: `ask` refuses. */
  park?: (ask: PermissionAsk) => Held;
  /** A request waits for a person: the call returns this much now; the prompt goes on. */
  parked(
    r: { message: string; refused: Refusal[]; labels: string[]; parked: Parked },
  ): Promise<void>;
  /**
   * The person decided (`decision`, with the request it answers): the call is
   * in flight again. False: the budget has no room for it to go on; the
   * request is answered `cancelled` and the prompt is cancelled.
   */
  resumed(decision: Grant): boolean;
}

/** The handlers of one prompt, and what it gathered. */
export class Turn implements SessionHandlers {
  readonly #call: TurnOptions;
  readonly #base: { harness: string; agent: string; call: string; run?: string };
  #grant: Grant | undefined;
  #message = "";
  /** Requests answered with anything but allow_once. */
  readonly refused: Refusal[] = [];
  readonly labels = new Set<string>();
  /** The session's cumulative cost in USD, when the agent reported one. */
  cost: number | undefined;

  constructor(options: TurnOptions) {
    this.#call = options;
    this.#grant = options.grant;
    const { origin } = options;
    this.#base = {
      harness: options.harness,
      agent: origin.agent,
      call: origin.callId,
      ...(origin.run !== undefined ? { run: origin.run } : {}),
    };
  }

  /** The agent's last message: what it said after its last tool call. */
  get message(): string {
    return this.#message.trim();
  }

  onUpdate(update: SessionUpdate): void {
    this.#call.emit({ type: "acp_update", ...this.#base, update });
    if (update.sessionUpdate === "tool_call") {
      this.#message = "";
      if (update.kind === "fetch") this.labels.add("outside");
    } else if (update.sessionUpdate === "agent_message_chunk") {
      if (update.content.type === "text") this.#message += update.content.text;
    } else if (update.sessionUpdate === "usage_update") {
      if (update.cost?.currency === "USD") {
        this.cost = update.cost.amount;
        this.#call.spent?.(this.cost);
      }
    }
  }

  async onPermission(
    toolCall: ToolCallInfo,
    options: readonly PermissionOption[],
  ): Promise<string | undefined> {
    const call = this.#call;
    const kind = toolCall.kind ?? "other";
    if (kind === "fetch") this.labels.add("outside");
    const request: JudgedRequest = {
      harness: call.harness,
      kind,
      locations: (toolCall.locations ?? []).map((l) =>
        resolveLocation(l.path, call.worktree, call.policy.home)
      ),
      worktree: call.worktree,
      command: commandOf(toolCall.rawInput),
      rawInput: toolCall.rawInput,
    };
    const { locations } = request;
    const id = `${call.origin.callId}:${toolCall.toolCallId}`;
    const name = `${call.harness}/${kind}`;
    const title = toolCall.title ?? undefined;
    const judged = judgePermission(call.policy, request, {
      grant: this.#grant,
      canPark: call.park !== undefined,
    });
    const emit = (o: { verdict: Verdict; answer: string; reason: string }) =>
      call.emit({
        type: "acp_permission",
        ...this.#base,
        id,
        request: name,
        ...(request.command !== undefined ? { command: request.command } : {}),
        locations,
        ...o,
        labels: [...this.labels],
      });
    let verdict: Verdict, reason: string;
    if (judged.then === "answer") {
      ({ verdict, reason } = judged);
      if (judged.grantUsed) this.#grant = undefined;
    } else {
      const held = call.park!({
        request_id: id,
        harness: call.harness,
        kind,
        title,
        arguments: toolCall.rawInput,
        locations,
        worktree: call.worktreeDir,
        checkout: call.checkout,
        work: call.args.work,
        agent: call.origin.agent,
        thread: call.origin.thread,
        task: call.args.task,
        reason: judged.reason,
      });
      emit({
        verdict: "ask",
        answer: "parked",
        reason: `${judged.reason}; parked for review as ${held.id}`,
      });
      await call.parked({
        message: this.message,
        refused: [...this.refused],
        labels: [...this.labels],
        parked: { id: held.id, request_id: id, request: name },
      });
      const approved = await held.decided;
      if (!call.resumed({ kind, locations, rawInput: toolCall.rawInput, approved })) {
        // ACP: a cancelled prompt's pending requests are answered `cancelled`.
        emit({
          verdict: approved ? "allow" : "deny",
          answer: "cancelled",
          reason: `a person ${approved ? "approved" : "rejected"} it, but the budget has no ` +
            "room for the call to go on: the decision goes to the call that goes on after the reset",
        });
        return undefined;
      }
      ({ verdict, reason } = decidedByPerson(judged.reason, approved));
    }
    const answer = answerPermission(verdict, reason, options);
    if (answer.refused) this.refused.push({ id, request: name, title, reason: answer.reason });
    emit({ verdict, answer: answer.answer, reason: answer.reason });
    return answer.optionId;
  }
}
