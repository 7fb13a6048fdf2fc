"""python -m services.wallet"""

from shared.infra.boot import main

from .server import setup

main("wallet", setup)
