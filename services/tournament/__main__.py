"""python -m services.tournament"""

from shared.infra.boot import main

from .server import access_from_config, setup

main("tournament", setup, access_from_config)
