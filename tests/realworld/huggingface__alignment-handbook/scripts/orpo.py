# Excerpt of scripts/orpo.py (huggingface/alignment-handbook): its imports (lines 51-62) and the argument parser that reads --config
import logging
import os
import sys

import datasets
import torch
import transformers
from transformers import set_seed
from transformers.trainer_utils import get_last_checkpoint

from alignment import ORPOConfig, ScriptArguments, get_dataset, get_model, get_tokenizer
from trl import ModelConfig, ORPOTrainer, TrlParser, get_peft_config


if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, ORPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
