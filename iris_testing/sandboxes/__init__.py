"""Strict fakes of the Modal and Daytona SDKs and the sandbox fault grid, shared by the tests
and bench/."""
