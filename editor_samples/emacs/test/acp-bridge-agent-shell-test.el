;;; acp-bridge-agent-shell-test.el --- ERT: the real agent-shell driving the real acp-bridge  -*- lexical-binding: t; -*-

;; Run (from the repository root, acp-bridge installed, Emacs >= 29.1):
;;   ACP_BRIDGE_TEST_COMMAND="python -m acp_bridge" emacs --batch -Q \
;;     -L ACP.EL -L SHELL-MAKER -L AGENT-SHELL -L editor_samples/emacs \
;;     -l editor_samples/emacs/test/acp-bridge-agent-shell-test.el -f ert-run-tests-batch-and-exit
;;
;; Each test starts agent-shell with acp-bridge's scripted model (which
;; breaks streams on purpose), sends a slash command as a user would, waits
;; for the turn to end, and reads the shell buffer: what the user sees.
;; Every test runs once without and once with `acp-bridge-agent-shell-reset-mode',
;; so the suite shows both agent-shell's own behaviour and the fix.

;;; Code:

(require 'ert)
(require 'subr-x)
(require 'acp-bridge-agent-shell)

(defconst acp-bridge-test--timeout 60
  "Seconds any one wait may take: the machine running CI may be slow.")

(defvar acp-bridge-test--root nil
  "A temporary folder of this test run: the workspace and the bridge's state.")

;; Read when the session starts, after `agent-shell-start' has returned: set, not let-bound.
(setq agent-shell-session-strategy 'new
      agent-shell-session-restore-verbosity 'full)

(defun acp-bridge-test--dir (name)
  "The folder NAME (\"work\" or \"state\") of this test run, created on first use."
  (unless acp-bridge-test--root
    (setq acp-bridge-test--root (make-temp-file "acp-bridge-ert-" t)))
  (let ((dir (file-name-as-directory (expand-file-name name acp-bridge-test--root))))
    (make-directory dir t)
    dir))

(defun acp-bridge-test--command ()
  "The bridge command under test, from ACP_BRIDGE_TEST_COMMAND."
  (split-string-and-unquote
   (or (getenv "ACP_BRIDGE_TEST_COMMAND") "acp-bridge-agent")))

(defun acp-bridge-test--wait (what predicate)
  "Process output until PREDICATE holds; fail naming WHAT after the timeout."
  (let ((deadline (+ (float-time) acp-bridge-test--timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall predicate)
      (ert-fail (format "timed out waiting for %s" what)))))

(defconst acp-bridge-test--silent-script
  "{\"name\": \"silent\", \"description\": \"A model that answers nothing\",
    \"calls\": [{\"attempts\": [[{\"usage\": {\"input_tokens\": 1, \"output_tokens\": 0}},
                                  {\"finish\": \"stop\"}]]}]}"
  "A script whose turn shows nothing: the next prompt follows it directly in a replay.")

(defun acp-bridge-test--script ()
  "The path of `acp-bridge-test--silent-script', written on first use."
  (let ((path (expand-file-name "silent.json" (acp-bridge-test--dir "state"))))
    (unless (file-exists-p path)
      (with-temp-file path (insert acp-bridge-test--silent-script)))
    path))

(defun acp-bridge-test--start (&optional session-id)
  "Start agent-shell on acp-bridge (resuming SESSION-ID when given); return its buffer."
  (let* ((acp-bridge-agent-shell-command
          (append (acp-bridge-test--command) (list "--script" (acp-bridge-test--script))))
         (acp-bridge-agent-shell-environment
          (list (concat "ACP_BRIDGE_STATE_DIR=" (acp-bridge-test--dir "state"))))
         (default-directory (acp-bridge-test--dir "work"))
         (buffer (agent-shell-start :config (acp-bridge-agent-shell-make-config)
                                    :session-id session-id)))
    (acp-bridge-test--wait
     "the session to start"
     (lambda ()
       (with-current-buffer buffer
         (and (map-nested-elt agent-shell--state '(:session :id))
              (not (agent-shell--active-requests-p agent-shell--state))
              ;; A load is done once agent-shell says it resumed (0.63's wording).
              (or (null session-id)
                  (string-match-p "Resuming session" (acp-bridge-test--screen buffer)))))))
    buffer))

(defun acp-bridge-test--prompt (buffer text)
  "Send TEXT from BUFFER as the user would and wait for the turn to end."
  (let ((agent-shell-permission-responder-function
         (lambda (permission)
           (funcall (map-elt permission :respond)
                    (map-elt (seq-find (lambda (option)
                                         (equal (map-elt option :kind) "allow_once"))
                                       (map-elt permission :options))
                             :option-id))
           t)))
    (with-current-buffer buffer
      (agent-shell-insert :text text :submit t :shell-buffer buffer))
    (acp-bridge-test--wait
     (format "the turn of %s to end" text)
     (lambda ()
       (with-current-buffer buffer
         (not (agent-shell--active-requests-p agent-shell--state)))))))

(defun acp-bridge-test--screen (buffer)
  "What BUFFER shows the user, as plain text."
  (with-current-buffer buffer
    (buffer-substring-no-properties (point-min) (point-max))))

(defun acp-bridge-test--count (needle haystack)
  "How many times NEEDLE occurs in HAYSTACK."
  (let ((count 0) (start 0) (case-fold-search nil))
    (while (string-match (regexp-quote needle) haystack start)
      (setq count (1+ count) start (match-end 0)))
    count))

(defmacro acp-bridge-test--with-shell (reset-mode buffer &rest body)
  "Run BODY with BUFFER bound to a fresh shell, RESET-MODE on or off."
  (declare (indent 2))
  `(let ((,buffer nil))
     (unwind-protect
         (progn
           (acp-bridge-agent-shell-reset-mode (if ,reset-mode 1 -1))
           (setq ,buffer (acp-bridge-test--start))
           ,@body)
       (acp-bridge-agent-shell-reset-mode -1)
       (when (buffer-live-p ,buffer)
         (let ((kill-buffer-query-functions nil))
           (kill-buffer ,buffer))))))

(defconst acp-bridge-test--retried-sentence
  "The stream broke in the middle of a word and the bridge retried it."
  "The retried answer of /broken-mid-word.")

(ert-deftest acp-bridge-agent-shell-plain-keeps-abandoned-partial ()
  "Without the mode, agent-shell 0.63 keeps the abandoned partial on screen.
This documents the defect the mode fixes (EDITOR-002)."
  (acp-bridge-test--with-shell nil buffer
    (acp-bridge-test--prompt buffer "/broken-mid-word")
    (let ((screen (acp-bridge-test--screen buffer)))
      (should (= 1 (acp-bridge-test--count acp-bridge-test--retried-sentence screen)))
      (should (string-match-p "in the middle of a wo\n" screen)))))

(ert-deftest acp-bridge-agent-shell-reset-discards-broken-word ()
  "EDITOR-002: the abandoned partial is gone; the retried answer shows once."
  (acp-bridge-test--with-shell t buffer
    (acp-bridge-test--prompt buffer "/broken-mid-word")
    (let ((screen (acp-bridge-test--screen buffer)))
      (should (= 1 (acp-bridge-test--count acp-bridge-test--retried-sentence screen)))
      (should (= 1 (acp-bridge-test--count "The stream broke in the middle of a wo" screen))))))

(ert-deftest acp-bridge-agent-shell-reset-discards-broken-thought ()
  "EDITOR-005: an abandoned thought is discarded: one thinking block remains."
  (acp-bridge-test--with-shell t buffer
    (acp-bridge-test--prompt buffer "/broken-thought")
    (let ((screen (acp-bridge-test--screen buffer)))
      (should (= 1 (acp-bridge-test--count "💡 Thinking" screen)))
      (should (= 1 (acp-bridge-test--count "Here is a brief answer, thought through once." screen)))))
  (acp-bridge-test--with-shell nil buffer
    (acp-bridge-test--prompt buffer "/broken-thought")
    (should (= 2 (acp-bridge-test--count "💡 Thinking" (acp-bridge-test--screen buffer))))))

(ert-deftest acp-bridge-agent-shell-reset-twice ()
  "EDITOR-004: two resets in a row leave only the third attempt's answer."
  (acp-bridge-test--with-shell t buffer
    (acp-bridge-test--prompt buffer "/broken-twice")
    (let ((screen (acp-bridge-test--screen buffer)))
      (should (= 1 (acp-bridge-test--count
                    "Third try: the answer is all here, and you see it once." screen)))
      (should (= 0 (acp-bridge-test--count "First try" screen)))
      (should (= 0 (acp-bridge-test--count "Second try" screen))))))

(ert-deftest acp-bridge-agent-shell-reset-in-second-model-call-keeps-first ()
  "EDITOR-003: a reset in the 2nd model call of a tool loop keeps the 1st call's text."
  (with-temp-file (expand-file-name "README.md" (acp-bridge-test--dir "work"))
    (insert "# A project\n"))
  (acp-bridge-test--with-shell t buffer
    (acp-bridge-test--prompt buffer "/tool-loop-break-second-call")
    (let ((screen (acp-bridge-test--screen buffer)))
      (should (= 1 (acp-bridge-test--count "Let me read the README." screen)))
      (should (= 1 (acp-bridge-test--count
                    "The README describes the project. I read it once and answer once." screen)))
      (should (= 0 (acp-bridge-test--count "The README descri\n" screen))))))

(defun acp-bridge-test--replay (reset-mode)
  "Two prompts, the first answered with nothing; then a full load, RESET-MODE on or off.
Returns the screen of the shell that loaded the session."
  (let (session-id)
    (acp-bridge-test--with-shell reset-mode buffer
      (acp-bridge-test--prompt buffer "/silent")
      (acp-bridge-test--prompt buffer "/broken-mid-word")
      (setq session-id (with-current-buffer buffer
                         (map-nested-elt agent-shell--state '(:session :id)))))
    (acp-bridge-agent-shell-reset-mode (if reset-mode 1 -1))
    (let ((buffer (acp-bridge-test--start session-id)))
      (unwind-protect
          (acp-bridge-test--screen buffer)
        (acp-bridge-agent-shell-reset-mode -1)
        (let ((kill-buffer-query-functions nil))
          (kill-buffer buffer))))))

(ert-deftest acp-bridge-agent-shell-plain-load-glues-prompts ()
  "Without the mode, agent-shell 0.63 glues consecutive user prompts of a load (EDITOR-012)."
  (let ((screen (acp-bridge-test--replay nil)))
    (should (string-match-p "/silent/broken-mid-word" screen))))

(ert-deftest acp-bridge-agent-shell-load-keeps-prompts-apart ()
  "EDITOR-012: a full session/load replay shows each user prompt as its own prompt,
and the replay holds the completed attempt only."
  (let ((screen (acp-bridge-test--replay t)))
    (should (string-match-p "acp-bridge> /silent\n" screen))
    (should (string-match-p "acp-bridge> /broken-mid-word" screen))
    (should (= 1 (acp-bridge-test--count acp-bridge-test--retried-sentence screen)))
    (should (= 0 (acp-bridge-test--count "in the middle of a wo\n" screen)))))

(provide 'acp-bridge-agent-shell-test)
;;; acp-bridge-agent-shell-test.el ends here
