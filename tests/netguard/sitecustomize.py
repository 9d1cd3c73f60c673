"""Loaded automatically by subprocesses whose PYTHONPATH includes this folder."""

import netguard  # noqa: F401  (installs the guard)
