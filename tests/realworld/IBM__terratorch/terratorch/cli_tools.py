# excerpt of IBM/terratorch terratorch/cli_tools.py @85467a9: the LightningCLI subclass's extra arguments and its construction, verbatim (lines 497-503, 579-591)
class MyLightningCLI(LightningCLI):
    def add_arguments_to_parser(self, parser: LightningArgumentParser) -> None:
        parser.add_argument("--predict_output_dir", default=None)
        parser.add_argument("--output_file_prefix", default=None)
        parser.add_argument("--out_dtype", default="int16")
        parser.add_argument("--deploy_config_file", type=bool, default=True)
        parser.add_argument("--custom_modules_path", type=str, default=None)
    return MyLightningCLI(
        model_class=BaseTask,
        subclass_mode_model=True,
        subclass_mode_data=True,
        seed_everything_default=0,
        save_config_callback=StudioDeploySaveConfigCallback if run else None,
        save_config_kwargs={"overwrite": True},
        args=args,
        # save only state_dict as well as full state. Only state_dict will be used for exporting the model
        trainer_defaults={"callbacks": [CustomWriter(write_interval="batch")]},
        run=run,
        trainer_class=MyTrainer,
    )
