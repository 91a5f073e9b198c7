"""Transports: the JSON-RPC codec, the Unix-socket server and client, the MCP stdio server.

Each transport only frames bytes and manages connections; what a method does lives in the API
registry, so a method behaves identically whichever way it is reached.
"""
