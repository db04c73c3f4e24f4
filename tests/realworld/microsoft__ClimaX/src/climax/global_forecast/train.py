# excerpt of microsoft/ClimaX src/climax/global_forecast/train.py: the LightningCLI construction (verbatim lines, in order)
import os
from climax.global_forecast.datamodule import GlobalForecastDataModule
from climax.global_forecast.module import GlobalForecastModule
from pytorch_lightning.cli import LightningCLI
    cli = LightningCLI(
        seed_everything_default=42,
        save_config_overwrite=True,
        run=False,
        parser_kwargs={"parser_mode": "omegaconf", "error_handler": None},
