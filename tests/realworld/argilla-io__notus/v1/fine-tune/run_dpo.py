# excerpt of argilla-io/notus v1/fine-tune/run_dpo.py @5cd4912: the imports and the argument-parser lines, verbatim (lines 20-52)
import logging
import re
import sys
from typing import Any, Dict

import torch
import transformers
from transformers import AutoModelForCausalLM, PreTrainedTokenizer, set_seed

from accelerate import Accelerator
from alignment import (
    DataArguments,
    DPOConfig,
    H4ArgumentParser,
    ModelArguments,
    get_datasets,
    get_kbit_device_map,
    get_peft_config,
    get_quantization_config,
    get_tokenizer,
    is_adapter_model,
)
from datasets import DatasetDict
from peft import PeftConfig, PeftModel
from trl import DPOTrainer


logger = logging.getLogger(__name__)


def main():
    parser = H4ArgumentParser((ModelArguments, DataArguments, DPOConfig))
    model_args, data_args, training_args = parser.parse()
