"""Event webhooks: signed inbound endpoints whose deliveries start a turn delivered like a cron
run (``docs/webhooks.md``). ``verify`` checks a delivery; ``runs`` turns it into a run."""
