"""The command line: a thin skin over the method registry."""

import time

STARTED = time.monotonic()  # what a printed time counts from: the user waited from here
