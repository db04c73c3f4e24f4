# excerpt of 2U1/Qwen2-VL-Finetune src/train/train_grpo.py @6695161: the imports and the argument-parser lines, verbatim (lines 1-14, 77-80)
import os
import torch
from peft import LoraConfig
import ast
import pathlib
from transformers import AutoProcessor, BitsAndBytesConfig, Qwen2VLForConditionalGeneration, HfArgumentParser, Qwen2_5_VLForConditionalGeneration

from src.trainer import QwenGRPOTrainer
from src.dataset import make_grpo_data_module
from src.params import DataArguments, ModelArguments, GRPOArguments
from train.train_utils import get_peft_state_maybe_zero_3, get_peft_state_non_lora_maybe_zero_3, safe_save_model_for_hf_trainer
from monkey_patch_forward import replace_qwen2_5_with_mixed_modality_forward, replace_qwen_2_with_mixed_modality_forward
from monkey_patch_vision import replace_qwen2_5_vision
from src.utils import  load_reward_funcs
    parser = HfArgumentParser(
        (ModelArguments, DataArguments, GRPOArguments))
    
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
