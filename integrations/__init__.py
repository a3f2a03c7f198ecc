"""sift.integrations."""
