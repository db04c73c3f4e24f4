# excerpt of Javkonline/AMoPO src/llamafactory/extras/env.py @d8caba0: the version line, verbatim (line 29)
VERSION = "0.8.4.dev0"
