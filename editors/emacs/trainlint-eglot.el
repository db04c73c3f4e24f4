;;; trainlint-eglot.el --- Run the trainlint language server with Eglot  -*- lexical-binding: t; -*-

;; Copy into your init file, or `load' this file from it.  Eglot is built into Emacs 29+;
;; on Emacs 26-28 install it from GNU ELPA (M-x package-install RET eglot).  YAML needs
;; yaml-mode before Emacs 29 (M-x package-install RET yaml-mode, from NonGNU ELPA).
;; Requires the `trainlint' executable on `exec-path':
;;   pipx install "git+https://github.com/trainlint/trainlint"
;; To use the trainlint of a particular virtual environment, replace "trainlint" "server" below
;; by "/path/to/venv/bin/python" "-m" "trainlint" "server".

;;; Code:

;; Emacs 28 has no JSON major mode (.json files open in js-mode): with neither json-mode (MELPA)
;; nor Emacs 29's js-json-mode, use a minimal json-mode derived from js-mode, so that DeepSpeed JSON
;; gets the server too (and not every JavaScript buffer).  Installing json-mode replaces it.
(unless (or (fboundp 'json-mode) (fboundp 'js-json-mode))
  (define-derived-mode json-mode js-mode "JSON"
    "Stand-in JSON mode from trainlint-eglot.el (install json-mode for the real one).")
  (add-to-list 'auto-mode-alist '("\\.jsonc?\\'" . json-mode)))

(defvar trainlint-eglot-settings
  '(;; :gpu "H100-80GB"                  ; catalog name, alias, or a capacity such as "24GiB"
    ;; :numGpus 8                        ; total number of GPUs
    ;; :model "meta-llama/Llama-3.1-8B"  ; or a local directory with a config.json
    ;; :seqLen 4096
    ;; :select ["TL1"]                   ; lists are vectors, so they become JSON arrays
    ;; :ignore ["TL201"]
    ;; :failLevel "warning"
    )
  "Settings for the trainlint server, a plist; keys left out fall back to
[tool.trainlint] in pyproject.toml / trainlint.toml and then to the config file itself.")

(with-eval-after-load 'eglot
  ;; Eglot runs one server per major mode: the first matching entry wins, and
  ;; `add-to-list' puts this one first, ahead of yaml-language-server and the JSON server.
  (add-to-list 'eglot-server-programs
               `((yaml-mode yaml-ts-mode json-mode json-ts-mode js-json-mode jsonc-mode)
                 . ("trainlint" "server"
                    ;; A function, so that M-x eglot-reconnect picks up changed settings.
                    :initializationOptions ,(lambda (_server) trainlint-eglot-settings)))))

;; Answer workspace/configuration for the "trainlint" section (and send it with
;; workspace/didChangeConfiguration).  If you already set `eglot-workspace-configuration',
;; add a :trainlint entry to it instead; per project, set it in .dir-locals.el.
(setq-default eglot-workspace-configuration
              (lambda (_server) (list :trainlint trainlint-eglot-settings)))

;; Start the server in YAML and JSON buffers.
(dolist (hook '(yaml-mode-hook yaml-ts-mode-hook json-mode-hook json-ts-mode-hook
                js-json-mode-hook jsonc-mode-hook))
  (add-hook hook #'eglot-ensure))

;;; trainlint-eglot.el ends here
