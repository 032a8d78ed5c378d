"""Reports: the JSON contract and the views derived from it."""
