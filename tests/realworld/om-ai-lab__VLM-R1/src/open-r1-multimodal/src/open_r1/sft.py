# excerpt of om-ai-lab/VLM-R1 src/open-r1-multimodal/src/open_r1/sft.py @90052f4: the trl imports, SFTScriptArguments and the argument-parser lines, verbatim
from trl import (
class SFTScriptArguments(ScriptArguments):
    image_root: str = field(default=None, metadata={"help": "The root directory of the image."})
    parser = TrlParser((SFTScriptArguments, SFTConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
