"""``python -m influencer_stats.testing.youtube_double [options]``: see :func:`~influencer_stats.testing.youtube_double.cli.main`."""

from influencer_stats.testing.youtube_double.cli import main

if __name__ == "__main__":
    main()
