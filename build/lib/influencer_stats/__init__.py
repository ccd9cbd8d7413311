"""influencer-stats: YouTube statistics for influencer-marketing collections."""
