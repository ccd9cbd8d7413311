"""The quota governor (the ``quota`` slice): the day's budget of YouTube units, its spender and
governor, and the ledgers that count what is spent (this process, the SQLite file
through restarts, or Redis for every worker)."""
