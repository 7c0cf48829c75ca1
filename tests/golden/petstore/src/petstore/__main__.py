"""`python -m petstore`: serve over stdio (or --transport http)."""

from .handshake import main

main()
