"""Tools around a program: ``bn.profile`` (tools/profile.py) and the generated list of
supported numpy (tools/supported.py)."""
