# excerpt of ashleve/lightning-hydra-template src/train.py @bddbc24: the top-level imports and the Hydra entry point, verbatim (lines 1,3,4,5,6,7,8,9,108,109)
from typing import Any, Dict, List, Optional, Tuple
import hydra
import lightning as L
import rootutils
import torch
from lightning import Callback, LightningDataModule, LightningModule, Trainer
from lightning.pytorch.loggers import Logger
from omegaconf import DictConfig
@hydra.main(version_base="1.3", config_path="../configs", config_name="train.yaml")
def main(cfg: DictConfig) -> Optional[float]:
