# excerpt of LianjiaTech/BELLE train/src/entry_point/rm_train.py @ 645084d36454: the imports, the argument parser, the RewardConfig and the trainer (lines 9, 13-24, 179-180, 270-271, 344-346), verbatim
from accelerate import Accelerator
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    BitsAndBytesConfig,
    HfArgumentParser,
    PreTrainedTokenizerBase,
    LlamaTokenizer,
)
from transformers.utils import PaddingStrategy
from transformers.trainer_utils import get_last_checkpoint
from trl import RewardConfig, RewardTrainer
from trl.trainer.utils import RewardDataCollatorWithPadding
    parser = HfArgumentParser(ScriptArguments)
    script_args = parser.parse_args_into_dataclasses()[0]
    # `TrainingArguments` must be instantiated before loading model!!!
    training_args = RewardConfig(
    # Define the Trainer
    model.config.use_cache = False
    trainer = RewardTrainer(
