"""Test doubles shipped beside the code: deterministic data and a YouTube double."""
