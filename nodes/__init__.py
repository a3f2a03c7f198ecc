"""sift.nodes."""
