"""sd_notify without libsystemd: one datagram to $NOTIFY_SOCKET (a no-op elsewhere)."""

from __future__ import annotations

import os
import socket


def sd_notify(state: str) -> bool:
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]  # abstract namespace
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(address)
            sock.sendall(state.encode())
        except OSError:
            return False
    return True
