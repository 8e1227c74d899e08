-- acp-bridge as an ACP adapter of CodeCompanion.nvim (Neovim 0.11 or newer).
-- UNVERIFIED: not run here (no Neovim 0.11 on this machine). The shape follows CodeCompanion's
-- documentation for ACP adapters: extend a built-in ACP adapter that needs no authentication
-- (goose) and replace its name and command.
require("codecompanion").setup({
  adapters = {
    acp = {
      acp_bridge = function()
        return require("codecompanion.adapters").extend("goose", {
          name = "acp_bridge",
          formatted_name = "acp-bridge",
          commands = {
            default = { "acp-bridge" },
          },
        })
      end,
    },
  },
  interactions = {
    chat = { adapter = "acp_bridge" },
  },
})
