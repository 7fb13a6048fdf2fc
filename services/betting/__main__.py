"""python -m services.betting"""

from shared.infra.boot import main

from .server import setup

main("betting", setup)
