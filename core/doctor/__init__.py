"""`iris doctor`: the checks of a deployment's configuration and features."""
