"""Parsing strangers' bytes (PDFs, web pages, HTML mail) in a limited child process."""
