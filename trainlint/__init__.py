"""trainlint: lint deep-learning training configs and predict their per-GPU memory."""

__version__ = "0.1.0"
