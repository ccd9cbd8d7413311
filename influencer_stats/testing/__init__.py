"""Test doubles shipped beside the code: a manual clock, a capturing event log, a scripted stats query.

The YouTube double is not here: it is ``youtube_double/`` at the repository's root.
"""
