"""The model layer: the clients (litellm's and the direct one), streaming, routing and
which model a person may choose, prompt caching, what a model's answer text holds."""
