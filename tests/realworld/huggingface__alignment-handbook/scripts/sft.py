# Excerpt of scripts/sft.py (huggingface/alignment-handbook): the argument parser that reads --config
if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
