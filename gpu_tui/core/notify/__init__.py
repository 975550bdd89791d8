"""Notifications without I/O: which events the laptop sends, once per occurrence, and how each
service's URL becomes a request."""
