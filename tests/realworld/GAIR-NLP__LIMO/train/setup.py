# excerpt of GAIR-NLP/LIMO train/setup.py @2284c6a (a vendored LLaMA-Factory 0.9.2.dev0): the extras and the setup() name line, verbatim (lines 45-50, 82)
extra_require = {
    "torch": ["torch>=1.13.1"],
    "torch-npu": ["torch==2.1.0", "torch-npu==2.1.0.post3", "decorator"],
    "metrics": ["nltk", "jieba", "rouge-chinese"],
    "deepspeed": ["deepspeed>=0.10.0,<=0.16.2"],
    "liger-kernel": ["liger-kernel"],
        name="llamafactory",
