"""Test support shipped with prov: a real local server speaking the wire formats prov reads.

Used by prov's own tests and by the demo; nothing in the library imports it.
"""
