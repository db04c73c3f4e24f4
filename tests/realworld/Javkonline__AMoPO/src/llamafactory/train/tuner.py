# excerpt of Javkonline/AMoPO src/llamafactory/train/tuner.py @d8caba0: run_exp's stage dispatch, verbatim (lines 47-78)
def run_exp(args: Optional[Dict[str, Any]] = None, callbacks: List["TrainerCallback"] = []) -> None:
    callbacks.append(LogCallback())
    model_args, data_args, training_args, finetuning_args, generating_args = get_train_args(args)

    if finetuning_args.stage == "pt":
        run_pt(model_args, data_args, training_args, finetuning_args, callbacks)
    elif finetuning_args.stage == "sft":
        run_sft(model_args, data_args, training_args, finetuning_args, generating_args, callbacks)
    elif finetuning_args.stage == "rm":
        run_rm(model_args, data_args, training_args, finetuning_args, callbacks)
    elif finetuning_args.stage == "ppo":
        run_ppo(model_args, data_args, training_args, finetuning_args, generating_args, callbacks)
    elif finetuning_args.stage == "dpo":
        run_dpo(model_args, data_args, training_args, finetuning_args, callbacks)
    elif finetuning_args.stage == "kto":
        run_kto(model_args, data_args, training_args, finetuning_args, callbacks)
    elif finetuning_args.stage == "amopo":
        run_amopo(model_args, data_args, training_args, finetuning_args, callbacks)
    elif finetuning_args.stage == "modpo":
        # reward_model_modpo = ArmoRMPipeline(finetuning_args.reward_model_modpo, trust_remote_code=True)
        # reward_model_modpo = AutoModelForSequenceClassification.from_pretrained(
        #     finetuning_args.reward_model_modpo,
        #     trust_remote_code=True,
        #     torch_dtype=torch.float16,
        # )
        # reward_tokenizer_modpo = AutoTokenizer.from_pretrained(
        #     finetuning_args.reward_model_modpo,
        #     # use_fast=True,
        # )
        run_modpo(model_args, data_args,None , None, training_args, finetuning_args, callbacks)
    else:
        raise ValueError("Unknown task: {}.".format(finetuning_args.stage))
