"""python -m services.dealer"""

from shared.infra.boot import main

from .server import setup

main("dealer", setup)
