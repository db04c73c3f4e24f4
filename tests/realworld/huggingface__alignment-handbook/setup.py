# Excerpt of setup.py (huggingface/alignment-handbook): the pinned dependency table and install_requires, verbatim
_deps = [
    "accelerate>=1.9.0",
    "bitsandbytes>=0.46.1",
    "black>=24.4.2",
    "datasets>=4.0.0",
    "deepspeed>=0.17.2",
    "einops>=0.8.1",
    "evaluate==0.4.0",
    "flake8>=6.0.0",
    "hf-doc-builder>=0.4.0",
    "huggingface-hub>=0.33.4,<1.0",
    "isort>=5.12.0",
    "liger-kernel>=0.6.0",
    "ninja>=1.11.1",
    "numpy>=1.24.2",
    "packaging>=23.0",
    "parameterized>=0.9.0",
    "peft>=0.16.0",
    "protobuf<=3.20.2",  # Needed to avoid conflicts with `transformers`
    "pytest",
    "safetensors>=0.5.3",
    "sentencepiece>=0.2.0",
    "scipy",
    "tensorboard",
    "torch>=2.6.0",
    "transformers>=4.53.3",
    "trl>=0.19.1",
    "jinja2>=3.0.0",
    "tqdm>=4.64.1",
    "wandb",
]

# core dependencies shared across the whole project - keep this to a bare minimum :)
install_requires = [
    deps["accelerate"],
    deps["bitsandbytes"],
    deps["einops"],
    deps["evaluate"],
    deps["datasets"],
    deps["deepspeed"],
    deps["huggingface-hub"],
    deps["jinja2"],
    deps["liger-kernel"],
    deps["ninja"],
    deps["numpy"],
    deps["packaging"],  # utilities from PyPA to e.g., compare versions
    deps["peft"],
    deps["protobuf"],
    deps["safetensors"],
    deps["sentencepiece"],
    deps["scipy"],
    deps["tensorboard"],
    deps["tqdm"],  # progress bars in model download and training scripts
    deps["transformers"],
    deps["trl"],
    deps["wandb"],
]

