# excerpt of modal-labs/llm-finetuning src/common.py: the axolotl image the training runs in (verbatim lines, in order)
# Axolotl image hash corresponding to main-20240705-py3.11-cu121-2.3.0
AXOLOTL_REGISTRY_SHA = (
    modal.Image.from_registry(f"winglian/axolotl@sha256:{AXOLOTL_REGISTRY_SHA}")
