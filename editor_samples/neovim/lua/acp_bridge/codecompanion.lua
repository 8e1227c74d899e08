-- acp-bridge for CodeCompanion.nvim (Neovim >= 0.11), with reset-aware streaming.
--
--   require("acp_bridge.codecompanion").setup()           -- adapter + reset handling
--   require("acp_bridge.codecompanion").honour_reset()    -- reset handling only, any ACP agent
--
-- CodeCompanion's ACP chat is append-only: when a model stream breaks and the agent retries,
-- the abandoned attempt's partial text stays and the retried text is glued to it ("...in the
-- middle of a woThe stream broke..."). ACP agents that retry mark the first chunk of the new
-- attempt with `_meta.reset = true` (acp-bridge's spec/reset-extension.md). `honour_reset`
-- makes the chat discard what the current model call wrote since it began (the prompt, or the
-- last tool call), in the buffer and in the reply CodeCompanion keeps as history (EDITOR-002
-- to EDITOR-005), and makes a restored session (`/resume`, ACP `session/load`) keep user
-- prompts with different `messageId`s apart (EDITOR-012). It patches CodeCompanion as it is;
-- the README beside this file describes the upstream change that would make it unnecessary.
-- SPDX-License-Identifier: Apache-2.0

local M = {}

M.command = { "acp-bridge-agent" }

---@type table<integer, table> ACP chat handler of each chat buffer with a prompt in flight
local handlers = setmetatable({}, { __mode = "v" })

---The chat buffer's text and renderer state where the current model call began.
local function mark(handler)
  local chat = handler.chat
  if not vim.api.nvim_buf_is_valid(chat.bufnr) then
    return
  end
  handler._acp_bridge_boundary = {
    lines = vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false),
    output = #handler.output,
    reasoning = #handler.reasoning,
    builder = vim.deepcopy(chat.builder.state),
    last_role = chat._last_role,
    -- A list mirroring what the chat rendered (`chat.acp_bridge_rendered`, kept by tools such
    -- as the conformance client) is cut back with the buffer.
    rendered = chat.acp_bridge_rendered and #chat.acp_bridge_rendered,
  }
end

local function truncate(list, length)
  for i = #list, length + 1, -1 do
    list[i] = nil
  end
end

---Put the buffer back as it was at the boundary, rewriting only the lines that changed (so
---marks and icons of earlier lines stay), and forget the discarded reply text.
local function discard(handler)
  local boundary = handler._acp_bridge_boundary
  local chat = handler.chat
  if not boundary or not vim.api.nvim_buf_is_valid(chat.bufnr) then
    return
  end
  local now = vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false)
  local first = 1
  while first <= #boundary.lines and first <= #now and boundary.lines[first] == now[first] do
    first = first + 1
  end
  chat.ui:unlock_buf()
  vim.api.nvim_buf_set_lines(chat.bufnr, first - 1, -1, false, vim.list_slice(boundary.lines, first))
  truncate(handler.output, boundary.output)
  truncate(handler.reasoning, boundary.reasoning)
  if boundary.rendered and chat.acp_bridge_rendered then
    truncate(chat.acp_bridge_rendered, boundary.rendered)
  end
  chat.builder.state = vim.deepcopy(boundary.builder)
  chat._last_role = boundary.last_role
  if chat._last_role ~= require("codecompanion.config").constants.USER_ROLE then
    chat.ui:lock_buf()
  end
end

---Tell the user the agent retried (EDITOR-008); the notes are kept on the chat.
local function note_retry(handler, meta)
  local chat = handler.chat
  chat.acp_bridge_retries = chat.acp_bridge_retries or {}
  table.insert(chat.acp_bridge_retries, { attempt = meta.attempt, reason = meta.reason })
  local text = meta.reason == "gave_up" and "the agent stopped retrying"
    or ("retrying" .. (meta.attempt and (" (attempt " .. tostring(meta.attempt) .. ")") or "")
      .. (meta.reason and (": " .. tostring(meta.reason)) or ""))
  vim.notify("CodeCompanion: " .. text, vim.log.levels.INFO)
end

local function is_reset(update)
  return update.sessionUpdate == "agent_message_chunk"
    and type(update._meta) == "table"
    and update._meta.reset == true
end

---Split a restored session's updates into prompts and replies, one per `messageId`.
local function restore_session(chat, updates)
  local config = require("codecompanion.config")
  local extract_text = require("codecompanion.acp.prompt_builder").extract_text
  chat:clear()
  local run = { kind = nil, id = nil, parts = {} }
  local function flush()
    if #run.parts > 0 then
      local text = table.concat(run.parts)
      if run.kind == "user" then
        chat:add_buf_message({ role = config.constants.USER_ROLE, content = text }, { force_role = true })
      else
        chat:add_buf_message(
          { role = config.constants.LLM_ROLE, content = text },
          { type = chat.MESSAGE_TYPES.LLM_MESSAGE }
        )
      end
    end
    run = { kind = nil, id = nil, parts = {} }
  end
  for _, update in ipairs(updates) do
    local kind = update.sessionUpdate
    local role = (kind == "user_message_chunk" and "user") or (kind == "agent_message_chunk" and "llm") or nil
    if role then
      if is_reset(update) then
        run.parts = {}
      elseif run.kind ~= role or (role == "user" and update.messageId ~= run.id) then
        flush()
      end
      run.kind, run.id = role, update.messageId
      local text = extract_text(update.content)
      if text and text ~= "" then
        table.insert(run.parts, text)
      end
    elseif kind == "tool_call" or kind == "tool_call_update" then
      flush()
    end
  end
  flush()
  chat:ready_for_input()
end

local installed = false

---Make CodeCompanion's ACP chat honour `_meta.reset` and `messageId` (idempotent).
function M.honour_reset()
  if installed then
    return
  end
  installed = true
  local Handler = require("codecompanion.interactions.chat.acp.handler")
  local PromptBuilder = require("codecompanion.acp.prompt_builder")
  local render = require("codecompanion.interactions.chat.acp.render")

  local send = Handler.create_and_send_prompt
  Handler.create_and_send_prompt = function(self, payload)
    handlers[self.chat.bufnr] = self
    mark(self) -- a prompt starts the first model call
    return send(self, payload)
  end

  local tool_call = Handler.process_tool_call
  Handler.process_tool_call = function(self, call)
    local result = tool_call(self, call)
    mark(self) -- a tool call closes a model call: what came before it is kept
    return result
  end

  local handle_update = PromptBuilder.handle_session_update
  PromptBuilder.handle_session_update = function(self, update)
    if is_reset(update) then
      local handler = handlers[self.options and self.options.bufnr]
      if handler then
        discard(handler)
        note_retry(handler, update._meta)
      end
    end
    return handle_update(self, update)
  end

  render.restore_session = restore_session
end

---The CodeCompanion ACP adapter that launches acp-bridge (`M.command`).
function M.adapter()
  return require("codecompanion.adapters").extend("goose", {
    name = "acp_bridge",
    formatted_name = "acp-bridge",
    commands = { default = M.command },
  })
end

---Register the adapter as `acp_bridge`, make it the chat's default and honour resets.
---@param opts? { command?: string[], codecompanion?: table } extra CodeCompanion settings
function M.setup(opts)
  opts = opts or {}
  M.command = opts.command or M.command
  local settings = vim.tbl_deep_extend("force", {
    adapters = { acp = { acp_bridge = M.adapter } },
    interactions = { chat = { adapter = "acp_bridge" } },
  }, opts.codecompanion or {})
  require("codecompanion").setup(settings)
  M.honour_reset()
end

return M
