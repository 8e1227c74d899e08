"""A naive reducer adapter, written independently of acp_bridge.client: it honours
`messageId` (a new id starts a new message) but knows nothing of `_meta.reset`, as a v1
editor that never heard of the flag. The kit must fail it (EDITOR-002, -004, -005)."""

import json
import sys

messages, thoughts, tools, prompts = [], [], {}, []
last = None  # (kind, messageId) of the message being appended to
for line in sys.stdin:
    if not line.strip():
        continue
    item = json.loads(line)
    message, sender = item["message"], item["from"]
    method, params = message.get("method"), message.get("params") or {}
    if sender == "client" and method == "session/prompt":
        text = "".join(b.get("text", "") for b in params["prompt"] if b.get("type") == "text")
        messages.append({"role": "user", "text": text})
        last = None
    elif sender == "agent" and method == "session/request_permission":
        prompts.append({"title": params["toolCall"].get("title")})
    elif sender == "agent" and method == "session/update":
        update = params["update"]
        kind = update["sessionUpdate"]
        if kind in ("agent_message_chunk", "user_message_chunk", "agent_thought_chunk"):
            text = update["content"].get("text", "")
            key = (kind, update.get("messageId"))
            if key == last:
                target = thoughts if kind == "agent_thought_chunk" else messages
                if kind == "agent_thought_chunk":
                    target[-1] += text
                else:
                    target[-1]["text"] += text
            elif text:
                if kind == "agent_thought_chunk":
                    thoughts.append(text)
                else:
                    role = "user" if kind == "user_message_chunk" else "agent"
                    messages.append({"role": role, "text": text})
                last = key
        elif kind in ("tool_call", "tool_call_update"):
            entry = tools.setdefault(update["toolCallId"], {"title": "", "status": "pending"})
            for field in ("title", "status"):
                if update.get(field) is not None:
                    entry[field] = update[field]
            last = None
view = {
    "messages": messages,
    "thoughts": thoughts,
    "toolCalls": list(tools.values()),
    "permissionPrompts": prompts,
    "retries": [],
}
print(json.dumps(view))
