"""`python -m petstore`: serve over stdio (or --transport http)."""

from .server import main

main()
