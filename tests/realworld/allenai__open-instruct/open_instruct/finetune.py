# Excerpt of open_instruct/finetune.py (allenai/open-instruct): the argument parser that reads the YAML config (open-instruct's own ArgumentParserPlus over FlatArguments, not TrainingArguments)
if __name__ == "__main__":
    parser = ArgumentParserPlus((FlatArguments, TokenizerConfig))
    args, tc = parser.parse_args_into_dataclasses()
