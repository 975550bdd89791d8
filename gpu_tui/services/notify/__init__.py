"""Notifications: the laptop's sends (Apprise), the configured targets, and the sender shipped to
instances with the log rules it uses."""
