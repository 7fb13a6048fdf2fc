"""python -m services.showdown"""

from shared.infra.boot import main

from .server import setup

main("showdown", setup)
