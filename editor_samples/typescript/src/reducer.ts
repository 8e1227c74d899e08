/**
 * A reset-aware reducer for ACP `session/update`s, typed on the official
 * `@agentclientprotocol/sdk`: what an editor shows, honouring acp-bridge's reset
 * flag (spec/reset-extension.md section 5) and its give-up marker (RESET-010).
 *
 * Feed it with `prompt(text)` when the user sends a prompt, `update(notification)`
 * for each `session/update`, and `permission(request)` for each
 * `session/request_permission`; read `entries` (to render) or `view()` (the
 * conformance kit's view JSON, spec/editor-conformance.md section 6.2).
 */
import type {
  ContentBlock,
  RequestPermissionRequest,
  SessionNotification,
  SessionUpdate,
} from "@agentclientprotocol/sdk";

export type Role = "user" | "agent" | "thought";

export type MessageEntry = { kind: "message"; role: Role; messageId: string | null; text: string };
export type ToolCallEntry = { kind: "tool_call"; toolCallId: string; title: string; status: string };
export type RetryEntry = { kind: "retry"; attempt: number | null; reason: string | null };
export type Entry = MessageEntry | ToolCallEntry | RetryEntry;

export type View = {
  messages: { role: "user" | "agent"; text: string }[];
  thoughts: string[];
  toolCalls: { toolCallId: string; title: string; status: string }[];
  permissionPrompts: { toolCallId: string; title: string | null }[];
  retries: { attempt: number | null; reason: string | null }[];
};

type Chunk = Extract<
  SessionUpdate,
  { sessionUpdate: "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk" }
>;

const ROLE: Record<Chunk["sessionUpdate"], Role> = {
  user_message_chunk: "user",
  agent_message_chunk: "agent",
  agent_thought_chunk: "thought",
};

function textOf(content: ContentBlock): string {
  if (content.type === "text") return content.text;
  if (content.type === "resource_link") return `[resource_link: ${content.uri}]`;
  return `[${content.type}]`;
}

/** The reset marker of a chunk (`_meta.reset === true`), or null. Any attempt and reason are accepted (RESET-009). */
export function resetMarker(update: { _meta?: { [key: string]: unknown } | null }): RetryEntry | null {
  const meta = update._meta;
  if (!meta || meta["reset"] !== true) return null;
  const attempt = meta["attempt"];
  const reason = meta["reason"];
  return {
    kind: "retry",
    attempt: typeof attempt === "number" && Number.isInteger(attempt) ? attempt : null,
    reason: typeof reason === "string" ? reason : null,
  };
}

export class ResetAwareView {
  readonly entries: Entry[] = [];
  readonly permissionPrompts: { toolCallId: string; title: string | null }[] = [];
  /** Where the current model call's output starts (after the prompt or the last tool call). */
  private boundary = 0;
  private readonly toolCalls = new Map<string, ToolCallEntry>();

  /** The user sent a prompt: a user message, and a new model call, start here. */
  prompt(text: string): void {
    this.entries.push({ kind: "message", role: "user", messageId: null, text });
    this.boundary = this.entries.length;
  }

  /** A `session/request_permission` the user saw. */
  permission(request: RequestPermissionRequest): void {
    const call = request.toolCall;
    this.permissionPrompts.push({ toolCallId: call.toolCallId, title: call.title ?? null });
    if (!this.toolCalls.has(call.toolCallId)) this.upsertToolCall(call.toolCallId, call.title, call.status);
  }

  /** One `session/update` notification. */
  update(notification: SessionNotification): void {
    const update = notification.update;
    switch (update.sessionUpdate) {
      case "user_message_chunk":
      case "agent_message_chunk":
      case "agent_thought_chunk":
        this.chunk(update);
        return;
      case "tool_call":
        this.upsertToolCall(update.toolCallId, update.title, update.status);
        this.boundary = this.entries.length; // the next model call starts here (RESET-007)
        return;
      case "tool_call_update":
        this.upsertToolCall(update.toolCallId, update.title, update.status);
        this.boundary = this.entries.length;
        return;
      default:
        return; // plans, commands, modes, usage: not part of this view
    }
  }

  private chunk(update: Chunk): void {
    const role = ROLE[update.sessionUpdate];
    const text = textOf(update.content);
    const messageId = update.messageId ?? null;
    if (role === "user") {
      // A replayed user message (session/load): a new messageId is a new message (EDITOR-012).
      const last = this.entries[this.entries.length - 1];
      if (last?.kind === "message" && last.role === "user" && last.messageId === messageId) {
        last.text += text;
      } else if (text) {
        this.entries.push({ kind: "message", role, messageId, text });
      }
      this.boundary = this.entries.length;
      return;
    }
    const marker = resetMarker(update);
    if (marker) {
      // RESET-005: drop the current model call's messages and thoughts; keep the rest.
      const kept = this.entries.slice(this.boundary).filter((e) => e.kind !== "message");
      this.entries.splice(this.boundary, this.entries.length - this.boundary, ...kept, marker);
    }
    const last = this.lastMessage();
    if (last && last.role === role && last.messageId === messageId) {
      last.text += text;
    } else if (text) {
      this.entries.push({ kind: "message", role, messageId, text });
    }
  }

  private lastMessage(): MessageEntry | null {
    for (let i = this.entries.length - 1; i >= this.boundary; i--) {
      const entry = this.entries[i];
      if (entry.kind === "message") return entry;
    }
    return null;
  }

  private upsertToolCall(id: string, title?: string | null, status?: string | null): void {
    let entry = this.toolCalls.get(id);
    if (!entry) {
      entry = { kind: "tool_call", toolCallId: id, title: "", status: "pending" };
      this.toolCalls.set(id, entry);
      this.entries.push(entry);
    }
    if (title != null) entry.title = title;
    if (status != null) entry.status = status;
  }

  /** The conformance kit's view JSON. */
  view(): View {
    const messages: View["messages"] = [];
    const thoughts: string[] = [];
    const toolCalls: View["toolCalls"] = [];
    const retries: View["retries"] = [];
    for (const entry of this.entries) {
      if (entry.kind === "message" && entry.role === "thought") thoughts.push(entry.text);
      else if (entry.kind === "message") messages.push({ role: entry.role as "user" | "agent", text: entry.text });
      else if (entry.kind === "tool_call")
        toolCalls.push({ toolCallId: entry.toolCallId, title: entry.title, status: entry.status });
      else retries.push({ attempt: entry.attempt, reason: entry.reason });
    }
    return { messages, thoughts, toolCalls, permissionPrompts: [...this.permissionPrompts], retries };
  }

  /** Plain text for a terminal: one block per entry. */
  render(): string {
    return this.entries
      .map((e) => {
        if (e.kind === "message") return `${e.role.padEnd(8)} ${e.text}`;
        if (e.kind === "tool_call") return `tool     ${e.title} (${e.status})`;
        return e.reason === "gave_up"
          ? `retry    ✗ gave up after attempt ${e.attempt}`
          : `retry    ↻ retrying: attempt ${e.attempt ?? "?"} after ${e.reason ?? "a fault"}`;
      })
      .join("\n");
  }
}
