"""python -m services.table"""

from shared.infra.boot import main

from .server import access_from_env, setup

main("table", setup, access_from_env)
