# excerpt of fw-ai/cookbook old_cookbook/recipes/tune/instruct_lora/finetune.py @2151051: the imports and the Hydra entry point, verbatim (lines 7-17, 38-39)
import json
import os

import hydra
from omegaconf import DictConfig, OmegaConf
from recipes.common.env import init_env, env
from recipes.common.format import convert_fireworks_conf
from recipes.common.hf_data import prepare_training_data
from recipes.common.peft import load_train_model, peft_state_dict
from recipes.common.tokenizer import load_tokenizer
from recipes.tune.common.trainer import train
@hydra.main(version_base=None, config_path="conf", config_name="summarize")
def _app(config: DictConfig) -> None:
