# excerpt of Azure/torchtune-azureml scripts/launcher_distributed.py: the Jinja2 rendering of the YAML templates and the tune run commands (verbatim lines, in order)
import jinja2
    if "single" in args.tune_recipe:
        full_command = f"tune run {args.tune_recipe} --config {args.tune_finetune_yaml}"
            print("Destroying current process group before launching tune run...")
                f"tune run --master-addr {MASTER_ADDR} --master-port {MASTER_PORT} --nnodes {NUM_NODES} --nproc_per_node {NUM_GPUS_PER_NODE} "
                f"{args.tune_recipe} "
                f"--config {args.tune_finetune_yaml}"
    full_command = f"tune run eleuther_eval --config {args.tune_eval_yaml}"
    full_command = f"tune run quantize --config {args.tune_quant_yaml}"
        "--tune_finetune_yaml", type=str, default="lora_finetune_phi3.yaml"
    parser.add_argument("--tune_eval_yaml", type=str, default="evaluation_phi3.yaml")
    parser.add_argument("--tune_quant_yaml", type=str, default="quant_phi3.yaml")
        "--tune_recipe", type=str, default="lora_finetune_single_device"
    jinja_env = jinja2.Environment()
    template = jinja_env.from_string(Path(args.tune_finetune_yaml).open().read())
    Path(args.tune_finetune_yaml).open("w").write(
        template.render(
            log_dir=args.log_dir,
            model_dir=args.model_dir,
            model_output_dir=args.model_output_dir,
    epoch = get_epoch(args.tune_finetune_yaml)
    template = jinja_env.from_string(Path(args.tune_eval_yaml).open().read())
    Path(args.tune_eval_yaml).open("w").write(
        template.render(
            model_dir=args.model_dir,
            model_output_dir=os.path.join(args.model_output_dir, f"epoch_{epoch}"),
    template = jinja_env.from_string(Path(args.tune_quant_yaml).open().read())
    Path(args.tune_quant_yaml).open("w").write(
        template.render(
            model_output_dir=os.path.join(args.model_output_dir, f"epoch_{epoch}")
