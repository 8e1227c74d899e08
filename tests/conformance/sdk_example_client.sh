#!/bin/sh
# The official Python SDK's example client (examples/client.py of the agent-client-protocol
# sdist, which the wheel does not ship), as a headless client for `grade-client --text`:
# fetched with pip from the registry on first use, fed the scenario's prompt on stdin. It
# prints each agent_message_chunk on its own "| Agent: " line; the text the user reads is
# those chunks joined, so the prefixes and line breaks are removed.
set -eu
version=0.12.1
cache="${TMPDIR:-/tmp}/acp-bridge-sdk-example-$version"
client="$cache/agent_client_protocol-$version/examples/client.py"
if [ ! -f "$client" ]; then
  mkdir -p "$cache"
  python -m pip download --quiet --no-deps --no-binary :all: -d "$cache" \
    "agent-client-protocol==$version" >&2
  tar -xzf "$cache/agent_client_protocol-$version.tar.gz" -C "$cache"
fi
# shellcheck disable=SC2086 # the agent command line is split on spaces, as the client expects
printf '%s\n' "$ACP_CONFORMANCE_PROMPT" | python "$client" $ACP_CONFORMANCE_AGENT \
  | sed -n 's/^.*| Agent: //p' | tr -d '\n'
