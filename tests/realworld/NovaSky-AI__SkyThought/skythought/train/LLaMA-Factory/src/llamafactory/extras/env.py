# excerpt of NovaSky-AI/SkyThought skythought/train/LLaMA-Factory/src/llamafactory/extras/env.py @0d190f1: the version line, verbatim (line 29)
VERSION = "0.9.2.dev0"
