# excerpt of CarperAI/trlx examples/ppo_sentiments.py @ 3340c2f3a56d: the imports and the trlx.train call (lines 3-13, 47-51), verbatim
import json
import os
import sys
from typing import List

import torch
from datasets import load_dataset
from transformers import pipeline

import trlx
from trlx.data.default_configs import TRLConfig, default_ppo_config
    trlx.train(
        reward_fn=reward_fn,
        prompts=prompts,
        eval_prompts=["I don't know much about Hungarian underground"] * 256,
        config=config,
