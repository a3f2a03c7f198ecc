"""sift.graphs."""
