"""Learning after a turn: side-model reviews that save memory and write or patch skills through
the same tools the agent uses (so this package sits above ``core.tools``)."""
