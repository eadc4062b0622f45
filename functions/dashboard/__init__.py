"""The web dashboard under ``/ui/``: server-rendered pages (Jinja2) and a little JavaScript.
``functions.app`` imports it on the first ``/ui`` request only, so the webhook ack path never
loads it."""
