# Excerpt of scripts/dpo.py (huggingface/alignment-handbook): the argument parser that reads --config
if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, DPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
