"""Reliability suites (issue 8): see docs/reliability.md."""
