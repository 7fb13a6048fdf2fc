"""A signed-in player's receipt for a hand they played (``GET
/api/tables/{id}/hands/{n}/receipt``): the table service's ``GetReceipt`` asked with the
player's own token, so its rule decides (a player dealt in; others 403, a running hand or
one no checkpoint covers yet 409, with when to ask again) and the receipt file (shared/tlog/receipt.py) comes back
as it is. The hand page's "verify this hand" button (static/receipt.js) fetches it, checks
its Merkle proofs in the page and offers it to download for `pokerctl receipt verify`."""

from __future__ import annotations

import grpc
from poker.table.v1 import table_pb2
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from shared.infra.retry import retrying

from .replies import HEADERS, Refused, refused
from .seats import table_id_of
from .sessions import Sessions


def receipt_route(stub, sessions: Sessions) -> Route:
    async def receipt(request: Request) -> Response:
        try:
            table_id = table_id_of(request)
            hand_no = request.path_params["hand_no"]
            session = await sessions.of(request)
            if session is None:
                raise Refused(401, "sign in first: a receipt is for a player who played the hand")
            reply = await retrying(stub.GetReceipt, table_pb2.ReceiptRequest(
                table_id=table_id, hand_no=hand_no), session.metadata)
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        return Response(reply.receipt, media_type="application/json", headers={
            **HEADERS, "Content-Disposition":
                f'attachment; filename="{table_id}-{hand_no}-receipt.json"'})

    return Route("/api/tables/{table_id}/hands/{hand_no:int}/receipt", receipt)
