# Excerpt of open_instruct/dpo_tune_cache.py (allenai/open-instruct): the argument parser that reads the YAML config
if __name__ == "__main__":
    parser = ArgumentParserPlus((dpo_utils.DPOExperimentConfig, TokenizerConfig))
    args, tc = parser.parse_args_into_dataclasses()
