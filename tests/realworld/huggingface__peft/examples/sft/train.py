# excerpt of huggingface/peft examples/sft/train.py @5d602fd: the imports and the argument-parser lines, verbatim (lines 6-7, 148-154)
from transformers import HfArgumentParser, set_seed
from trl import SFTConfig, SFTTrainer
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, SFTConfig))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        # If we pass only one argument to the script and it's the path to a json file,
        # let's parse it to get our arguments.
        model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()
