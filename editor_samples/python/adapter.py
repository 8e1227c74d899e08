"""The reference reducer, `acp_bridge.client`, as a conformance adapter (spec/editor-conformance.md
section 6.2): the wire on stdin as NDJSON, the view JSON on stdout.

    acp-bridge conformance grade-reducer -- python editor_samples/python/adapter.py

A Python plugin feeds its own reducer the same way: `PromptSent` when the user sends a
prompt, each `session/update`'s params, and `PermissionAsked` for each permission prompt.
"""

import json
import sys

from acp_bridge.client import MessageEntry, PermissionAsked, PromptSent, reduce


def events(lines):
    for line in lines:
        if not line.strip():
            continue
        item = json.loads(line)
        message = item["message"]
        method, params = message.get("method"), message.get("params")
        if item["from"] == "client" and method == "session/prompt":
            yield PromptSent("".join(b.get("text", "") for b in params["prompt"]))
        elif item["from"] == "agent" and method == "session/update":
            yield params
        elif item["from"] == "agent" and method == "session/request_permission":
            yield PermissionAsked(params)


def main():
    view = reduce(events(sys.stdin))
    print(
        json.dumps(
            {
                "messages": [
                    {"role": e.role, "text": e.text}
                    for e in view.entries
                    if isinstance(e, MessageEntry) and e.role != "thought"
                ],
                "thoughts": list(view.thoughts),
                "toolCalls": [{"title": t.title, "status": t.status} for t in view.tool_calls],
                "permissionPrompts": [{"title": p.title} for p in view.permission_prompts],
                "retries": [{"attempt": r.attempt, "reason": r.reason} for r in view.retries],
            },
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
