"""The YouTube base (``YouTubeVideoStatsSource``) and what it is built of: the ``videos.list`` wire
format over aiohttp (or httpx, the ``httpx_clients`` slice), the call gate (shared with the readers
of playlists and channels). The quota governor is the ``quota`` slice's (``interpreters/quota``):
these clients spend and count nothing themselves."""
