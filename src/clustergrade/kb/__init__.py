"""The knowledge base: advisories, minimum versions, GPU models, XIDs, as data."""
