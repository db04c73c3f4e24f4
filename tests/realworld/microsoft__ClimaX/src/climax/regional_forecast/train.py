# excerpt of microsoft/ClimaX src/climax/regional_forecast/train.py: the LightningCLI construction (verbatim lines, in order)
import os
from climax.regional_forecast.datamodule import RegionalForecastDataModule
from climax.regional_forecast.module import RegionalForecastModule
from pytorch_lightning.cli import LightningCLI
    cli = LightningCLI(
        seed_everything_default=42,
        save_config_overwrite=True,
        run=False,
        parser_kwargs={"parser_mode": "omegaconf", "error_handler": None},
