# excerpt of om-ai-lab/VLM-R1 src/open-r1-multimodal/src/open_r1/grpo_jsonl.py @90052f4: the trl imports and the argument-parser lines, verbatim
from trl import ModelConfig, ScriptArguments, TrlParser, get_peft_config
class GRPOScriptArguments(ScriptArguments):
    parser = TrlParser((GRPOScriptArguments, GRPOConfig, GRPOModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
