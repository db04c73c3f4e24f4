# excerpt of huggingface/peft examples/causal_language_modeling/peft_lora_clm_accelerate_ds_zero3_offload.py @5d602fd: the imports, the Accelerator and the backward call, verbatim (lines 1-20, 110-111, 254)
import gc
import os
import sys
import threading

import psutil
import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    default_data_collator,
    get_linear_schedule_with_warmup,
    set_seed,
)

from peft import LoraConfig, TaskType, get_peft_model
def main():
    accelerator = Accelerator()
                accelerator.backward(loss)
