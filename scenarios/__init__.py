"""Scenario files, the four-stage MARK lifecycle runner, metrics and reports."""
