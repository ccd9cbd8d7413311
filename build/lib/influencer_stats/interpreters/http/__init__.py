"""Server adapters for the HTTP edge (``influencer_stats.http``): one thin module per server."""
