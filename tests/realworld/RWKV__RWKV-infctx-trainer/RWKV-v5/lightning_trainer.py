# excerpt of RWKV/RWKV-infctx-trainer RWKV-v5/lightning_trainer.py @70d02c4: the LightningCLI construction, verbatim (lines 265-296)
from lightning.pytorch.cli import LightningCLI
from src.model import RWKV
from src.data import RWKVDataModule
from src.trainer import RWKVLightningTrainer

def cli_main():
    LightningCLI(
        RWKV, RWKVDataModule, 
        save_config_kwargs={"overwrite": True},
        trainer_class=RWKVLightningTrainer,

        # Overwrite several trainer default configs
        trainer_defaults={
            "accelerator": "gpu",
            "precision": "bf16-mixed",
            "strategy": "deepspeed_stage_2_offload",

            # num_sanity_val_steps is disabled, as they seem
            # to hang during initial sanity check for unknown reasons
            # for larger model sizes randomly on multi-gpus
            "num_sanity_val_steps": 0,

            # Disable default distributed sampler, 
            # so that we can control shuffle logic on our side instead
            "use_distributed_sampler": False
        },
        seed_everything_default=True,
        args=PYTORCH_CLI_ARGV
    )

if __name__ == "__main__":
    cli_main()
