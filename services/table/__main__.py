"""python -m services.table"""

from shared.infra.boot import main

from .server import access_from_config, setup

main("table", setup, access_from_config)
