# Excerpt of src/open_r1/grpo.py (huggingface/open-r1): the argument parser that reads --config
if __name__ == "__main__":
    parser = TrlParser((GRPOScriptArguments, GRPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
