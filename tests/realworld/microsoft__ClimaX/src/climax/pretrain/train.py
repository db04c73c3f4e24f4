# excerpt of microsoft/ClimaX src/climax/pretrain/train.py: the LightningCLI construction (verbatim lines, in order)
import os
from pytorch_lightning.cli import LightningCLI
from climax.pretrain.datamodule import MultiSourceDataModule
from climax.pretrain.module import PretrainModule
    cli = LightningCLI(
        seed_everything_default=42,
        save_config_overwrite=True,
        run=False,
        parser_kwargs={"parser_mode": "omegaconf", "error_handler": None},
