# excerpt of 2U1/Qwen2-VL-Finetune src/train/train_dpo.py @6695161: the imports and the argument-parser lines, verbatim (lines 1-13, 74-77)
import os
import torch
from peft import LoraConfig, get_peft_model
import ast
from transformers import AutoProcessor, BitsAndBytesConfig, Qwen2VLForConditionalGeneration, HfArgumentParser, Qwen2_5_VLForConditionalGeneration
from src.trainer import QwenDPOTrainer
from src.dataset import make_dpo_data_module
from src.params import DataArguments, ModelArguments, DPOArguments
from train.train_utils import get_peft_state_maybe_zero_3, get_peft_state_non_lora_maybe_zero_3, safe_save_model_for_hf_trainer
import pathlib
from liger_kernel.transformers import apply_liger_kernel_to_qwen2_vl, apply_liger_kernel_to_qwen2_5_vl
from monkey_patch_forward import replace_qwen2_5_with_mixed_modality_forward, replace_qwen_2_with_mixed_modality_forward
from monkey_patch_vision import replace_qwen2_5_vision
    parser = HfArgumentParser(
        (ModelArguments, DataArguments, DPOArguments))
    
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
