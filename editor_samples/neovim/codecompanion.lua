-- acp-bridge in CodeCompanion.nvim (Neovim 0.11 or newer), reset-aware.
-- Put editor_samples/neovim on your runtimepath (or copy lua/acp_bridge/ into your config's
-- lua/ folder), then call this from your init.lua. Tested headless against the real
-- CodeCompanion chat by tests/samples/test_samples_editor_plugins.py.
require("acp_bridge.codecompanion").setup({
  -- command = { "acp-bridge-agent", "--provider", "openai", "--model", "gpt-4.1" },
  codecompanion = {
    -- your other CodeCompanion settings
  },
})
