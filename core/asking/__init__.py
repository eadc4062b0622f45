"""Asking the person: clarify questions and confirmations, and closing them."""
