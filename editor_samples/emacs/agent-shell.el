;;; acp-bridge for agent-shell (Emacs), an ACP client built on `acp.el'.
;; UNVERIFIED: not run here (agent-shell is on no package registry this project can reach).
;; The shape follows agent-shell's own agent configurations: `agent-shell-make-agent-config'
;; with a :client-maker that calls `acp-make-client'.  Keyword names have changed between
;; agent-shell releases; check them against the version you have.

(require 'agent-shell)

(defun acp-bridge-agent-config ()
  "An agent-shell configuration that launches acp-bridge."
  (agent-shell-make-agent-config
   :identifier 'acp-bridge
   :mode-line-name "acp-bridge"
   :buffer-name "acp-bridge"
   :shell-prompt "acp-bridge> "
   :shell-prompt-regexp "acp-bridge> "
   :client-maker (lambda (buffer)
                   (acp-make-client :command "acp-bridge"
                                    :command-params '()
                                    :context-buffer buffer))))

(defun acp-bridge-shell ()
  "Start an agent-shell talking to acp-bridge."
  (interactive)
  (agent-shell-start :config (acp-bridge-agent-config)))
