"""``python -m youtube_double [options]``: see :func:`~youtube_double.cli.main`."""

from youtube_double.cli import main

if __name__ == "__main__":
    main()
