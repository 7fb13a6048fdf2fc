"""python -m services.table"""

from shared.infra.boot import main

from .server import setup

main("table", setup)
