"""Pure functions and frozen values: no I/O, no clock, no model."""
