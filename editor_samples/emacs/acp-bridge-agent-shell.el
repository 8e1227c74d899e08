;;; acp-bridge-agent-shell.el --- acp-bridge for agent-shell, with reset-aware streaming  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "29.1") (agent-shell "0.63"))
;; Keywords: tools, ai
;; SPDX-License-Identifier: Apache-2.0

;;; Commentary:

;; Two things for agent-shell (https://github.com/xenodium/agent-shell) users:
;;
;; 1. `acp-bridge-agent-shell-start': a shell that launches acp-bridge
;;    (`acp-bridge-agent-shell-command').
;;
;; 2. `acp-bridge-agent-shell-reset-mode': a global minor mode that makes
;;    agent-shell honour the ACP reset flag (acp-bridge's
;;    spec/reset-extension.md, EDITOR-002..005) for ANY agent that sends it:
;;    when a model stream breaks and the agent retries, the first chunk of the
;;    new attempt carries `_meta.reset'; the mode then deletes the message and
;;    thought fragments the abandoned attempt put on screen since the current
;;    model call began (the prompt, or the last tool call), so the user reads
;;    the retried answer once.  It also keeps consecutive user prompts of a
;;    `session/load' replay apart when their `messageId's differ (EDITOR-012).
;;
;; agent-shell 0.63 starts a new fragment per `messageId' (so a retried
;; attempt shows as a second message) but does not read `_meta.reset'.  The
;; mode works on agent-shell as it is, through advice on two internal
;; functions; the README beside this file describes the upstream patch that
;; would make it unnecessary.

;;; Code:

(require 'cl-lib)
(require 'map)
(require 'agent-shell)

(defgroup acp-bridge-agent-shell nil
  "acp-bridge for agent-shell."
  :group 'agent-shell)

(defcustom acp-bridge-agent-shell-command '("acp-bridge-agent")
  "Command and arguments that start acp-bridge."
  :type '(repeat string))

(defcustom acp-bridge-agent-shell-environment nil
  "Extra environment variables (\"NAME=value\") for acp-bridge."
  :type '(repeat string))

;; Per shell buffer: what the current model call has put on screen.  A model
;; call starts when a prompt is sent and after every tool call (RESET-005).
(defvar-local acp-bridge-agent-shell--fragments nil
  "Qualified ids (NAMESPACE . BLOCK-ID) of this model call's message and thought fragments.")

(defvar-local acp-bridge-agent-shell--groups nil
  "Qualified ids of the activity groups this model call's thoughts opened.")

(defvar-local acp-bridge-agent-shell--groups-seen nil
  "Every activity group id seen in this shell: a group belongs to the call that opened it.")

(defvar-local acp-bridge-agent-shell--retry-notes nil
  "The retries shown in this shell, newest first: (ATTEMPT . REASON) of each reset marker.")

(defvar-local acp-bridge-agent-shell--last-user-message-id nil
  "The `messageId' of the last user message chunk rendered, to keep prompts apart.")

(defun acp-bridge-agent-shell--reset-chunk-p (update)
  "Non-nil when UPDATE is a chunk whose `_meta.reset' is true (RESET-005)."
  (and (equal (map-elt update 'sessionUpdate) "agent_message_chunk")
       (eq (map-nested-elt update '(_meta reset)) t)))

(defun acp-bridge-agent-shell--close-model-call ()
  "Forget the current model call's fragments: from here on they are kept."
  (setq acp-bridge-agent-shell--fragments nil
        acp-bridge-agent-shell--groups nil))

(defun acp-bridge-agent-shell--note-retry (state update)
  "Show that the agent retried (EDITOR-008), from the reset marker UPDATE, in STATE's buffer."
  (let ((attempt (map-nested-elt update '(_meta attempt)))
        (reason (map-nested-elt update '(_meta reason))))
    (push (cons attempt reason) acp-bridge-agent-shell--retry-notes)
    (agent-shell--update-fragment
     :state state
     :block-id (format "acp-bridge-retry-%d" (length acp-bridge-agent-shell--retry-notes))
     :label-left (propertize (if (equal reason "gave_up")
                                 "↻ The agent stopped retrying"
                               (format "↻ Retrying%s%s"
                                       (if attempt (format " (attempt %s)" attempt) "")
                                       (if reason (format ": %s" reason) "")))
                             'font-lock-face 'font-lock-comment-face)
     :navigation 'never)))

(defun acp-bridge-agent-shell--discard (state)
  "Delete the current model call's message and thought fragments in STATE's buffer."
  (dolist (fragment (append acp-bridge-agent-shell--fragments acp-bridge-agent-shell--groups))
    (when (equal (car fragment) (map-elt state :request-count))
      (agent-shell--delete-fragment :state state :block-id (cdr fragment))))
  (acp-bridge-agent-shell--close-model-call)
  ;; The next chunk opens a fresh message, as after a turn boundary.
  (map-put! state :last-entry-type nil)
  (map-put! state :last-agent-message-id nil))

(defun acp-bridge-agent-shell--on-notification (next &rest args)
  "Around `agent-shell--on-notification' (NEXT with ARGS): honour reset and prompt ids."
  (let* ((state (plist-get args :state))
         (notification (plist-get args :acp-notification))
         (update (map-nested-elt notification '(params update)))
         (kind (map-elt update 'sessionUpdate))
         (buffer (map-elt state :buffer)))
    (when (and (equal (map-elt notification 'method) "session/update")
               (buffer-live-p buffer)
               ;; While a load is buffered nothing is on screen yet; the
               ;; buffered notifications come through here again when shown.
               (not (map-elt state :pending-restore)))
      (with-current-buffer buffer
        (cond
         ;; A tool call closes the model call: its output is kept (EDITOR-003).
         ((member kind '("tool_call" "tool_call_update"))
          (acp-bridge-agent-shell--close-model-call))
         ((acp-bridge-agent-shell--reset-chunk-p update)
          (acp-bridge-agent-shell--discard state)
          (acp-bridge-agent-shell--note-retry state update))
         ((equal kind "user_message_chunk")
          (acp-bridge-agent-shell--close-model-call)
          (let ((id (map-elt update 'messageId)))
            (when (and id acp-bridge-agent-shell--last-user-message-id
                       (not (equal id acp-bridge-agent-shell--last-user-message-id)))
              ;; A different prompt: make agent-shell open a new user block.
              (map-put! state :last-entry-type nil))
            (setq acp-bridge-agent-shell--last-user-message-id id))))))
    (apply next args)))

(defun acp-bridge-agent-shell--on-update-fragment (&rest args)
  "After `agent-shell--update-fragment' with ARGS: remember this model call's chunks."
  (let ((state (plist-get args :state))
        (block-id (plist-get args :block-id))
        (group-id (plist-get args :group-id)))
    (when (and (stringp block-id)
               (null (plist-get args :namespace-id))
               (string-match-p "-agent_\\(?:message\\|thought\\)_chunk\\'" block-id)
               (buffer-live-p (map-elt state :buffer)))
      (with-current-buffer (map-elt state :buffer)
        (let ((namespace (map-elt state :request-count)))
          (cl-pushnew (cons namespace block-id) acp-bridge-agent-shell--fragments :test #'equal)
          (when (and group-id (not (member group-id acp-bridge-agent-shell--groups-seen)))
            (push group-id acp-bridge-agent-shell--groups-seen)
            (push (cons namespace group-id) acp-bridge-agent-shell--groups)))))
    (when (and group-id (buffer-live-p (map-elt state :buffer)))
      (with-current-buffer (map-elt state :buffer)
        (cl-pushnew group-id acp-bridge-agent-shell--groups-seen :test #'equal)))))

(defun acp-bridge-agent-shell--on-send-command (&rest _)
  "Before a prompt is sent: a new model call begins (EDITOR-003's first boundary)."
  (acp-bridge-agent-shell--close-model-call))

;;;###autoload
(define-minor-mode acp-bridge-agent-shell-reset-mode
  "Make agent-shell discard a retried attempt's partial output (ACP `_meta.reset')."
  :global t
  (if acp-bridge-agent-shell-reset-mode
      (progn
        (advice-add 'agent-shell--on-notification :around
                    #'acp-bridge-agent-shell--on-notification)
        (advice-add 'agent-shell--update-fragment :after
                    #'acp-bridge-agent-shell--on-update-fragment)
        (advice-add 'agent-shell--send-command :before
                    #'acp-bridge-agent-shell--on-send-command))
    (advice-remove 'agent-shell--on-notification #'acp-bridge-agent-shell--on-notification)
    (advice-remove 'agent-shell--update-fragment #'acp-bridge-agent-shell--on-update-fragment)
    (advice-remove 'agent-shell--send-command #'acp-bridge-agent-shell--on-send-command)))

(defun acp-bridge-agent-shell-make-config ()
  "An agent-shell configuration that launches acp-bridge."
  (agent-shell-make-agent-config
   :identifier 'acp-bridge
   :mode-line-name "acp-bridge"
   :buffer-name "acp-bridge"
   :shell-prompt "acp-bridge> "
   :shell-prompt-regexp "acp-bridge> "
   :client-maker (lambda (buffer)
                   (agent-shell--make-acp-client
                    :command (car acp-bridge-agent-shell-command)
                    :command-params (cdr acp-bridge-agent-shell-command)
                    :environment-variables acp-bridge-agent-shell-environment
                    :context-buffer buffer))
   :install-instructions "pipx install acp-bridge-agent (see acp-bridge's README)"))

;;;###autoload
(defun acp-bridge-agent-shell-start ()
  "Start an agent-shell talking to acp-bridge, with reset-aware streaming on."
  (interactive)
  (acp-bridge-agent-shell-reset-mode 1)
  (agent-shell-start :config (acp-bridge-agent-shell-make-config)))

(provide 'acp-bridge-agent-shell)
;;; acp-bridge-agent-shell.el ends here
