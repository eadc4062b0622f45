"""Reaching the web: search providers, the SSRF-safe fetcher, readable text from pages."""
