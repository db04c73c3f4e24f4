# excerpt of rhymes-ai/Aria aria/train.py @9b25fec: the trl imports, the argument-parser line and the train call, verbatim (lines 24-33, 213, 246)
from trl import (
    SFTConfig,
    SFTTrainer,
    get_kbit_device_map,
    get_peft_config,
    get_quantization_config,
)
from trl.commands.cli_utils import TrlParser

from aria.config import AriaModelConfig, AriaSFTScriptArguments
    parser = TrlParser((AriaSFTScriptArguments, SFTConfig, AriaModelConfig))
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
