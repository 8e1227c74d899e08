;;; acp-bridge-conformance-client.el --- agent-shell as a client graded by `acp-bridge-agent conformance grade-client'  -*- lexical-binding: t; -*-

;; A headless agent-shell for the conformance kit (spec/editor-conformance.md, section 6.4):
;;
;;   acp-bridge-agent conformance grade-client -- emacs --batch -Q -L ACP.EL -L SHELL-MAKER \
;;     -L AGENT-SHELL -L editor_samples/emacs -l editor_samples/emacs/test/acp-bridge-conformance-client.el
;;
;; It starts a real agent-shell on the scenario agent (ACP_CONFORMANCE_AGENT), sends the
;; scenario's prompt (ACP_CONFORMANCE_PROMPT) as a user would, allows each permission prompt
;; once, and when the turn has ended writes what the shell buffer shows as the kit's view JSON
;; (ACP_CONFORMANCE_VIEW): the agent messages, thoughts and tool calls agent-shell rendered,
;; read back from its fragments in buffer order. ACP_BRIDGE_RESET_MODE=1 turns
;; `acp-bridge-agent-shell-reset-mode' on; otherwise agent-shell is graded as it is.

;;; Code:

(require 'json)
(require 'subr-x)
(require 'acp-bridge-agent-shell)

(defconst acp-bridge-conformance--timeout 120
  "Seconds the whole scenario may take.")

(defvar acp-bridge-conformance--permission-prompts nil
  "Titles of the permission prompts this client was asked, newest first.")

(defvar acp-bridge-conformance--tool-calls nil
  "Each tool call agent-shell stored, by id: its latest fields (agent-shell forgets them at turn end).")

(defun acp-bridge-conformance--remember-tool-call (state tool-call-id &rest _)
  "After `agent-shell--save-tool-call' (STATE, TOOL-CALL-ID): keep agent-shell's merged call."
  (setf (alist-get tool-call-id acp-bridge-conformance--tool-calls nil nil #'equal)
        (map-elt (map-elt state :tool-calls) tool-call-id)))

(advice-add 'agent-shell--save-tool-call :after #'acp-bridge-conformance--remember-tool-call)

(defun acp-bridge-conformance--env (name)
  "The value of the kit's environment variable ACP_CONFORMANCE_NAME."
  (or (getenv (concat "ACP_CONFORMANCE_" name))
      (error "ACP_CONFORMANCE_%s is not set: run this under `acp-bridge-agent conformance grade-client'"
             name)))

(defun acp-bridge-conformance--wait (what predicate)
  "Process output until PREDICATE holds; exit with an error naming WHAT on timeout."
  (let ((deadline (+ (float-time) acp-bridge-conformance--timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall predicate)
      (error "Timed out waiting for %s" what))))

(defun acp-bridge-conformance--allow-once (permission)
  "Answer PERMISSION with its allow-once option, remembering that it was asked."
  (push (map-elt (map-elt permission :tool-call) :title) acp-bridge-conformance--permission-prompts)
  (funcall (map-elt permission :respond)
           (map-elt (seq-find (lambda (option) (equal (map-elt option :kind) "allow_once"))
                              (map-elt permission :options))
                    :option-id))
  t)

(defun acp-bridge-conformance--fragments ()
  "The rendered fragments of the current buffer, in order: (QUALIFIED-ID . BODY) pairs.
A qualified id is the fragment's namespace, a dash and its block id."
  (let ((seen (make-hash-table :test #'equal))
        (fragments nil))
    (save-excursion
      (goto-char (point-min))
      (let (match)
        (while (setq match (text-property-search-forward 'agent-shell-ui-state nil nil))
          (let* ((state (prop-match-value match))
                 (id (map-elt state :qualified-id)))
            (when (and id (not (gethash id seen)))
              (puthash id t seen)
              (push (cons id (acp-bridge-conformance--body id))
                    fragments))))))
    (nreverse fragments)))

(defun acp-bridge-conformance--body (qualified-id)
  "The body text of the fragment QUALIFIED-ID, as the buffer shows it."
  (let ((parts nil))
    (save-excursion
      (goto-char (point-min))
      (let (match)
        (while (setq match (text-property-search-forward 'agent-shell-ui-section 'body t))
          (let ((state (get-text-property (prop-match-beginning match) 'agent-shell-ui-state)))
            (when (equal (map-elt state :qualified-id) qualified-id)
              (push (buffer-substring-no-properties (prop-match-beginning match)
                                                    (prop-match-end match))
                    parts))))))
    (apply #'concat (nreverse parts))))

(defun acp-bridge-conformance--view (buffer prompt)
  "The kit's view JSON of what BUFFER shows after PROMPT."
  (with-current-buffer buffer
    (let ((messages (list `((role . "user") (text . ,prompt))))
          (thoughts nil)
          (tool-calls nil)
          (known acp-bridge-conformance--tool-calls))
      (dolist (fragment (acp-bridge-conformance--fragments))
        (let ((id (or (car fragment) "")) (body (cdr fragment)))
          (cond
           ((string-suffix-p "-agent_message_chunk" id)
            (unless (string-empty-p body)
              (push `((role . "agent") (text . ,body)) messages)))
           ((string-suffix-p "-agent_thought_chunk" id)
            (unless (string-empty-p body) (push body thoughts)))
           ((when-let* ((call (seq-find (lambda (entry) (string-suffix-p (concat "-" (car entry)) id))
                                        known)))
              (push `((toolCallId . ,(car call))
                      (title . ,(map-elt (cdr call) :title))
                      (status . ,(map-elt (cdr call) :status)))
                    tool-calls))))))
      `((messages . ,(vconcat (nreverse messages)))
        (thoughts . ,(vconcat (nreverse thoughts)))
        (toolCalls . ,(vconcat (nreverse tool-calls)))
        (permissionPrompts . ,(vconcat (mapcar (lambda (title) `((title . ,title)))
                                               (reverse acp-bridge-conformance--permission-prompts))))
        (retries . ,(vconcat (mapcar (lambda (note)
                                       `((attempt . ,(car note)) (reason . ,(cdr note))))
                                     (reverse acp-bridge-agent-shell--retry-notes))))))))

(defun acp-bridge-conformance-run ()
  "Run the scenario and write the view file."
  (let* ((acp-bridge-agent-shell-command
          (split-string-and-unquote (acp-bridge-conformance--env "AGENT")))
         (prompt (acp-bridge-conformance--env "PROMPT"))
         (default-directory (file-name-as-directory (acp-bridge-conformance--env "WORKSPACE")))
         (agent-shell-permission-responder-function #'acp-bridge-conformance--allow-once)
         (buffer nil))
    (setq agent-shell-session-strategy 'new)
    (acp-bridge-agent-shell-reset-mode (if (equal (getenv "ACP_BRIDGE_RESET_MODE") "1") 1 -1))
    (setq buffer (agent-shell-start :config (acp-bridge-agent-shell-make-config)))
    (acp-bridge-conformance--wait
     "the session to start"
     (lambda ()
       (with-current-buffer buffer
         (and (map-nested-elt agent-shell--state '(:session :id))
              (not (agent-shell--active-requests-p agent-shell--state))))))
    (with-current-buffer buffer
      (agent-shell-insert :text prompt :submit t :shell-buffer buffer))
    (acp-bridge-conformance--wait
     "the turn to end"
     (lambda ()
       (with-current-buffer buffer
         (not (agent-shell--active-requests-p agent-shell--state)))))
    (with-temp-file (acp-bridge-conformance--env "VIEW")
      (insert (json-encode (acp-bridge-conformance--view buffer prompt))))
    (kill-emacs 0)))

(condition-case problem
    (acp-bridge-conformance-run)
  (error
   (message "acp-bridge-conformance-client: %s" (error-message-string problem))
   (kill-emacs 1)))

(provide 'acp-bridge-conformance-client)
;;; acp-bridge-conformance-client.el ends here
