# excerpt of GAIR-NLP/LIMO train/src/llamafactory/extras/env.py @2284c6a: the version line, verbatim (line 29)
VERSION = "0.9.2.dev0"
