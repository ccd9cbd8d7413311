"""The domain's values and rules: frozen models, expected failures, input validation.

The bottom of the house: it imports nothing of the service (``models``, ``validation``).
"""
