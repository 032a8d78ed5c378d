"""Rating: criteria as data, evidence from audits and attestations, a
published scoring formula and tier rules (docs/rating.md)."""
