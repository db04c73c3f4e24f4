# excerpt of argilla-io/notus v1/fine-tune/run_sft.py @5cd4912: the imports and the argument-parser lines, verbatim (lines 20-51)
import logging
import random
from typing import Any, Dict
import sys

import datasets
from datasets import DatasetDict
import torch
import transformers
from transformers import PreTrainedTokenizer, set_seed

from accelerate import Accelerator
from alignment import (
    DataArguments,
    H4ArgumentParser,
    ModelArguments,
    SFTConfig,
    get_datasets,
    get_kbit_device_map,
    get_peft_config,
    get_quantization_config,
    get_tokenizer,
)
from trl import SFTTrainer


logger = logging.getLogger(__name__)


def main():
    parser = H4ArgumentParser((ModelArguments, DataArguments, SFTConfig))
    model_args, data_args, training_args = parser.parse()
