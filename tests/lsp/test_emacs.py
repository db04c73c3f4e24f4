"""A real editor: `emacs --batch` (Debian 12: Emacs 28.2 with `apt-get install emacs-nox elpa-eglot
elpa-yaml-mode`) loads editors/emacs/trainlint-eglot.el as a user's init file would, finds `trainlint` on
PATH, and drives the real `trainlint server` with Eglot: Flymake receives the diagnostics, the hover that
ElDoc would put in the echo area shows no markdown markup (Eglot without markdown-mode asks for plaintext and
gets it; with markdown-mode it gets markdown and hides the markup), a
quick fix is applied to the buffer, and a DeepSpeed JSON file gets the server in Emacs 28 without json-mode."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import DS_DUP, REPO, TRAIN_YAML

EMACS = shutil.which("emacs")
SNIPPET = REPO / "editors" / "emacs" / "trainlint-eglot.el"

DRIVER = r"""
(setq debug-on-error nil)
(require 'eglot)
(require 'yaml-mode nil t)
(when (equal (getenv "MARKDOWN_MODE") "1") (require 'markdown-mode))
(load (getenv "SNIPPET"))
(setq trainlint-eglot-settings '(:numGpus 8))
(defvar out nil)
(defun emit (fmt &rest args) (push (apply #'format fmt args) out))
(defun wait-for (pred secs)
  (let ((n 0) (limit (* secs 10)))
    (while (and (< n limit) (not (funcall pred)))
      (accept-process-output nil 0.1)
      ;; What a user's next command and the redisplay after it would run: Flymake starts deferred, on
      ;; post-command-hook, or on window-configuration-change-hook once the buffer is shown.
      (run-hooks 'post-command-hook 'window-configuration-change-hook)
      (setq n (1+ n)))
    (funcall pred)))
(defun codes ()
  (mapcar (lambda (d) (let ((data (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d)))))
                        (format "%s" (plist-get data :code))))
          (flymake-diagnostics)))
(condition-case err
    (progn
      (find-file (getenv "DOC"))
      (eglot-ensure)
      (run-hooks 'post-command-hook)  ; eglot-ensure connects after the current command
      (emit "mode=%s server=%s" major-mode (and (wait-for #'eglot-current-server 30) t))
      (emit "diagnostics=%s" (and (wait-for (lambda () (member "TL004" (codes))) 60) t))
      (emit "codes=%s" (string-join (sort (delete-dups (codes)) #'string<) ","))
      ;; The hover ElDoc shows in the echo area: what eglot-hover-eldoc-function hands to ElDoc.
      (goto-char (point-min))
      (search-forward "save_strategy")
      (goto-char (match-beginning 0))
      (let ((hover nil))
        (eglot-hover-eldoc-function (lambda (doc &rest _) (setq hover (or doc "")) t))
        (wait-for (lambda () hover) 30)
        ;; What the echo area shows: the characters without an `invisible' property (markdown-mode hides
        ;; the markup that way; the echo area's buffer-invisibility-spec is t).
        (let* ((raw (or hover "<none>"))
               (visible (apply #'concat (cl-loop for i below (length raw)
                                                 unless (get-text-property i 'invisible raw)
                                                 collect (string (aref raw i))))))
          (with-temp-file (getenv "HOVER") (insert visible))
          (with-temp-file (concat (getenv "HOVER") ".raw") (insert (substring-no-properties raw)))))
      ;; The quick fix, picked as M-x eglot-code-actions offers it (the preferred action first).
      (let* ((diag (seq-find (lambda (d) (equal (format "%s" (plist-get (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d))) :code)) "TL004"))
                             (flymake-diagnostics)))
             (actions (eglot-code-actions (flymake-diagnostic-beg diag) (flymake-diagnostic-end diag)))
             (chosen (or (seq-find (lambda (a) (eq (plist-get a :isPreferred) t)) actions) (car actions))))
        (dolist (a actions) (emit "action %s" (plist-get a :title)))
        (eglot--apply-workspace-edit (plist-get chosen :edit))
        (emit "line=%s" (save-excursion (goto-char (flymake-diagnostic-beg diag))
                                         (buffer-substring (line-beginning-position) (line-end-position)))))
      (emit "modified=%s" (buffer-modified-p))
      ;; DeepSpeed JSON in the same project.
      (find-file (getenv "JSON"))
      (eglot-ensure)
      (run-hooks 'post-command-hook)
      (emit "json-mode=%s server=%s" major-mode (and (wait-for #'eglot-current-server 30) t))
      (emit "json-diagnostics=%s" (and (wait-for (lambda () (codes)) 60) (string-join (codes) ",")))
      (eglot-shutdown (eglot-current-server)))
  (error (emit "error %S" err)))
(with-temp-file (getenv "OUT") (insert (string-join (reverse out) "\n")))
(kill-emacs 0)
"""


def _probe(*forms: str) -> bool:
    args = [EMACS, "--batch", "-q"]
    for form in forms:
        args += ["--eval", form]
    return subprocess.run(args, capture_output=True, text=True, timeout=60).returncode == 0


@pytest.mark.skipif(EMACS is None, reason="emacs not found on PATH (Debian: apt-get install -y emacs-nox elpa-eglot elpa-yaml-mode)")
@pytest.mark.parametrize("markdown_mode", [False, True], ids=["without-markdown-mode", "with-markdown-mode"])
def test_emacs_eglot_diagnostics_hover_and_quick_fix(tmp_path, markdown_mode):
    if not _probe("(require 'eglot)"):
        pytest.skip("eglot is not available to emacs --batch (Emacs 28: apt-get install elpa-eglot, or GNU ELPA)")
    if not _probe("(require 'yaml-mode)"):
        pytest.skip("yaml-mode is not available to emacs --batch (apt-get install elpa-yaml-mode, or NonGNU ELPA)")
    if markdown_mode and not _probe("(require 'markdown-mode)"):
        pytest.skip("markdown-mode is not available to emacs --batch (apt-get install elpa-markdown-mode)")
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()  # the project root, as Eglot's project.el finds it
    doc = root / "train.yaml"
    doc.write_text(TRAIN_YAML, encoding="utf-8")
    (root / "ds_zero2.json").write_text('{"zero_optimization": {"stage": 2}}\n', encoding="utf-8")
    json_doc = root / "ds_dup.json"
    json_doc.write_text(DS_DUP, encoding="utf-8")
    # `trainlint` on PATH, as `pipx install` leaves it: a shim that runs this checkout.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "trainlint").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trainlint "$@"\n', encoding="utf-8")
    (bin_dir / "trainlint").chmod(0o755)
    driver = tmp_path / "driver.el"
    driver.write_text(DRIVER, encoding="utf-8")
    out, hover = tmp_path / "out.txt", tmp_path / "hover.txt"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(REPO),
           "HOME": str(tmp_path), "SNIPPET": str(SNIPPET), "DOC": str(doc), "JSON": str(json_doc),
           "OUT": str(out), "HOVER": str(hover), "MARKDOWN_MODE": "1" if markdown_mode else "0"}
    proc = subprocess.run([EMACS, "--batch", "-q", "-l", str(driver)], cwd=root, env=env, capture_output=True,
                          text=True, timeout=240)
    assert out.is_file(), proc.stderr[-3000:]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert not any(line.startswith("error") for line in lines), (lines, proc.stderr[-3000:])
    assert "mode=yaml-mode server=t" in lines, lines
    assert "diagnostics=t" in lines, (lines, proc.stderr[-3000:])
    assert any(line.startswith("action ") and "disable TL004 on this line" in line for line in lines), lines
    assert 'line=save_strategy: "no"' in lines, lines
    assert "modified=t" in lines and doc.read_text(encoding="utf-8") == TRAIN_YAML, "the buffer changed, not the file"
    # The echo area's hover: the key's documentation, without markdown markup shown raw. Without markdown-mode
    # Eglot asks for plaintext and the server sends plain text; with it, markdown that markdown-mode renders.
    text = hover.read_text(encoding="utf-8")
    assert "save_strategy" in text and "Default" in text, text
    assert "**" not in text and "`" not in text, text
    raw = (tmp_path / "hover.txt.raw").read_text(encoding="utf-8")
    assert ("**" in raw) == markdown_mode, raw
    # Emacs 28 has no JSON mode: the snippet's stand-in json-mode gets the server and its diagnostics.
    json_line = next(line for line in lines if line.startswith("json-mode="))
    assert json_line.endswith("server=t"), lines
    assert any(line.startswith("json-diagnostics=") and "TL002" in line for line in lines), lines
