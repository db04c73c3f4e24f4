# excerpt of modal-labs/llm-finetuning src/train.py: the launch commands run in the axolotl image, from the run folder that holds the config as ./config.yml (verbatim lines, in order)
    cmd = f"accelerate launch --num_processes {torch.cuda.device_count()} --num_machines 1 --mixed_precision no --dynamo_backend no -m axolotl.cli.train ./config.yml {'--wandb_mode disabled' if not ALLOW_WANDB else ''}"
        "python -W ignore:::torch.nn.modules.module -m axolotl.cli.preprocess ./config.yml",
    with open(f"{run_folder}/config.yml"):
    MERGE_CMD = f"accelerate launch --num_processes {torch.cuda.device_count()} --num_machines 1 --mixed_precision no --dynamo_backend no -m axolotl.cli.merge_lora ./config.yml --lora_model_dir='{output_dir}'"
        open(f"{run_folder}/config.yml", "w") as config_file,
