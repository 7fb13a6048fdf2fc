"""python -m services.rake"""

from shared.infra.boot import main

from .server import setup

main("rake", setup)
