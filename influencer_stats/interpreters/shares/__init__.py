"""Each client's share of the day's YouTube units (the ``shares`` slice), on ``limits``."""
