# excerpt of Azure/torchtune-azureml scripts/launcher_single_kd.py: the Jinja2 rendering of the YAML templates and the tune run commands (verbatim lines, in order)
import jinja2
    full_command = f"tune run {args.tune_recipe} --config {args.tune_finetune_yaml}"
    full_command = f"tune run eleuther_eval --config {args.tune_eval_yaml}"
    full_command = f"tune run quantize --config {args.tune_quant_yaml}"
        "--tune_finetune_yaml", type=str, default="knowledge_distillation_qwen2.yaml"
    parser.add_argument("--tune_eval_yaml", type=str, default="evaluation_qwen2.yaml")
    parser.add_argument("--tune_quant_yaml", type=str, default="quant_qwen2.yaml")
        "--tune_recipe", type=str, default="knowledge_distillation_single_device"
    jinja_env = jinja2.Environment()
    template = jinja_env.from_string(Path(args.tune_finetune_yaml).open().read())
    Path(args.tune_finetune_yaml).open("w").write(
        template.render(
            log_dir=args.log_dir,
            teacher_model_dir=args.teacher_model_dir,
            student_model_dir=args.student_model_dir,
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
