"""The version of burnumba (read by the package and by the tape-file format)."""
__version__ = "0.2.0"
