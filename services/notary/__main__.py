"""python -m services.notary"""

from shared.infra.boot import main

from .server import setup

main("notary", setup)
