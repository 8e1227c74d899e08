-- CodeCompanion.nvim as a client graded by `acp-bridge-agent conformance grade-client`
-- (spec/editor-conformance.md, section 6.4):
--
--   PLENARY=... CODECOMPANION=... acp-bridge-agent conformance grade-client -- \
--     nvim --headless -u NONE -c "luafile editor_samples/neovim/test/conformance_client.lua"
--
-- It opens a real CodeCompanion chat on the scenario agent (ACP_CONFORMANCE_AGENT), sends the
-- scenario's prompt (ACP_CONFORMANCE_PROMPT), allows each permission prompt once, and when the
-- turn has ended writes the kit's view JSON (ACP_CONFORMANCE_VIEW) of what the chat rendered:
-- the blocks CodeCompanion's ACP handler wrote (consecutive text chunks form one message), cut
-- back with the buffer when the sample discards an attempt. ACP_BRIDGE_RESET_MODE=1 installs
-- `require("acp_bridge.codecompanion").honour_reset()`; otherwise CodeCompanion is graded as it is.

local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p"):match("(.*)/test/[^/]+$")
local TIMEOUT = 120000

local function env(name)
  local value = os.getenv("ACP_CONFORMANCE_" .. name)
  assert(value, "ACP_CONFORMANCE_" .. name .. " is not set")
  return value
end

---Split a POSIX-shell-quoted command line (as Python's shlex.join writes it).
local function shell_split(line)
  local words, word, i, quote = {}, nil, 1, nil
  while i <= #line do
    local c = line:sub(i, i)
    if quote == "'" then
      if c == "'" then quote = nil else word = word .. c end
    elseif quote == '"' then
      if c == '"' then quote = nil elseif c == "\\" then i = i + 1; word = word .. line:sub(i, i) else word = word .. c end
    elseif c == "'" or c == '"' then
      quote, word = c, word or ""
    elseif c:match("%s") then
      if word then table.insert(words, word); word = nil end
    elseif c == "\\" then
      i = i + 1
      word = (word or "") .. line:sub(i, i)
    else
      word = (word or "") .. c
    end
    i = i + 1
  end
  if word then table.insert(words, word) end
  return words
end

local function run()
  vim.opt.rtp:prepend(assert(os.getenv("PLENARY"), "set PLENARY to plenary.nvim's folder"))
  vim.opt.rtp:prepend(assert(os.getenv("CODECOMPANION"), "set CODECOMPANION to codecompanion.nvim's folder"))
  vim.opt.rtp:prepend(here)
  vim.opt.swapfile = false
  vim.cmd.cd(env("WORKSPACE"))

  local bridge = require("acp_bridge.codecompanion")
  bridge.command = shell_split(env("AGENT"))
  require("codecompanion").setup({
    adapters = { acp = { acp_bridge = bridge.adapter } },
    interactions = { chat = { adapter = "acp_bridge" } },
    display = { chat = { show_reasoning = true } },
    opts = { log_level = "ERROR" },
  })
  if os.getenv("ACP_BRIDGE_RESET_MODE") == "1" then
    bridge.honour_reset()
  end

  -- What the chat renders, block by block (see the header).
  local Handler = require("codecompanion.interactions.chat.acp.handler")
  local function render(handler, entry)
    table.insert(handler.chat.acp_bridge_rendered, entry)
  end
  local message_chunk, thought_chunk = Handler.handle_message_chunk, Handler.handle_thought_chunk
  Handler.handle_message_chunk = function(self, content)
    render(self, { kind = "message", text = content })
    return message_chunk(self, content)
  end
  Handler.handle_thought_chunk = function(self, content)
    render(self, { kind = "thought", text = content })
    return thought_chunk(self, content)
  end
  local calls = {}
  local tool_call = Handler.process_tool_call
  Handler.process_tool_call = function(self, call)
    local known = calls[call.toolCallId] or { id = call.toolCallId }
    known.title = (call.title ~= nil and call.title ~= vim.NIL) and call.title or known.title
    known.status = (call.status ~= nil and call.status ~= vim.NIL) and call.status or known.status
    calls[call.toolCallId] = known
    if not known.shown and known.status ~= "pending" then -- CodeCompanion holds pending calls back
      known.shown = true
      render(self, { kind = "tool", call = known })
    end
    return tool_call(self, call)
  end
  local prompts = {}
  local permission = require("codecompanion.interactions.chat.acp.request_permission")
  permission.confirm = function(_, request)
    table.insert(prompts, { title = request.tool_call and request.tool_call.title or vim.NIL })
    for _, option in ipairs(request.options or {}) do
      if option.kind == "allow_once" then
        return request.respond(option.optionId, false)
      end
    end
    return request.respond(nil, true)
  end

  local chat = require("codecompanion").chat()
  chat.acp_bridge_rendered = {}
  assert(vim.wait(TIMEOUT, function()
    return chat.acp_connection ~= nil and chat.acp_connection.session_id ~= nil
  end, 20), "timed out waiting for the session to start")
  local prompt = env("PROMPT")
  chat:add_buf_message({ role = "user", content = prompt })
  chat:submit()
  assert(vim.wait(TIMEOUT, function()
    return chat.current_request == nil
  end, 20), "timed out waiting for the turn to end")

  local view = {
    messages = { { role = "user", text = prompt } },
    thoughts = {},
    toolCalls = {},
    permissionPrompts = prompts,
    retries = chat.acp_bridge_retries or {},
  }
  local last
  for _, entry in ipairs(chat.acp_bridge_rendered or {}) do
    if entry.kind == "tool" then
      table.insert(view.toolCalls, { toolCallId = entry.call.id, title = entry.call.title, status = entry.call.status })
    elseif entry.kind == last then
      local list = entry.kind == "message" and view.messages or view.thoughts
      if entry.kind == "message" then
        list[#list].text = list[#list].text .. entry.text
      else
        list[#list] = list[#list] .. entry.text
      end
    elseif entry.kind == "message" then
      table.insert(view.messages, { role = "agent", text = entry.text })
    else
      table.insert(view.thoughts, entry.text)
    end
    last = entry.kind
  end
  local encoded = vim.json.encode(view) -- empty lists encode as []
  vim.fn.writefile({ encoded }, env("VIEW"))
end

local ok, problem = pcall(run)
if not ok then
  io.stderr:write("conformance_client.lua: " .. tostring(problem) .. "\n")
  vim.cmd("cquit 1")
end
vim.cmd("qa!")
