# excerpt of microsoft/ClimaX src/climax/climate_projection/train.py: the LightningCLI construction (verbatim lines, in order)
import os
from pytorch_lightning.cli import LightningCLI
from climax.climate_projection.module import ClimateProjectionModule
from climax.climate_projection.datamodule import ClimateBenchDataModule
    cli = LightningCLI(
        seed_everything_default=42,
        save_config_overwrite=True,
        run=False,
        parser_kwargs={"parser_mode": "omegaconf", "error_handler": None},
