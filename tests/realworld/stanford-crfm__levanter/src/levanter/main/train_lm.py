# excerpt of stanford-crfm/levanter src/levanter/main/train_lm.py @9263f81: the config dataclass header and the draccus entry point, verbatim
class TrainLmConfig:
    data: Union[SingleDatasetLMConfig, LMMixtureDatasetConfig] = field(default_factory=UrlSingleDatasetLMConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    model: LmConfig = field(default_factory=LlamaConfig)
    optimizer: OptimizerConfig = field(default_factory=AdamConfig)
def main(config: TrainLmConfig):
    levanter.config.main(main)()
