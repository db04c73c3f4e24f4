"""The catalogs: GPUs, models, model architectures, optimizers and the frameworks' JSON Schemas.

Facts live in data files (`data/`, and `schemas/` shipped as `trainlint/_schemas/`); the modules read them
once, on first use. `architecture` is the model as data, `hf_config` builds it from a `config.json`,
`models` finds configs (catalog, local folder, offline HF cache), `gpus` resolves GPU names, `dialects` reads
`schemas/dialects.json` (the parsers of HF-style files: LLaMA-Factory, TrlParser, axolotl, ... and their keys).
May import: nothing of trainlint but `catalog` itself (no I/O beyond its data files and local model folders).
"""
