#!/bin/sh
# Talk to acp-bridge from a terminal through acpx, the headless ACP client from npm.
#
#   editor_samples/acpx/acp-bridge.sh "/hello there"
#   editor_samples/acpx/acp-bridge.sh /tool-call-broken-before-finish
#
# acpx launches the agent command below as an editor would, advertises file and terminal
# support (so the bridge's writes and commands go through acpx), approves each tool call once
# (--approve-all), prints the session as it streams and exits when the turn ends.
#
# ACPX        how to run acpx (default: npx --yes acpx@0.19.1; Node.js 20 or newer)
# ACP_BRIDGE  the agent command line (default: acp-bridge-agent, the installed console script),
#             e.g. ACP_BRIDGE="acp-bridge-agent --provider openai --model gpt-4.1-mini"
set -eu
ACPX=${ACPX:-"npx --yes acpx@0.19.1"}
ACP_BRIDGE=${ACP_BRIDGE:-acp-bridge-agent}
if [ "$#" -eq 0 ]; then
  set -- "/hello"
fi
# $ACPX is split into words on purpose (it may be "npx --yes acpx@...").
# shellcheck disable=SC2086
exec $ACPX --agent "$ACP_BRIDGE" --approve-all exec "$@"
