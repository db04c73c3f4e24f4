# excerpt of RWKV/RWKV-infctx-trainer RWKV-v5/src/trainer.py @70d02c4: the RWKVLightningTrainer class line and its extra __init__ arguments, verbatim (lines 1-31)
from lightning.pytorch import Trainer
from lightning.pytorch.strategies.deepspeed import DeepSpeedStrategy
import lightning as Lightning
import torch
import math
import wandb

global RWKV_JIT_ON, RWKV_TORCH_COMPILE, RWKV_NO_CUDA

# We extend the native pytorch lightning trainer to add the following
#
# - local "fabric" support, as the trainer object is one of the few
#   objects that is available to all the processess
# - target_batch_size, which automatically computes the accumulate_grad_batches
class RWKVLightningTrainer(Trainer):
    def __init__(
            self,
            *args, 
            # Replaces the accumulate_grad_batches, if set
            # automatically compute the accumulate_grad_batches
            #
            # According to the microbatch_size, num_nodes, 
            # and num_devices configured
            target_batch_size=-1,
            # Microbatch sizing, to be used with
            # each training step per GPU. 
            # 
            # This is the same as pytorch dataset batch size.
            microbatch_size=1,
            # Handle the rest of args, as per normal
            **kwargs,
