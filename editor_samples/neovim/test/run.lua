-- Headless tests: the real CodeCompanion.nvim chat driving the real acp-bridge.
--
--   ACP_BRIDGE_TEST_COMMAND="python -m acp_bridge" CODECOMPANION=... PLENARY=... \
--     nvim --headless -u NONE -c "luafile editor_samples/neovim/test/run.lua"
--
-- Each test opens a chat on acp-bridge's scripted model (which breaks streams on purpose), sends
-- a slash command as a user would, waits for the turn to end and reads the chat buffer: what
-- the user sees. The first tests run on CodeCompanion as it is (they document its defects); then
-- `honour_reset()` is installed and the same scenarios must show each answer once.
-- Prints one TAP line per test and exits non-zero when any test failed.

local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p"):match("(.*)/test/run.lua$")
-- Any error before the tests run must end Neovim, not leave it waiting.
local TIMEOUT = 60000 -- ms for any one wait: CI machines may be slow
local bridge, workspace, state
local set_up, problem = pcall(function()
  vim.opt.rtp:prepend(assert(os.getenv("PLENARY"), "set PLENARY to plenary.nvim's folder"))
  vim.opt.rtp:prepend(assert(os.getenv("CODECOMPANION"), "set CODECOMPANION to codecompanion.nvim's folder"))
  vim.opt.rtp:prepend(here)
  vim.opt.swapfile = false

  local root = vim.fn.tempname()
  workspace, state = root .. "/work", root .. "/state"
  vim.fn.mkdir(workspace, "p")
  vim.fn.mkdir(state, "p")
  vim.fn.writefile({ "# A project" }, workspace .. "/README.md")
  vim.fn.writefile({
    vim.json.encode({
      name = "silent",
      description = "A model that answers nothing",
      calls = { { attempts = { {
        { usage = { input_tokens = 1, output_tokens = 0 } },
        { finish = "stop" },
      } } } },
    }),
  }, state .. "/silent.json")
  vim.cmd.cd(workspace)
  vim.env.ACP_BRIDGE_STATE_DIR = state

  bridge = require("acp_bridge.codecompanion")
  local command = vim.split(assert(os.getenv("ACP_BRIDGE_TEST_COMMAND"), "set ACP_BRIDGE_TEST_COMMAND"), " ")
  vim.list_extend(command, { "--script", state .. "/silent.json" })
  require("codecompanion").setup({
    adapters = { acp = { acp_bridge = bridge.adapter } },
    interactions = { chat = { adapter = "acp_bridge" } },
    display = { chat = { show_reasoning = true } },
    opts = { log_level = "ERROR" },
  })
  bridge.command = command
end)
if not set_up then
  print("Bail out! " .. tostring(problem))
  io.stdout:flush()
  vim.cmd("cquit 100")
end

local function wait(what, predicate)
  if not vim.wait(TIMEOUT, predicate, 20) then
    error("timed out waiting for " .. what, 0)
  end
end

local function open_chat()
  local chat = require("codecompanion").chat()
  wait("the session to start", function()
    return chat.acp_connection ~= nil and chat.acp_connection.session_id ~= nil
  end)
  return chat
end

local function prompt(chat, text)
  chat:add_buf_message({ role = "user", content = text })
  chat:submit()
  wait("the turn of " .. text .. " to end", function()
    return chat.current_request == nil
  end)
end

local function screen(chat)
  return table.concat(vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false), "\n")
end

local function count(haystack, needle)
  local n, start = 0, 1
  while true do
    local at = haystack:find(needle, start, true)
    if not at then
      return n
    end
    n, start = n + 1, at + #needle
  end
end

local function expect(condition, message, text)
  if not condition then
    error(message .. "\n--- chat buffer ---\n" .. (text or ""), 0)
  end
end

---Records a session as a plain ACP client: a prompt answered with nothing, then another.
---(A CodeCompanion chat cannot send a second prompt after an empty answer: it keeps the next
---prompt in the same user section, so the session is made over the wire.) Returns its id.
local function record_session()
  local lines, buffered = {}, ""
  local agent = vim.system(bridge.command, {
    stdin = true,
    cwd = workspace,
    stdout = function(_, data)
      buffered = buffered .. (data or "")
      for line in buffered:gmatch("([^\n]*)\n") do
        table.insert(lines, vim.json.decode(line))
      end
      buffered = buffered:match("[^\n]*$")
    end,
  })
  local next_id = 0
  local function request(method, params)
    next_id = next_id + 1
    local id = next_id
    agent:write(vim.json.encode({ jsonrpc = "2.0", id = id, method = method, params = params }) .. "\n")
    local answer
    wait(method .. " to be answered", function()
      for _, message in ipairs(lines) do
        if message.id == id and message.method == nil then
          answer = message
          return true
        end
      end
      return false
    end)
    assert(answer.result, method .. " failed: " .. vim.inspect(answer.error))
    return answer.result
  end
  request("initialize", { protocolVersion = 1, clientCapabilities = vim.empty_dict() })
  local session = request("session/new", { cwd = workspace, mcpServers = {} }).sessionId
  for _, text in ipairs({ "/silent", "/broken-mid-word" }) do
    request("session/prompt", { sessionId = session, prompt = { { type = "text", text = text } } })
  end
  agent:write(nil)
  agent:wait(TIMEOUT)
  return session
end

---A new chat loads the recorded session, as CodeCompanion's /resume does.
local function replay()
  local id = record_session()
  local chat = open_chat()
  local updates = {}
  assert(chat.acp_connection:load_session(id, {
    on_session_update = function(update)
      table.insert(updates, update)
    end,
  }), "session/load failed")
  require("codecompanion.interactions.chat.acp.render").restore_session(chat, updates)
  return screen(chat)
end

local RETRIED = "The stream broke in the middle of a word and the bridge retried it."

local tests = {
  { "plain: the abandoned partial is glued to the retried text (EDITOR-002 fails)", function()
    local chat = open_chat()
    prompt(chat, "/broken-mid-word")
    local text = screen(chat)
    expect(count(text, "middle of a woThe stream broke") == 1, "expected the glued texts", text)
  end },
  { "plain: a restored session glues consecutive user prompts (EDITOR-012 fails)", function()
    local text = replay()
    expect(text:find("/silent/broken-mid-word", 1, true) ~= nil, "expected glued prompts", text)
  end },
  { "install", function()
    bridge.honour_reset()
  end },
  { "EDITOR-002: a word broken mid-stream is shown once", function()
    local chat = open_chat()
    prompt(chat, "/broken-mid-word")
    local text = screen(chat)
    expect(count(text, RETRIED) == 1, "the retried sentence is not there once", text)
    expect(count(text, "middle of a wo") == 1, "the abandoned partial is still there", text)
  end },
  { "EDITOR-005: an abandoned thought is discarded", function()
    local chat = open_chat()
    prompt(chat, "/broken-thought")
    local text = screen(chat)
    expect(count(text, "Let me think about how to answer this briefly.") == 1, "no thought", text)
    expect(count(text, "how to ans") == 1, "the abandoned thought is still there", text)
    expect(count(text, "Here is a brief answer, thought through once.") == 1, "no answer", text)
  end },
  { "EDITOR-004: two resets in a row leave the third attempt only", function()
    local chat = open_chat()
    prompt(chat, "/broken-twice")
    local text = screen(chat)
    expect(count(text, "Third try: the answer is all here, and you see it once.") == 1, "no answer", text)
    expect(count(text, "First try") + count(text, "Second try") == 0, "abandoned text is there", text)
  end },
  { "EDITOR-003: a reset in the 2nd model call keeps the 1st call's text and tool call", function()
    local chat = open_chat()
    prompt(chat, "/tool-loop-break-second-call")
    local text = screen(chat)
    expect(count(text, "Let me read the README.") == 1, "the first model call's text is gone", text)
    expect(count(text, "README.md") >= 1, "the tool call is gone", text)
    expect(count(text, "The README describes the project. I read it once and answer once.") == 1, "no answer", text)
    expect(count(text, "The README descri\n") == 0, "the abandoned partial is there", text)
  end },
  { "EDITOR-012: a restored session keeps user prompts apart", function()
    local text = replay()
    expect(text:find("/silent/broken-mid-word", 1, true) == nil, "the prompts are glued", text)
    expect(count(text, RETRIED) == 1, "the replayed answer is not there once", text)
  end },
}

local failed = 0
print("1.." .. #tests)
for i, test in ipairs(tests) do
  local ok, err = pcall(test[2])
  if ok then
    print(("ok %d - %s"):format(i, test[1]))
  else
    failed = failed + 1
    print(("not ok %d - %s\n# %s"):format(i, test[1], tostring(err):gsub("\n", "\n# ")))
  end
end
io.stdout:flush()
vim.cmd((failed == 0) and "qa!" or ("cquit " .. failed))
