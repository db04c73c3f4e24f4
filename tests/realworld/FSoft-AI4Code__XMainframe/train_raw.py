# excerpt of FSoft-AI4Code/XMainframe train_raw.py @8010333: the imports and the argument-parser lines, verbatim (lines 20-59, blank lines left out)
import logging
import random
import sys
import datetime
import pandas as pd
import datasets
import torch
import transformers
from transformers import set_seed, DataCollatorForLanguageModeling,AutoModelForCausalLM
from datasets import load_dataset, Dataset, concatenate_datasets
# import sys
# sys.path.append('./alignment-handbook/src')
from accelerate import Accelerator
from src.alignment import (
    DataArguments,
    H4ArgumentParser,
    ModelArguments,
    SFTConfig,
    # apply_chat_template,
    # get_datasets,
    get_checkpoint,
    get_kbit_device_map,
    get_peft_config,
    get_quantization_config,
    # get_tokenizer,
)
from trl import SFTTrainer,setup_chat_format
from src.data import get_datasets, apply_chat_template
from src.model.tokenizer import get_tokenizer, get_tokenizer_phi2, get_tokenizer_qwen15, get_tokenizer_code_llama
# import deepspeed
# from deepspeed.ops.op_builder import builder
logger = logging.getLogger(__name__)
def main():
    parser = H4ArgumentParser((ModelArguments, DataArguments, SFTConfig))
